// Package cmdgroup records the process groups of the commands a plugin runs (the exec
// builtin's), one small file per command in a folder beside the database, so that what is
// left of a group can be killed when its try ends, before the try is retried, after its plugin
// died and at the next start of wend, and so that a recycled pid is never killed.
//
// A record holds the group's id (its leader's pid) and the leader's start time. Before
// signalling, the group's live members are read again: a leader whose start time differs
// means the id names another group now, and nothing is signalled. How each OS reads start
// times and tells a leaderless group's members from strangers: procs_<os>.go.
//
// The file is written before the command's output is read (temporary file, fsync, rename,
// fsync of the folder) and removed only once its group is gone. Windows keeps no records: a
// command runs in a job object that ends its processes when closed (plugins/builtin).
package cmdgroup

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DirEnv names the variable through which the host tells a builtin plugin the records folder.
const DirEnv = "WEND_COMMAND_RECORDS"

// TokenEnv names the variable each command is started with, holding its record's token: its
// children inherit it, which tells them from strangers once the leader is gone (Linux).
const TokenEnv = "WEND_COMMAND_GROUP"

// OwnerEnv is the variable holding the plugin process's own token (the host's
// WEND_PLUGIN_GROUP): the host reaps the records of a plugin that has ended by it.
const OwnerEnv = "WEND_PLUGIN_GROUP"

// goneWait bounds how long a kill waits for the group's members to disappear.
const goneWait = 10 * time.Second

// Record is one command's process group.
type Record struct {
	Key   string `json:"key"`   // the try's activity execution id: every try of one activity shares it
	PGID  int    `json:"pgid"`  // the leader's pid, which is the group's id
	Start uint64 `json:"start"` // the leader's start time, in procStart's unit
	Boot  string `json:"boot"`  // the boot (and pid namespace) the ids belong to
	Owner string `json:"owner"` // OwnerEnv of the plugin that ran it
	Token string `json:"token"` // TokenEnv of the command

	file string // where it is kept; "" when not kept
}

// Dir is a records folder; a nil *Dir keeps nothing (commands are still killed with their try).
type Dir struct{ path string }

// At returns the records folder path, or nil when path is "".
func At(path string) *Dir {
	if path == "" {
		return nil
	}
	return &Dir{path: path}
}

// Path is the folder's path.
func (d *Dir) Path() string { return d.path }

// NewToken returns a fresh command token for TokenEnv.
func NewToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Track identifies the just-started group leader pid (not yet waited for, so its pid is not
// recycled) and keeps its record in d, durably. The caller kills the group if it fails.
func (d *Dir) Track(key, token string, pid int) (*Record, error) {
	start, err := procStart(pid)
	if err != nil {
		return nil, fmt.Errorf("read the start time of process %d: %w", pid, err)
	}
	r := &Record{Key: key, PGID: pid, Start: start, Boot: bootID(), Owner: os.Getenv(OwnerEnv), Token: token}
	if d == nil {
		return r, nil
	}
	if err := os.MkdirAll(d.path, 0o700); err != nil {
		return nil, err
	}
	r.file = filepath.Join(d.path, keyHash(key)+"-"+strconv.Itoa(pid)+".json")
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if err := writeSynced(r.file, b); err != nil {
		return nil, fmt.Errorf("record command group: %w", err)
	}
	return r, nil
}

// keyHash names a key's files: keys are caller-chosen text, file names are not.
func keyHash(key string) string {
	s := sha256.Sum256([]byte(key))
	return hex.EncodeToString(s[:12])
}

// writeSynced writes b to path through a temporary file, fsyncs it, renames it into place and
// fsyncs the folder, so the record survives a crash of the machine as well as of wend.
func writeSynced(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return syncDir(filepath.Dir(path))
}

// End kills what is left of r's group, waits until it is gone and removes the record. The
// record stays when the group cannot be killed, for a later reap.
func (r *Record) End() error {
	if _, err := kill(r); err != nil {
		return err
	}
	if r.file != "" {
		if err := os.Remove(r.file); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Report says what a reap did.
type Report struct {
	Killed  int // groups that still had processes, now killed
	Dropped int // records whose group was gone or whose id names another group now
	Corrupt int // unreadable records, removed
}

// ReapKey kills what earlier tries of the activity key left, so a retry never runs beside it.
func (d *Dir) ReapKey(key string) (Report, error) {
	if d == nil || key == "" {
		return Report{}, nil
	}
	prefix := keyHash(key) + "-"
	return d.reap(func(name string, r *Record) bool { return strings.HasPrefix(name, prefix) && r.Key == key }, false)
}

// ReapOwner kills what the plugin process whose OwnerEnv was owner left (it has ended).
func (d *Dir) ReapOwner(owner string) (Report, error) {
	if d == nil || owner == "" {
		return Report{}, nil
	}
	return d.reap(func(_ string, r *Record) bool { return r.Owner == owner }, false)
}

// ReapAll kills what every record names: call it only when no plugin using d runs (a wend
// starting on its database, after its previous plugins were reaped).
func (d *Dir) ReapAll() (Report, error) {
	if d == nil {
		return Report{}, nil
	}
	return d.reap(func(string, *Record) bool { return true }, true)
}

// reap kills the groups of the records match takes and removes their files; all (ReapAll)
// also removes unreadable records, which the other reaps cannot tell the owner of.
func (d *Dir) reap(match func(name string, r *Record) bool, all bool) (Report, error) {
	var rep Report
	ents, err := os.ReadDir(d.path)
	if errors.Is(err, os.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	var errs []error
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(d.path, name)
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // ended meanwhile
		}
		r := &Record{}
		if err != nil || json.Unmarshal(b, r) != nil || r.PGID <= 1 {
			if all {
				rep.Corrupt++
				_ = os.Remove(path)
			}
			continue
		}
		if !match(name, r) {
			continue
		}
		r.file = path
		n, err := kill(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if n > 0 {
			rep.Killed++
		} else {
			rep.Dropped++
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return rep, errors.Join(errs...)
}

// kill SIGKILLs what is left of r's group and waits until it is gone; it returns how many
// processes it found to kill, 0 when the group is gone or its id now names another group.
func kill(r *Record) (int, error) {
	if r.Boot != bootID() {
		return 0, nil // another boot or pid namespace: its ids mean nothing here
	}
	// Signal again until nothing is left: a member may fork between a scan and the kill.
	first := -1
	for deadline := time.Now().Add(goneWait); ; time.Sleep(20 * time.Millisecond) {
		n, err := signalGroup(r)
		if err != nil {
			return max(first, 0), err
		}
		if first < 0 {
			first = n
		}
		if n == 0 {
			return first, nil
		}
		if time.Now().After(deadline) {
			return first, fmt.Errorf("process group %d: %d process(es) still run %s after SIGKILL", r.PGID, n, goneWait)
		}
	}
}
