package plugins

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
// The registry exists on Linux only (registry_linux.go): elsewhere nothing tells a live plugin
// from a process that took its pid, and what it backs up is done otherwise (registry_other.go).
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
	// Commands counts the process groups of commands (the exec builtin's) a dead wend's
	// plugins left running, now killed; CorruptCommands the unreadable records dropped.
	Commands, CorruptCommands int
}

// Reaped is one killed leftover.
type Reaped struct {
	Plugin  string
	PID     int // process and process group id
	HostPID int // the dead host that started it
}

// groupEnv names the variable a plugin is started with, holding a random token its registry
// entry records. Children inherit it: when the plugin has died with its host (parent-death
// signal) but a child of its lives on in its process group, the token tells that child from an
// unrelated process in a group that reused the id.
const groupEnv = "WEND_PLUGIN_GROUP"

// groupToken is a fresh groupEnv value.
func groupToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
