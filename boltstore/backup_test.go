package boltstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// commitRuns commits runs id0..id(n-1) of prefix, each started and given events events of
// payload bytes each, and returns their ids.
func commitRuns(t testing.TB, s *Store, prefix string, n, events, payloadSize int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%s%d", prefix, i)
		u := storetest.Started("wf-"+id, id, t0)
		ups := []history.RunUpdate{u}
		if events > 0 {
			next := storetest.Next(u.Run, history.ActivityCompleted, events)
			for j := range next.Events {
				next.Events[j].Data = payload(payloadSize)
			}
			ups = append(ups, next)
		}
		for _, up := range ups {
			if err := s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{up}}); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, id)
	}
	return ids
}

// sameRuns fails unless got holds each of ids with the record and events src has.
func sameRuns(t *testing.T, src, got *Store, ids []string) {
	t.Helper()
	for _, id := range ids {
		want, err := src.Run(id)
		must(t, err)
		have, err := got.Run(id)
		if err != nil {
			t.Errorf("run %s: %v", id, err)
			continue
		}
		if !reflect.DeepEqual(want, have) {
			t.Errorf("run %s: record %+v, want %+v", id, have, want)
		}
		we, err := src.Events(id, 0)
		must(t, err)
		he, err := got.Events(id, 0)
		must(t, err)
		if !reflect.DeepEqual(we, he) {
			t.Errorf("run %s: %d events differ from the source's %d", id, len(he), len(we))
		}
	}
}

// checkClean fails unless s's Check finds nothing.
func checkClean(t *testing.T, s *Store) {
	t.Helper()
	ps, err := s.Check()
	if err != nil || len(ps) > 0 {
		t.Fatalf("check: %v %v", ps, err)
	}
}

// TestBackupUnderLoad: a backup taken while a goroutine commits runs opens without a log,
// checks clean, and holds every run acknowledged before it began, with identical events.
func TestBackupUnderLoad(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{{"log", Options{}}, {"no log", Options{NoLog: true}}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openAt(t, filepath.Join(dir, "wend.db"), tc.opts)
			commitRuns(t, s, "early", 20, 3, 500)
			var (
				mu    sync.Mutex
				acked []string
				stop  = make(chan struct{})
				done  = make(chan struct{})
			)
			go func() {
				defer close(done)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					id := fmt.Sprintf("load%d", i)
					if err := s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{storetest.Started("wf-"+id, id, t0)}}); err != nil {
						t.Errorf("commit %s: %v", id, err)
						return
					}
					mu.Lock()
					acked = append(acked, id)
					mu.Unlock()
				}
			}()
			commitRuns(t, s, "mid", 10, 2, 2000) // the writer is busy meanwhile
			mu.Lock()
			before := append([]string(nil), acked...)
			mu.Unlock()
			dst := filepath.Join(dir, "copy.db")
			n, err := SaveBackup(dst, false, func(w io.Writer) (int64, error) { return s.WriteBackup(w, nil) })
			close(stop)
			<-done
			must(t, err)
			if st, err := os.Stat(dst); err != nil || st.Size() != n {
				t.Fatalf("backup of %d bytes: %v %v", n, st, err)
			}
			if _, err := os.Stat(dst + ".tmp"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("temp file left: %v", err)
			}
			b := openAt(t, dst, Options{NoLog: true}) // opens as a closed database: no log needed
			checkClean(t, b)
			ids := append([]string{"early0", "early19", "mid0", "mid9"}, before...)
			sameRuns(t, s, b, ids)
			t.Logf("backup of %d bytes held %d runs committed under load", n, len(before))
		})
	}
}

// TestBackupTarget: an existing target is refused unless force, and a copy that is not a wend
// database leaves the target as it was and no temp file.
func TestBackupTarget(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, filepath.Join(dir, "wend.db"), Options{})
	commitRuns(t, s, "r", 3, 1, 10)
	dst := filepath.Join(dir, "copy.db")
	must(t, os.WriteFile(dst, []byte("old"), 0o600))
	write := func(w io.Writer) (int64, error) { return s.WriteBackup(w, nil) }
	if _, err := SaveBackup(dst, false, write); !errors.Is(err, ErrBackupExists) {
		t.Fatalf("backup over an existing file: %v, want ErrBackupExists", err)
	}
	garbage := func(w io.Writer) (int64, error) {
		n, err := w.Write(make([]byte, 64<<10))
		return int64(n), err
	}
	if _, err := SaveBackup(dst, true, garbage); err == nil {
		t.Fatal("a copy that is not a database was saved")
	}
	if b, _ := os.ReadFile(dst); string(b) != "old" {
		t.Errorf("failed backup changed the target: %q", b)
	}
	if _, err := os.Stat(dst + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temp file left: %v", err)
	}
	_, err := SaveBackup(dst, true, write)
	must(t, err)
	b := openAt(t, dst, Options{})
	sameRuns(t, s, b, []string{"r0", "r1", "r2"})
}

// TestBackupClosedStore: a closed store refuses, writing nothing.
func TestBackupClosedStore(t *testing.T) {
	s := openTemp(t)
	must(t, s.Close())
	if _, err := s.WriteBackup(io.Discard, nil); !errors.Is(err, history.ErrClosed) {
		t.Fatalf("backup of a closed store: %v", err)
	}
}
