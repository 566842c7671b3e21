//go:build unix

package cmdgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startGroup starts a shell as the leader of its own group, carrying token, that puts a
// background sleep in the group and writes its pid to a file; exitLeader makes the shell exit
// at once, leaving the sleep leaderless. It returns the shell and the sleep's pid.
func startGroup(t *testing.T, token string, exitLeader bool) (*exec.Cmd, int) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := `sleep 300 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"`
	if !exitLeader {
		script += "; wait"
	}
	cmd := exec.Command("/bin/sh", "-c", script, "sh", pidFile)
	cmd.Env = append(os.Environ(), TokenEnv+"="+token)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return cmd, pid
		}
		if time.Now().After(deadline) {
			t.Fatal("the group's sleep did not start within 20s")
		}
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	procs, err := listOne(pid)
	return err == nil && procs
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs", pid)
		}
	}
}

func TestReap(t *testing.T) {
	for _, tt := range []struct {
		name       string
		exitLeader bool // the shell exits, leaving its sleep leaderless
		reap       func(*Dir) (Report, error)
		edit       func(*Record) // what happened to the record meanwhile
		killed     bool
	}{
		{name: "a live leader's group", reap: (*Dir).ReapAll, killed: true},
		{name: "a leaderless group", exitLeader: true, reap: (*Dir).ReapAll, killed: true},
		{name: "by the try's key", reap: func(d *Dir) (Report, error) { return d.ReapKey("try-key") }, killed: true},
		{name: "another try's key", reap: func(d *Dir) (Report, error) { return d.ReapKey("other") }},
		{name: "by the plugin's token", reap: func(d *Dir) (Report, error) { return d.ReapOwner("plugin-a") }, killed: true},
		{name: "another plugin's token", reap: func(d *Dir) (Report, error) { return d.ReapOwner("plugin-b") }},
		// The pid now belongs to another process: its start time differs from the record's.
		{name: "a recycled leader pid", reap: (*Dir).ReapAll, edit: func(r *Record) { r.Start-- }},
		{name: "a record of another boot", reap: (*Dir).ReapAll, edit: func(r *Record) { r.Boot = "earlier" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(OwnerEnv, "plugin-a")
			d := At(t.TempDir())
			token := NewToken()
			leader, sleep := startGroup(t, token, tt.exitLeader)
			rec, err := d.Track("try-key", token, leader.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			if tt.exitLeader {
				_ = leader.Wait()
			}
			if tt.edit != nil {
				tt.edit(rec)
				rec.file = ""
				b, _ := jsonOf(rec)
				if err := os.WriteFile(filepath.Join(d.Path(), keyHash(rec.Key)+"-"+strconv.Itoa(rec.PGID)+".json"), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := tt.reap(d)
			if err != nil {
				t.Fatal(err)
			}
			files, _ := os.ReadDir(d.Path())
			if tt.killed {
				waitGone(t, sleep)
				if rep.Killed != 1 || len(files) != 0 {
					t.Errorf("report %+v, %d record(s) left; want 1 killed, none left", rep, len(files))
				}
				return
			}
			time.Sleep(200 * time.Millisecond)
			if !alive(sleep) {
				t.Fatalf("the sleep %d was killed (report %+v)", sleep, rep)
			}
			if rep.Killed != 0 {
				t.Errorf("report %+v, want nothing killed", rep)
			}
		})
	}
}

// TestEndKillsWhatTheTryLeft ends a try whose command exited leaving a background child.
func TestEndKillsWhatTheTryLeft(t *testing.T) {
	d := At(t.TempDir())
	token := NewToken()
	leader, sleep := startGroup(t, token, true)
	rec, err := d.Track("k", token, leader.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	_ = leader.Wait()
	if err := rec.End(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, sleep)
	if files, _ := os.ReadDir(d.Path()); len(files) != 0 {
		t.Errorf("%d record(s) left after End", len(files))
	}
}

// TestCorruptRecords: only ReapAll, run when no plugin writes, drops an unreadable record.
func TestCorruptRecords(t *testing.T) {
	d := At(t.TempDir())
	p := filepath.Join(d.Path(), "x-1.json")
	if err := os.WriteFile(p, []byte("{torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	if rep, err := d.ReapKey("k"); err != nil || rep != (Report{}) {
		t.Fatalf("ReapKey: %+v, %v", rep, err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("ReapKey removed another's record: %v", err)
	}
	if rep, err := d.ReapAll(); err != nil || rep.Corrupt != 1 {
		t.Fatalf("ReapAll: %+v, %v", rep, err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("ReapAll kept the unreadable record: %v", err)
	}
}
