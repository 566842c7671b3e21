package boltstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestScheduleStatesSurviveReopen: schedule records written are read back after a reopen,
// deletes remove them, and a flipped byte is an error naming the schedule, not other data.
func TestScheduleStatesSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	if got, err := s.ScheduleStates(); err != nil || len(got) != 0 {
		t.Fatalf("fresh database: %v, %v", got, err)
	}
	if err := s.PutScheduleStates(map[string][]byte{"a": []byte(`{"n":1}`), "b": []byte(`{"n":2}`)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.PutScheduleStates(map[string][]byte{"a": []byte(`{"n":3}`)}, []string{"b"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutScheduleStates(map[string][]byte{"": nil}, nil); err == nil || s.Err() != nil {
		t.Fatalf("an empty id: %v, store error %v (want refused, store usable)", err, s.Err())
	}
	s.Close()
	s = openAt(t, path, Options{})
	got, err := s.ScheduleStates()
	if err != nil || len(got) != 1 || string(got["a"]) != `{"n":3}` {
		t.Fatalf("after reopen: %q, %v", got, err)
	}
	// Flip a byte of the stored body behind the store's back.
	if err := s.db.Update(func(tx *bolt.Tx) error {
		v := append([]byte(nil), tx.Bucket(bucketSchedules).Get([]byte("a"))...)
		v[len(v)-2] ^= 0x01
		return tx.Bucket(bucketSchedules).Put([]byte("a"), v)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ScheduleStates(); !errors.Is(err, errFrame) {
		t.Fatalf("damaged record read as %v, want a checksum error", err)
	}
	s.Close()
}

// TestScheduleStatesWithTheLog: with the write-ahead log in front of bbolt (whose transaction
// is then committed only at checkpoints), schedule records are still written, read back and
// kept across a reopen.
func TestScheduleStatesWithTheLog(t *testing.T) {
	asGiven(t)
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	if s.log == nil {
		t.Fatal("the log is off: this test no longer covers it")
	}
	if err := s.PutScheduleStates(map[string][]byte{"a": []byte(`{"n":1}`)}, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openAt(t, path, Options{})
	if got, err := s.ScheduleStates(); err != nil || string(got["a"]) != `{"n":1}` {
		t.Fatalf("after reopen: %q, %v", got, err)
	}
}

// TestScheduleStatesSurviveACrashWithTheLog: schedule records do not go through the log, and
// recovery starts from the last checkpoint's state, so a record written after it would be lost
// with the process (crashtest TestScheduleFiresAcrossKills found a fire started twice); it is
// written with a checkpoint of its own. The crash is the files as a killed process leaves them.
func TestScheduleStatesSurviveACrashWithTheLog(t *testing.T) {
	asGiven(t)
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	commitRun(t, s, storetest.Started("wf", "r1", t0))
	if err := s.PutScheduleStates(map[string][]byte{"a": []byte(`{"n":1}`)}, nil); err != nil {
		t.Fatal(err)
	}
	commitRun(t, s, storetest.Next(history.Run{WorkflowID: "wf", RunID: "r1", LastSeq: 1}, history.TimerFired, 1))
	crashed := filepath.Join(t.TempDir(), "wend.db")
	copyFile(t, path, crashed)
	must(t, os.Mkdir(walDir(crashed), 0o700))
	ents, err := os.ReadDir(walDir(path))
	must(t, err)
	for _, e := range ents {
		copyFile(t, filepath.Join(walDir(path), e.Name()), filepath.Join(walDir(crashed), e.Name()))
	}
	c := openAt(t, crashed, Options{})
	if got, err := c.ScheduleStates(); err != nil || string(got["a"]) != `{"n":1}` {
		t.Fatalf("after a crash: %q, %v", got, err)
	}
	if r, err := c.Run("r1"); err != nil || r.LastSeq != 2 {
		t.Fatalf("after a crash: run %+v, %v; want it at seq 2", r, err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	must(t, err)
	must(t, os.WriteFile(to, b, 0o600))
}
