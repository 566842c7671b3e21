//go:build linux && !wend_portable

package plugins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// registryKept: this build records plugin processes in the registry.
const registryKept = true

// register records the runner's just-started process. The caller has not reaped it, so its
// pid cannot have been recycled. A failure is logged, not returned: the plugin still dies with
// the host in all but the rare cases the registry exists for.
func (r *procRunner) register() {
	if r.reg == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, err := identify(r.pid)
	if err != nil { // it already exited (a zombie has no exe): nothing to leave behind
		return
	}
	e.Plugin, e.Group = r.name, r.group
	if err := r.reg.update(func(*regEntry) bool { return true }, e); err != nil {
		r.warn(err)
		return
	}
	r.entry = e
}

// refresh records the executable again once the plugin serves: a command such as
// `env python3 plugin.py` or a shebang script execs again after start, and Reap matches the
// executable that runs, not the first one.
func (r *procRunner) refresh() {
	if r.reg == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entry == nil || r.exited() {
		return
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", r.pid))
	if err != nil || exe == r.entry.Exe {
		return
	}
	old := r.entry
	e := *old
	e.Exe = exe
	if err := r.reg.update(func(x *regEntry) bool { return !x.same(old) }, &e); err != nil {
		r.warn(err)
		return
	}
	r.entry = &e
}

// unregister drops the entry of the reaped process; the caller holds r.mu.
func (r *procRunner) unregister() {
	if r.reg == nil || r.entry == nil {
		return
	}
	old := r.entry
	r.entry = nil
	if err := r.reg.update(func(x *regEntry) bool { return !x.same(old) }, nil); err != nil {
		r.warn(err)
	}
}

// reapPlugins kills the plugin processes that dead hosts recorded in the registry at path and that
// still run, then rewrites the registry without them. Only a process whose pid, start time
// and executable all match its entry is signalled (SIGKILL to its process group); any other
// entry is dropped untouched. Entries of a live host are kept. A missing file is an empty
// registry. Call it only while owning the registry (the CLI: holding the database lock).
func reapPlugins(path string) (ReapReport, error) {
	var rep ReapReport
	reg := registryAt(path)
	if reg == nil {
		return rep, nil
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	raws, entries, err := reg.load()
	if err != nil {
		return rep, fmt.Errorf("reap plugins: read registry %s: %w (it lists plugin processes a killed wend left; remove it to go on without reaping)", path, err)
	}
	if len(raws) == 0 {
		return rep, nil
	}
	boot, ns := bootID(), pidNS()
	var keep []string
	for i, e := range entries {
		switch {
		case e == nil:
			rep.Corrupt++
		case e.Boot != boot || e.PIDNS != ns:
			rep.Skipped++
		case running(e.HostPID, e.HostStart):
			rep.Kept++
			keep = append(keep, raws[i])
		case killMatching(e), killLeftChildren(e) > 0:
			rep.Reaped = append(rep.Reaped, Reaped{Plugin: e.Plugin, PID: e.PID, HostPID: e.HostPID})
		default:
			rep.Skipped++
		}
	}
	if err := reg.store(keep); err != nil {
		return rep, fmt.Errorf("reap plugins: rewrite registry %s: %w", path, err)
	}
	return rep, nil
}

// killMatching SIGKILLs e's process group if e's process still runs as recorded, and reports
// whether it did. The pidfd pins the process checked, so the leader's signal cannot reach a
// process that took its pid meanwhile; the group's id stays reserved while the leader lives.
func killMatching(e *regEntry) bool {
	fd, err := unix.PidfdOpen(e.PID, 0)
	if errors.Is(err, unix.ESRCH) {
		return false
	}
	pinned := err == nil // else the kernel predates pidfds (5.3): plain kill after the check
	if pinned {
		defer unix.Close(fd)
	}
	cur, err := identify(e.PID)
	if err != nil || cur.Start != e.Start || !sameExe(cur.Exe, e.Exe) {
		return false
	}
	if pinned {
		err = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	} else {
		err = unix.Kill(e.PID, unix.SIGKILL)
	}
	if err != nil { // gone since the check, or not ours to signal
		return false
	}
	_ = unix.Kill(-e.PID, unix.SIGKILL) // the rest of its group: its children
	return true
}

// killLeftChildren SIGKILLs the processes of e's process group that carry e's token, which
// are left when the plugin itself is gone, and returns how many it killed. A child that left
// the group (setsid, setpgid) or dropped the variable from its environment escapes: the
// kernel keeps no other trace of whose child it was once its parent died.
func killLeftChildren(e *regEntry) int {
	if e.Group == "" {
		return 0 // recorded by a wend that set no token: only the leader's match is safe
	}
	want := []byte(groupEnv + "=" + e.Group)
	dirs, _ := os.ReadDir("/proc")
	n := 0
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == e.PID {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue // gone, or a kernel without pidfds: only a pinned process is signalled
		}
		if pgid, err := unix.Getpgid(pid); err == nil && pgid == e.PID && carries(pid, want) {
			if unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil {
				n++
			}
		}
		unix.Close(fd)
	}
	return n
}

// carries reports whether pid's environment holds the exact entry kv.
func carries(pid int, kv []byte) bool {
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return false
	}
	for _, v := range bytes.Split(env, []byte{0}) {
		if bytes.Equal(v, kv) {
			return true
		}
	}
	return false
}

// sameExe compares executables; a binary deleted or replaced since start reads "PATH (deleted)".
func sameExe(cur, recorded string) bool {
	return cur != "" && (cur == recorded || cur == recorded+" (deleted)")
}

// running reports whether pid is alive and started at start (not a recycled pid, not a zombie).
func running(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	st, state, err := procStart(pid)
	return err == nil && st == start && state != "Z" && state != "X"
}

// identify returns the registry entry for pid as this host's child now.
func identify(pid int) (*regEntry, error) {
	start, state, err := procStart(pid)
	if err != nil {
		return nil, err
	}
	if state == "Z" || state == "X" {
		return nil, fmt.Errorf("process %d exited", pid)
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return nil, err
	}
	host := self()
	return &regEntry{PID: pid, Start: start, Exe: exe, HostPID: host.pid, HostStart: host.start, Boot: bootID(), PIDNS: pidNS()}, nil
}

// procStart returns pid's start time (clock ticks since boot) and state letter.
func procStart(pid int) (uint64, string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", err
	}
	// pid (comm) state ...: comm may hold spaces and parentheses, so split after the last ')';
	// field 3 (state) is then at index 0 and field 22 (starttime) at index 19.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 20 {
		return 0, "", fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields)+2)
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	return start, fields[0], err
}

var self = sync.OnceValue(func() (s struct {
	pid   int
	start uint64
}) {
	s.pid = os.Getpid()
	s.start, _, _ = procStart(s.pid)
	return s
})

var bootID = sync.OnceValue(func() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
})

var pidNS = sync.OnceValue(func() string {
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return ns
})

func (e *regEntry) same(o *regEntry) bool {
	return e.PID == o.PID && e.Start == o.Start && e.HostPID == o.HostPID && e.HostStart == o.HostStart
}

// update rewrites the registry: keep decides for each parsed entry; unparseable lines are
// kept verbatim (only Reap drops them, and says so); add, if not nil, is appended.
func (r *registry) update(keep func(*regEntry) bool, add *regEntry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	raws, entries, err := r.load()
	if err != nil {
		return err
	}
	out := raws[:0]
	for i, e := range entries {
		if e == nil || keep(e) {
			out = append(out, raws[i])
		}
	}
	if add != nil {
		b, err := json.Marshal(add)
		if err != nil {
			return err
		}
		out = append(out, string(b))
	}
	return r.store(out)
}

func (r *procRunner) warn(err error) {
	if r.log != nil {
		r.log(r.name, fmt.Sprintf("wend: plugin registry %s: %v (a later wend may not be able to reap this plugin if this one is killed)", r.reg.path, err))
	}
}
