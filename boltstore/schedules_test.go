package boltstore

import (
	"errors"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
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

// TestScheduleStatesWithTheLog: with the write-ahead log in front of bbolt (whose commits are
// then unsynced), schedule records are still written, read back and kept across a reopen.
func TestScheduleStatesWithTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{Log: true})
	if !s.db.NoSync {
		t.Fatal("the log is on but bbolt syncs its commits: this test no longer covers the unsynced case")
	}
	if err := s.PutScheduleStates(map[string][]byte{"a": []byte(`{"n":1}`)}, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openAt(t, path, Options{Log: true})
	if got, err := s.ScheduleStates(); err != nil || string(got["a"]) != `{"n":1}` {
		t.Fatalf("after reopen: %q, %v", got, err)
	}
}
