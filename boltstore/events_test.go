package boltstore

import (
	"bytes"
	"context"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// eventsOf is a test's handle on where run id's events are stored: the bucket, and the stored
// key of the event of seq.
func eventsOf(t *testing.T, tx *bolt.Tx, id string) (*bolt.Bucket, func(seq uint64) []byte) {
	t.Helper()
	re, err := findEvents(tx, []byte(id))
	must(t, err)
	if re.b == nil || !re.own && re.prefix == nil {
		t.Fatalf("run %s has no events", id)
	}
	return re.b, func(seq uint64) []byte { return sharedEventKey(re.prefix, seqKey(seq)) }
}

// A flip of any one bit of a slot makes bytes of no slot, and slots sort as their numbers.
func TestSlotsCatchEveryFlippedBit(t *testing.T) {
	prev := []byte(nil)
	for _, n := range []uint64{1, 2, 255, 256, 1 << 20, 1<<56 - 1} {
		s := slotOf(n)
		if !validSlot(s) {
			t.Fatalf("slot %d: %x is not valid", n, s)
		}
		if prev != nil && bytes.Compare(prev, s) >= 0 {
			t.Fatalf("slot %d sorts before the one of a smaller number", n)
		}
		prev = s
		for bit := range 64 {
			f := bytes.Clone(s)
			f[bit/8] ^= 1 << (bit % 8)
			if validSlot(f) {
				t.Fatalf("slot %d with bit %d flipped, %x, is valid", n, bit, f)
			}
		}
	}
	if validSlot(slotOf(0)) {
		t.Fatal("slot 0 is valid")
	}
}

// The shared bucket's key decoder never panics, and what it accepts is a slot and a seq key.
func FuzzSplitSharedKey(f *testing.F) {
	f.Add(sharedEventKey(slotOf(1), seqKey(1)))
	f.Add(sharedEventKey(slotOf(7), seqKey(1<<40)))
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff}, 16))
	f.Fuzz(func(t *testing.T, k []byte) {
		slot, seq, ok := splitSharedKey(k)
		if !ok {
			return
		}
		if !validSlot(slot) || len(seq) != 8 || !bytes.Equal(sharedEventKey(slot, seq), k) {
			t.Fatalf("key %x split into slot %x and seq %x", k, slot, seq)
		}
	})
}

// The slot entries' decoder never panics, and accepts only the frame of a valid slot under
// its run's id.
func FuzzReadSlot(f *testing.F) {
	f.Add([]byte("run-1"), frame([]byte("run-1"), slotOf(3)))
	f.Add([]byte("run-1"), frame([]byte("run-2"), slotOf(3)))
	f.Add([]byte("r"), []byte{1, 0, 0, 0})
	f.Add([]byte(""), []byte{})
	f.Fuzz(func(t *testing.T, id, v []byte) {
		slot, err := readSlot(id, v)
		if err != nil {
			return
		}
		if !validSlot(slot) || !bytes.Equal(frame(id, slot), v) {
			t.Fatalf("value %x under %q read as slot %x", v, id, slot)
		}
	})
}

// A run whose events pass ownBucketBytes moves them to a bucket of its own in the commit that
// passes it; the runs beside it in the shared bucket, appended to in the same transaction,
// read as before.
func TestRunMovesToItsOwnBucket(t *testing.T) {
	s := openTemp(t)
	big := bytes.Repeat([]byte("a"), 1500)
	runs := map[string]history.Run{}
	for _, id := range []string{"a", "b", "c"} {
		u := storetest.Started("wf", id, t0)
		commitRun(t, s, u)
		runs[id] = u.Run
	}
	grow := func(id string, size int) history.RunUpdate {
		u := storetest.Next(runs[id], history.ActivityCompleted, 1)
		u.Events[0].Data = []byte(`"` + string(big[:size]) + `"`)
		runs[id] = u.Run
		return u
	}
	for range 4 { // b near ownBucketBytes, over leaves of its own in the shared bucket
		commitRun(t, s, grow("b", 1500))
	}
	commitRun(t, s, grow("c", 10))
	must(t, s.settle()) // split into pages in the file: a transaction's new nodes split only at its commit
	must(t, s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{grow("b", 1500), grow("a", 10)}}))
	must(t, s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{grow("a", 10), grow("c", 10)}}))
	for id, want := range runs {
		r, err := s.Run(id)
		must(t, err)
		evs, err := s.Events(id, 0)
		must(t, err)
		if r.LastSeq != want.LastSeq || len(evs) != int(want.LastSeq) {
			t.Errorf("run %s: last seq %d, %d events; want %d", id, r.LastSeq, len(evs), want.LastSeq)
		}
	}
	must(t, s.view("layout", func(tx *bolt.Tx) error {
		for id, own := range map[string]bool{"a": false, "b": true, "c": false} {
			re, err := findEvents(tx, []byte(id))
			must(t, err)
			if re.own != own {
				t.Errorf("run %s: in a bucket of its own %v, want %v", id, re.own, own)
			}
		}
		return nil
	}))
	if ps, err := s.Check(); err != nil || len(ps) > 0 {
		t.Fatalf("check: %q %v", ps, err)
	}
}

// A run's last event is found in the transaction that emptied the leaves after its own (a
// run moved out or purged): bbolt's Prev from the key after them finds nothing there.
func TestLastAfterEmptiedLeaves(t *testing.T) {
	db, err := bolt.Open(t.TempDir()+"/raw.db", 0o600, nil)
	must(t, err)
	defer db.Close()
	big := bytes.Repeat([]byte("v"), 1500)
	must(t, db.Update(func(tx *bolt.Tx) error {
		sb, err := tx.CreateBucket(bucketRunEvents)
		must(t, err)
		sb.FillPercent = 1
		for slot, n := range map[uint64]int{1: 2, 2: 12, 3: 2} {
			for seq := range n {
				must(t, sb.Put(sharedEventKey(slotOf(slot), seqKey(uint64(seq+1))), big))
			}
		}
		return nil
	}))
	must(t, db.Update(func(tx *bolt.Tx) error {
		sb := tx.Bucket(bucketRunEvents)
		if sb.Stats().LeafPageN < 4 {
			t.Fatalf("%d leaves: want the middle run's keys over leaves of their own", sb.Stats().LeafPageN)
		}
		c := sb.Cursor()
		for k, _ := c.Seek(slotOf(2)); k != nil && bytes.HasPrefix(k, slotOf(2)); k, _ = c.Seek(slotOf(2)) {
			must(t, c.Delete())
		}
		k, _, err := runEvents{b: sb, prefix: slotOf(1)}.last()
		must(t, err)
		if !bytes.Equal(k, seqKey(2)) {
			t.Errorf("the first run's last key: %x, want seq 2", k)
		}
		return nil
	}))
}
