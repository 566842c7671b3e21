package boltstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
)

// Two derived buckets serve the reads that must not scan every run (docs/design.md, "Reads
// and the writer"): the run counts a metrics scrape reads, and the runs in start order a list
// page reads a slice of. Both are written by apply in the same transaction as the run records
// that change them, and by deleteRun with a purge, so the log's replay after a crash rebuilds
// them with the records. A database written before they existed gets them at its first Open
// for writing, from a scan of the records in the transaction that adds them (buildReadIndexes).
//
//	counts    uvarint(len(name)) | name | status -> frame of uvarint(runs): the runs of workflow
//	          name in status; a count of zero is no key
//	started   ^sortable(started_at ns) | ^run id | 0xff -> frame of nothing: every run, newest
//	          first (started_at, then run id, both descending: the order of GET /v1/runs)
var (
	bucketCounts  = []byte("counts")
	bucketStarted = []byte("started")
)

// countKey is the counts key of runs of workflow name in status.
func countKey(name, status string) []byte {
	k := binary.AppendUvarint(nil, uint64(len(name)))
	k = append(k, name...)
	return append(k, status...)
}

// splitCountKey reverses countKey.
func splitCountKey(k []byte) (name, status string, ok bool) {
	head, rest, ok := splitUvarintPrefix(k)
	if !ok {
		return "", "", false
	}
	return string(head), string(rest), true
}

// startedNanos is t as nanoseconds, clamped where UnixNano is undefined, so keys keep the
// order of the times.
func startedNanos(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// startedKey is the started index key of run id started at t: keys ascend as (t, id) descend.
// The id's bytes are inverted and closed by 0xff, so a longer id sorts before its own prefix,
// as it does in descending string order.
func startedKey(t time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 9+len(id)), ^(uint64(startedNanos(t)) ^ 1<<63))
	for i := 0; i < len(id); i++ {
		k = append(k, ^id[i])
	}
	return append(k, 0xff)
}

// splitStartedKey reverses startedKey.
func splitStartedKey(k []byte) (t time.Time, id string, ok bool) {
	if len(k) < 10 || k[len(k)-1] != 0xff {
		return time.Time{}, "", false
	}
	n := int64(^binary.BigEndian.Uint64(k) ^ 1<<63)
	b := make([]byte, len(k)-9)
	for i := range b {
		b[i] = ^k[8+i]
	}
	return time.Unix(0, n).UTC(), string(b), true
}

// recordKeys is what the derived buckets need of a stored run record.
type recordKeys struct {
	Name      string    `json:"name"`
	Status    string    `json:"status"`
	StartedAt time.Time `json:"started_at"`
}

// storedKeys reads recordKeys from a stored record; false when it does not decode (a damaged
// record's old entries are then left to wend check).
func storedKeys(id, v []byte) (recordKeys, bool) {
	var k recordKeys
	body, err := unframe(id, v)
	if err != nil {
		return k, false
	}
	return k, json.Unmarshal(body, &k) == nil
}

// recount moves the derived buckets of run id from its stored record old (nil: a new run) to
// its new record rec. It is called only when the record changes. Both are read from the
// records themselves: a commit replayed from the log has no history.Run beside its record.
func recount(tx *bolt.Tx, old, id, rec []byte) error {
	counts, started := tx.Bucket(bucketCounts), tx.Bucket(bucketStarted)
	if counts == nil || started == nil {
		return nil // a database opened for reading before its first Open for writing
	}
	r, ok := storedKeys(id, rec)
	if !ok {
		return fmt.Errorf("run counts: the new record does not decode")
	}
	nk := startedKey(r.StartedAt, string(id))
	if old != nil {
		if prev, ok := storedKeys(id, old); ok {
			if prev.Name == r.Name && prev.Status == r.Status && prev.StartedAt.Equal(r.StartedAt) {
				return nil
			}
			if err := addCount(counts, prev.Name, prev.Status, -1); err != nil {
				return err
			}
			if pk := startedKey(prev.StartedAt, string(id)); !bytes.Equal(pk, nk) {
				if err := started.Delete(pk); err != nil {
					return fmt.Errorf("started index: %w", err)
				}
			}
		}
	}
	if err := addCount(counts, r.Name, r.Status, 1); err != nil {
		return err
	}
	if err := started.Put(nk, indexEntry(nk)); err != nil {
		return fmt.Errorf("started index: %w", err)
	}
	return nil
}

// uncount takes a purged run out of the derived buckets.
func uncount(tx *bolt.Tx, r history.Run) error {
	counts, started := tx.Bucket(bucketCounts), tx.Bucket(bucketStarted)
	if counts == nil || started == nil {
		return nil
	}
	if err := addCount(counts, r.Name, r.Status, -1); err != nil {
		return err
	}
	if err := started.Delete(startedKey(r.StartedAt, r.RunID)); err != nil {
		return fmt.Errorf("started index: %w", err)
	}
	return nil
}

// addCount adds delta to the count of runs of name in status. A damaged count is left as it
// is (wend check reports it against the records), never guessed at.
func addCount(counts *bolt.Bucket, name, status string, delta int64) error {
	k := countKey(name, status)
	var n uint64
	if v := counts.Get(k); v != nil {
		var err error
		if n, err = readCount(k, v); err != nil {
			return nil
		}
	}
	switch m := int64(n) + delta; {
	case m <= 0:
		if err := counts.Delete(k); err != nil {
			return fmt.Errorf("run counts: %w", err)
		}
	default:
		if err := counts.Put(k, frame(k, binary.AppendUvarint(nil, uint64(m)))); err != nil {
			return fmt.Errorf("run counts: %w", err)
		}
	}
	return nil
}

// readCount verifies a count's value and returns it.
func readCount(k, v []byte) (uint64, error) {
	body, err := unframe(k, v)
	if err != nil {
		return 0, err
	}
	n, w := binary.Uvarint(body)
	if w <= 0 || w != len(body) {
		return 0, fmt.Errorf("%w (a run count holds %x)", errFrame, v)
	}
	return n, nil
}

// buildReadIndexes adds the derived buckets to a database that lacks them, filled from every
// run record, in tx. It runs at Open for writing, before the log's replay, whose records then
// maintain them as any commit does.
func buildReadIndexes(tx *bolt.Tx) error {
	if tx.Bucket(bucketCounts) != nil && tx.Bucket(bucketStarted) != nil {
		return nil
	}
	return rebuildReadIndexes(tx)
}

// rebuildReadIndexes makes the derived buckets again from every run record, in tx.
func rebuildReadIndexes(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketCounts, bucketStarted} {
		if tx.Bucket(name) != nil {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		if _, err := tx.CreateBucket(name); err != nil {
			return err
		}
	}
	counts, started := tx.Bucket(bucketCounts), tx.Bucket(bucketStarted)
	tally := map[string]int64{}
	err := forEach(tx.Bucket(bucketRuns), func(k, v []byte) error {
		r, ok := storedKeys(k, v)
		if !ok {
			return nil // a damaged record: wend check names it
		}
		tally[string(countKey(r.Name, r.Status))]++
		sk := startedKey(r.StartedAt, string(k))
		return started.Put(sk, indexEntry(sk))
	})
	if err != nil {
		return fmt.Errorf("build the started index: %w", err)
	}
	for k, n := range tally {
		if err := counts.Put([]byte(k), frame([]byte(k), binary.AppendUvarint(nil, uint64(n)))); err != nil {
			return fmt.Errorf("build the run counts: %w", err)
		}
	}
	return nil
}

// repairReadIndexes compares the run counts and the started index with the run records, as
// Check does (in one read of the checkpoint, which the writer does not wait for), and when
// they differ makes both again from the records, in one bbolt transaction of its own (begun
// as a purge batch's, so the log's replay after a crash goes on from it). It returns what it
// found wrong, with what was done, nothing when they agreed. RepairIndexes calls it.
func (s *Store) repairReadIndexes() ([]string, error) {
	if s.readOnly {
		return nil, fmt.Errorf("repair the run counts: %w", ErrReadOnly)
	}
	if err := s.settle(); err != nil {
		return nil, fmt.Errorf("repair the run counts: %w", err)
	}
	problems, damaged := s.diffReadIndexes()
	if len(problems) == 0 || damaged {
		return nil, nil // with a damaged record, a rebuild would drop what it counted
	}
	tx, err := s.beginOwnWrite("repair the run counts")
	if err != nil {
		return nil, err
	}
	if err := guard(func() error { return rebuildReadIndexes(tx) }); err != nil {
		_ = guard(tx.Rollback)
		return nil, fmt.Errorf("repair the run counts: %w", err)
	}
	if err := s.commitTx(tx); err != nil {
		s.setFatal(err)
		return nil, fmt.Errorf("repair the run counts: %w", s.Err())
	}
	testHookSync()
	s.boltTxs.Add(1)
	for i, p := range problems {
		problems[i] = strings.TrimSuffix(p, repairHint) + ": rebuilt from the run records"
	}
	return problems, nil
}

// hasReadIndexes reports whether db has both derived buckets.
func hasReadIndexes(db *bolt.DB) bool {
	has := false
	_ = db.View(func(tx *bolt.Tx) error {
		has = tx.Bucket(bucketCounts) != nil && tx.Bucket(bucketStarted) != nil
		return nil
	})
	return has
}

// RunCounts returns how many runs each workflow name has in each status, read from the counts
// kept at commit: one short read of a few keys, whatever the number of runs. A database
// opened for reading that has no counts yet (never opened for writing since they exist) is
// counted from its records, in slices.
func (s *Store) RunCounts() (map[string]map[string]int, error) {
	out := map[string]map[string]int{}
	add := func(name, status string, n int) {
		if out[name] == nil {
			out[name] = map[string]int{}
		}
		out[name][status] += n
	}
	indexed := false
	err := s.view("count runs", func(tx *bolt.Tx) error {
		counts := tx.Bucket(bucketCounts)
		if counts == nil {
			return nil
		}
		indexed = true
		return forEach(counts, func(k, v []byte) error {
			name, status, ok := splitCountKey(k)
			n, err := readCount(k, v)
			if !ok || err != nil {
				return fmt.Errorf("run count %x is damaged; run wend check", k)
			}
			add(name, status, int(n))
			return nil
		})
	})
	if err != nil || indexed {
		return out, err
	}
	err = s.scanRuns(func(r history.Run) { add(r.Name, r.Status, 1) })
	return out, err
}

// RunsNewest reads, in one short read, the runs after the position (afterT, afterID) in
// newest-first order (afterID "": from the newest), examining at most max of them: keep
// selects the ones returned, and the read stops once want are kept. last is the position of
// the last run examined, from which the next read goes on; end says no run follows it.
// ok is false when the database has no started index (opened for reading before its first
// Open for writing since the index exists): the caller lists by Runs.
func (s *Store) RunsNewest(afterT time.Time, afterID string, max, want int, keep func(history.Run) bool) (runs []history.Run, lastT time.Time, lastID string, end, ok bool, err error) {
	lastT, lastID = afterT, afterID
	err = s.view("list runs", func(tx *bolt.Tx) error {
		started := tx.Bucket(bucketStarted)
		if started == nil {
			return nil
		}
		ok = true
		recs := tx.Bucket(bucketRuns)
		c := started.Cursor()
		var k []byte
		if afterID == "" {
			k, _ = c.Seek(nil)
		} else {
			from := startedKey(afterT, afterID)
			if k, _ = c.Seek(from); bytes.Equal(k, from) {
				k, _ = c.Next()
			}
		}
		for n := 0; ; k, _ = c.Next() {
			if k == nil {
				end = true
				return nil
			}
			if n == max || len(runs) == want {
				return nil
			}
			n++
			t, id, good := splitStartedKey(k)
			if !good {
				return fmt.Errorf("started index: malformed key %x; run wend check", k)
			}
			lastT, lastID = t, id
			v := recs.Get([]byte(id))
			if v == nil {
				continue // an entry without its run: wend check reports it
			}
			r, err := decodeRun(tx, []byte(id), v)
			if err != nil {
				return fmt.Errorf("%w; run wend check", err)
			}
			if keep(r) {
				runs = append(runs, r)
			}
		}
	})
	return runs, lastT, lastID, end, ok, err
}

// repairHint ends each problem checkReadIndexes reports.
const repairHint = " (wend repair rebuilds it)"

// checkReadIndexes compares the run counts and the started index with the run records, both
// ways, in one read: read in slices, a commit between two of them would show a difference
// that is not there. Check has checkpointed, so a running store's is a bbolt read
// transaction of that checkpoint, which never holds the writer (a commit that must grow the
// mmap would wait for it, as for Check's page walk); a store opened for reading has no writer,
// and reads its replayed log too.
func (s *Store) checkReadIndexes() []string {
	out, _ := s.diffReadIndexes()
	return out
}

// diffReadIndexes is checkReadIndexes; damaged is true when a run record does not decode.
// Then what it adds to the counts is unknown, so they are not compared, and the started
// entries of damaged records are left alone: Check names the record, and no repair guesses.
func (s *Store) diffReadIndexes() (out []string, damaged bool) {
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	read := s.view
	if !s.readOnly {
		read = func(op string, fn func(tx *bolt.Tx) error) error {
			if err := guard(func() error { return s.db.View(fn) }); err != nil {
				return fmt.Errorf("%s: %w", op, err)
			}
			return nil
		}
	}
	err := read("check database", func(tx *bolt.Tx) error {
		counts, started := tx.Bucket(bucketCounts), tx.Bucket(bucketStarted)
		if counts == nil || started == nil {
			return nil // made at the next Open for writing
		}
		want := map[string]map[string]int{}
		keys := map[string]bool{}
		bad := map[string]bool{}
		err := forEach(tx.Bucket(bucketRuns), func(k, v []byte) error {
			r, ok := storedKeys(k, v)
			if !ok {
				bad[string(k)] = true // the record check names it
				return nil
			}
			if want[r.Name] == nil {
				want[r.Name] = map[string]int{}
			}
			want[r.Name][r.Status]++
			keys[string(startedKey(r.StartedAt, string(k)))] = true
			return nil
		})
		if err != nil {
			return err
		}
		got := map[string]map[string]int{}
		err = forEach(counts, func(k, v []byte) error {
			name, status, ok := splitCountKey(k)
			n, err := readCount(k, v)
			if !ok || err != nil {
				add("run counts: count %x is damaged"+repairHint, k)
				return nil
			}
			if got[name] == nil {
				got[name] = map[string]int{}
			}
			got[name][status] = int(n)
			return nil
		})
		if err != nil {
			return err
		}
		damaged = len(bad) > 0
		for name, byStatus := range want {
			if damaged {
				break
			}
			for st, n := range byStatus {
				if got[name][st] != n {
					add("run counts: workflow %q, status %s: counts %d run(s), %d stored"+repairHint, name, st, got[name][st], n)
				}
			}
		}
		for name, byStatus := range got {
			if damaged {
				break
			}
			for st, n := range byStatus {
				if _, ok := want[name][st]; !ok {
					add("run counts: workflow %q, status %s: counts %d run(s), none stored"+repairHint, name, st, n)
				}
			}
		}
		err = forEach(started, func(k, v []byte) error {
			_, id, ok := splitStartedKey(k)
			switch {
			case !ok || readIndexEntry(k, v) != nil:
				add("started index: entry %x is damaged"+repairHint, k)
			case !keys[string(k)] && !bad[id]:
				add("started index: entry for run %q matches no run record"+repairHint, id)
			}
			delete(keys, string(k))
			return nil
		})
		for k := range keys {
			_, id, _ := splitStartedKey([]byte(k))
			add("started index: run %q is missing"+repairHint, id)
		}
		return err
	})
	if err != nil {
		add("%v", err)
	}
	slices.Sort(out)
	return out, damaged
}
