package plugins

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The registry is the last line of defence against orphans (docs/reliability.md P8). A
// plugin already dies with its host through its parent-death signal and the SDK's parent watchdog, but a
// plugin can defeat both (a wrapper that clears PR_SET_PDEATHSIG, an SDK-less plugin). So the
// host records every plugin process it starts in a small file, and the next host to own the
// same database kills what a dead predecessor left, but only a process whose identity still
// matches the record: pid, start time (clock ticks since boot), executable, boot and pid
// namespace. A recycled pid is never signalled (go-plugin PR #320 killed unrelated processes
// on reattach).
//
// The file holds one JSON object per line. Writes replace it (temporary file + rename) and
// are not fsynced: the registry covers the host process dying, which loses no
// finished write (the page cache outlives the process); a kernel crash or power loss ends every
// plugin too, and entries from an earlier boot are dropped unsignalled, so losing the last
// writes then costs nothing.
//
// One process owns a registry at a time (the CLI keeps it beside the database, whose lock it
// holds); within the process every Host using the path shares one mutex.

// regEntry records one plugin process.
type regEntry struct {
	Plugin    string `json:"plugin"`
	PID       int    `json:"pid"`   // also its process group id
	Start     uint64 `json:"start"` // /proc/PID/stat field 22
	Exe       string `json:"exe"`   // readlink /proc/PID/exe
	HostPID   int    `json:"host_pid"`
	HostStart uint64 `json:"host_start"`
	Boot      string `json:"boot"`   // /proc/sys/kernel/random/boot_id
	PIDNS     string `json:"pid_ns"` // readlink /proc/self/ns/pid: pids mean nothing elsewhere
	// Group is the groupEnv value the plugin was started with; its children inherit it, which
	// tells them from strangers once the plugin itself is gone.
	Group string `json:"group,omitempty"`
}

func (e *regEntry) same(o *regEntry) bool {
	return e.PID == o.PID && e.Start == o.Start && e.HostPID == o.HostPID && e.HostStart == o.HostStart
}

// registry serialises this process's writers of one registry file.
type registry struct {
	path string
	mu   sync.Mutex
}

var registries sync.Map // cleaned absolute path -> *registry

// registryAt returns the registry for path; nil when path is empty (no registry).
func registryAt(path string) *registry {
	if path == "" {
		return nil
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	r, _ := registries.LoadOrStore(path, &registry{path: path})
	return r.(*registry)
}

// load returns the file's lines, parsed where possible (nil entry: unparseable). A missing
// file is an empty registry.
func (r *registry) load() (raws []string, entries []*regEntry, err error) {
	b, err := os.ReadFile(r.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		e := &regEntry{}
		if err := json.Unmarshal([]byte(line), e); err != nil || e.PID <= 0 {
			e = nil
		}
		raws, entries = append(raws, line), append(entries, e)
	}
	return raws, entries, sc.Err()
}

// store replaces the file with lines, or removes it when there are none.
func (r *registry) store(lines []string) error {
	if len(lines) == 0 {
		if err := os.Remove(r.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(r.path), filepath.Base(r.path)+".tmp*")
	if err != nil {
		return err
	}
	_, err = f.WriteString(strings.Join(lines, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), r.path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
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

func (r *procRunner) warn(err error) {
	if r.log != nil {
		r.log(r.name, fmt.Sprintf("wend: plugin registry %s: %v (a later wend may not be able to reap this plugin if this one is killed)", r.reg.path, err))
	}
}

// ReapReport says what Reap did.
type ReapReport struct {
	// Reaped lists the processes whose groups were killed.
	Reaped []Reaped
	// Skipped counts entries dropped without signalling anything: the process is gone, or its
	// pid now belongs to another process (start time or executable differ), or the entry comes
	// from an earlier boot or another pid namespace.
	Skipped int
	// Kept counts entries of a host that still runs (this process included), left in place.
	Kept int
	// Corrupt counts lines that could not be parsed; they were dropped.
	Corrupt int
}

// Reaped is one killed leftover.
type Reaped struct {
	Plugin  string
	PID     int // process and process group id
	HostPID int // the dead host that started it
}

// Reap kills the plugin processes that dead hosts recorded in the registry at path and that
// still run, then rewrites the registry without them. Only a process whose pid, start time
// and executable all match its entry is signalled (SIGKILL to its process group); any other
// entry is dropped untouched. Entries of a live host are kept. A missing file is an empty
// registry. Call it only while owning the registry (the CLI: holding the database lock).
func Reap(path string) (ReapReport, error) {
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

// groupEnv names the variable a plugin is started with, holding a random token its registry
// entry records. Children inherit it: when the plugin has died with its host (parent-death
// signal) but a child of its lives on in its process group, the token tells that child from an
// unrelated process in a group that reused the id (issue 12 item 14).
const groupEnv = "WEND_PLUGIN_GROUP"

// groupToken is a fresh groupEnv value.
func groupToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
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
