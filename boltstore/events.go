package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
)

// Where a run's events are (doc.go). A bucket of its own for every run cost a page of the file
// for each run past bbolt's inline limit (a quarter page), mostly empty for a run of a few
// events; so a run's events are kept in the shared bucket run_events, packed with other runs'
// into pages, until they pass ownBucketBytes: then they move to a bucket of their own,
// events/<run id>, which a long history fills page by page. A run's events are in one of the
// two places, never both.
//
// In the shared bucket a run's events are keyed by the run's slot, not its id: slots are
// handed out in the order runs first commit (the bucket's sequence), so the runs that are
// still growing have their events side by side at the end of the key space, and the pages
// behind them, full, are neither split nor read again. Run ids are random: keyed by them, every
// commit split a page somewhere in the file, the pages were left half full and every one was
// read again (docs/performance.md, "Memory bursts"). run_slots maps a run id to its slot.

// ownBucketBytes is the size of keys and values past which a run's events move to a bucket of
// their own: two pages, so that the last page of an own bucket, part empty, is a small part
// of the run's pages.
const ownBucketBytes = 8 << 10

// sharedFill is the shared bucket's FillPercent: its keys are appended near its end, so its
// pages are split full.
const sharedFill = 1

// runEvents is where one run's events are, in a transaction.
type runEvents struct {
	b      *bolt.Bucket // nil: no bucket holds them (a file of schema 1 has no shared bucket)
	prefix []byte       // the run's slot, its keys' prefix in the shared bucket; nil in an own bucket or without a slot yet
	own    bool
}

// findEvents locates the run's events: its own bucket when it has one, else its slot in the
// shared bucket (none when it has no event there yet). A slot entry failing its checksum is an
// error: read from another slot, the history would be another run's.
func findEvents(tx *bolt.Tx, runID []byte) (runEvents, error) {
	if eb := tx.Bucket(bucketEvents); eb != nil {
		if b := eb.Bucket(runID); b != nil {
			return runEvents{b: b, own: true}, nil
		}
	}
	sb := tx.Bucket(bucketRunEvents)
	if sb == nil {
		return runEvents{}, nil
	}
	re := runEvents{b: sb}
	c := tx.Bucket(bucketRunSlots).Cursor()
	k, v := c.Seek(runID)
	if bytes.Equal(k, runID) {
		slot, err := readSlot(runID, v)
		if err != nil {
			return runEvents{}, fmt.Errorf("events slot: %w; run wend check", err)
		}
		re.prefix = slot
		return re, nil
	}
	// No slot: a run without events yet. Unless damage moved the run's entry to another key,
	// which sits where it was, next to where runID would be: the entries on either side are
	// verified, so that such a run reads as damaged rather than as a run without events.
	if k != nil {
		if err := slotBeside(runID, k, v); err != nil {
			return runEvents{}, err
		}
	}
	if k, v = c.Prev(); k != nil {
		if err := slotBeside(runID, k, v); err != nil {
			return runEvents{}, err
		}
	}
	return re, nil
}

// slotBeside fails when the entry k, beside where runID's would be, is runID's own moved there:
// it fails its checksum under k and passes it under runID. Damage to another run's entry is
// that run's.
func slotBeside(runID, k, v []byte) error {
	if _, err := readSlot(k, v); err == nil {
		return nil
	}
	if _, err := readSlot(runID, v); err != nil {
		return nil
	}
	return fmt.Errorf("events slot of run %s: its entry is stored under %q: %w; run wend check", runID, k, history.ErrChecksum)
}

// A slot is 8 bytes: a number, from the shared bucket's sequence, in the first 7 (big-endian,
// so slots sort as their numbers) and a CRC-8 of those in the last, so that a flipped bit in
// an event key's slot makes a key of no slot, never one of another run.

// slotOf is slot number n's bytes.
func slotOf(n uint64) []byte {
	s := binary.BigEndian.AppendUint64(make([]byte, 0, 16), n<<8)
	s[7] = crc8(s[:7])
	return s
}

// validSlot reports whether s is a slot's 8 bytes.
func validSlot(s []byte) bool {
	return len(s) == 8 && s[7] == crc8(s[:7]) && binary.BigEndian.Uint64(s)>>8 != 0
}

// crc8 is the CRC-8 (polynomial x^8+x^2+x+1) of b: it differs for any single flipped bit.
func crc8(b []byte) byte {
	var c byte
	for _, x := range b {
		c ^= x
		for range 8 {
			if c&0x80 != 0 {
				c = c<<1 ^ 0x07
			} else {
				c <<= 1
			}
		}
	}
	return c
}

// readSlot verifies a run_slots value and returns the slot.
func readSlot(runID, v []byte) ([]byte, error) {
	body, err := unframe(runID, v)
	if err != nil {
		return nil, err
	}
	if !validSlot(body) {
		return nil, fmt.Errorf("%x is no slot", body)
	}
	return body, nil
}

// newSlot gives the run the shared bucket's next slot.
func newSlot(tx *bolt.Tx, sb *bolt.Bucket, runID []byte) ([]byte, error) {
	n, err := sb.NextSequence()
	if err != nil {
		return nil, err
	}
	if n >= 1<<56 {
		return nil, errors.New("the shared events bucket's slots are used up")
	}
	slot := slotOf(n)
	// A slot is handed out once: a sequence set back (by anything but this store) must not
	// merge a new run's history into an old one's.
	if k, _ := sb.Cursor().Seek(slot); k != nil && bytes.HasPrefix(k, slot) {
		return nil, fmt.Errorf("slot %d is in use already: the shared bucket's sequence is behind its keys; run wend check", n)
	}
	if err := tx.Bucket(bucketRunSlots).Put(runID, frame(runID, slot)); err != nil {
		return nil, err
	}
	return slot, nil
}

// sharedEventKey is the shared bucket's key of an event under seq key k of the run in slot.
func sharedEventKey(slot, k []byte) []byte {
	return append(append(make([]byte, 0, len(slot)+len(k)), slot...), k...)
}

// splitSharedKey is the slot and seq key of a key of the shared bucket; ok is false for a key
// no run's event has (damage).
func splitSharedKey(k []byte) (slot, seqKey []byte, ok bool) {
	if len(k) != 16 || !validSlot(k[:8]) {
		return nil, nil, false
	}
	return k[:8], k[8:], true
}

// cursor reads the run's events in key order, with the seq keys as they are stored (the run's
// slot taken off), whatever their length.
func (re runEvents) cursor() eventCursor {
	if re.b == nil || (!re.own && re.prefix == nil) {
		return eventCursor{}
	}
	return eventCursor{c: re.b.Cursor(), prefix: re.prefix}
}

type eventCursor struct {
	c      *bolt.Cursor
	prefix []byte
	after  []byte // the shared bucket's key that ended the run's, when one did
}

// seek moves to the run's first event with a seq key from from on (nil: the run's first).
func (ec *eventCursor) seek(from []byte) (k, v []byte) {
	switch {
	case ec.c == nil:
		return nil, nil
	case ec.prefix == nil:
		return ec.c.Seek(from)
	case from == nil:
		return ec.strip(ec.c.Seek(ec.prefix))
	}
	return ec.strip(ec.c.Seek(sharedEventKey(ec.prefix, from)))
}

func (ec *eventCursor) next() (k, v []byte) {
	if ec.prefix == nil {
		return ec.c.Next()
	}
	return ec.strip(ec.c.Next())
}

func (ec *eventCursor) strip(k, v []byte) ([]byte, []byte) {
	if k == nil || !bytes.HasPrefix(k, ec.prefix) {
		ec.after = k
		return nil, nil
	}
	return k[len(ec.prefix):], v
}

// ended fails when the read reached the end of the run's events in the shared bucket at a key
// that is no event key: a flipped bit in the slot of the run's last event leaves it there, and
// the history would silently read one event short.
func (ec *eventCursor) ended() error {
	if ec.after == nil {
		return nil
	}
	return checkAfter(ec.after)
}

func checkAfter(k []byte) error {
	if _, _, ok := splitSharedKey(k); !ok {
		return fmt.Errorf("the key after the run's events, %x, is no event key: %w; run wend check", k, ErrDamaged)
	}
	return nil
}

// last is the run's last key (prefix taken off) and value. In an own bucket lastKV finds it:
// from a Seek past every seq key, a step back. In the shared bucket the run's keys are walked
// forward: they are few (at most ownBucketBytes), and bbolt's Prev, within the transaction
// that deleted the keys of a leaf (a run moved to a bucket of its own, a purge), can step onto
// that emptied leaf and find nothing, where Next passes it. The key after the run's must be
// another slot's: a flipped bit in the slot of the run's last event leaves it there, as a key
// of no slot, and the run would silently end one event early.
func (re runEvents) last() (k, v []byte, err error) {
	if re.b == nil || (!re.own && re.prefix == nil) {
		return nil, nil, nil
	}
	if re.own {
		k, v = lastKV(re.b)
		return k, v, nil
	}
	ec := re.cursor()
	for ck, cv := ec.seek(nil); ck != nil; ck, cv = ec.next() {
		k, v = ck, cv
	}
	if err := ec.ended(); err != nil {
		return nil, nil, err
	}
	return k, v, nil
}

// any reports whether the run has at least one stored event key.
func (re runEvents) any() bool {
	ec := re.cursor()
	k, _ := ec.seek(nil)
	return k != nil
}

// size is the bytes of the run's keys and values, counted up to a little past limit.
func (re runEvents) size(limit int) int {
	n := 0
	ec := re.cursor()
	for k, v := ec.seek(nil); k != nil && n <= limit; k, v = ec.next() {
		n += len(k) + len(v)
	}
	return n
}

// deleteShared deletes the run's slot and every key of it from the shared bucket. A cursor's
// Delete followed by Next can step over a key, so each deletion seeks the slot's first key
// again.
func deleteShared(tx *bolt.Tx, runID []byte, re runEvents) error {
	if re.prefix != nil {
		c := re.b.Cursor()
		for k, _ := c.Seek(re.prefix); k != nil && bytes.HasPrefix(k, re.prefix); k, _ = c.Seek(re.prefix) {
			if err := c.Delete(); err != nil {
				return err
			}
		}
	}
	return tx.Bucket(bucketRunSlots).Delete(runID)
}

// moveToOwn moves the run's events from the shared bucket to a bucket of its own, which it
// returns.
func moveToOwn(tx *bolt.Tx, runID []byte, re runEvents) (runEvents, error) {
	eb := tx.Bucket(bucketEvents)
	if eb == nil {
		return runEvents{}, errors.New("no events bucket")
	}
	own, err := eb.CreateBucket(runID)
	if err != nil {
		return runEvents{}, err
	}
	own.FillPercent = 1
	ec := re.cursor()
	for k, v := ec.seek(nil); k != nil; k, v = ec.next() {
		// bbolt keeps what Put is given until the commit, and the bytes here are the map's or
		// a page that the deletions below change.
		if err := own.Put(bytes.Clone(k), bytes.Clone(v)); err != nil {
			return runEvents{}, err
		}
	}
	if err := deleteShared(tx, runID, re); err != nil {
		return runEvents{}, err
	}
	return runEvents{b: own, own: true}, nil
}

// appendEvents puts a commit's events of one run where the run's events are: a new run's in
// the shared bucket (or, in a file of schema 1 read with its log replayed, a bucket of its
// own as that schema kept them), moved to a bucket of their own once they pass ownBucketBytes.
func appendEvents(tx *bolt.Tx, runID []byte, events []kv) error {
	if len(events) == 0 {
		return nil
	}
	re, err := findEvents(tx, runID)
	if err != nil {
		return err
	}
	if re.b == nil {
		eb, err := tx.Bucket(bucketEvents).CreateBucketIfNotExists(runID)
		if err != nil {
			return fmt.Errorf("events: %w", err)
		}
		re = runEvents{b: eb, own: true}
	}
	if !re.own {
		add := 0
		for _, e := range events {
			add += len(e.k) + len(e.v)
		}
		if add > ownBucketBytes || re.size(ownBucketBytes-add) > ownBucketBytes-add {
			if re, err = moveToOwn(tx, runID, re); err != nil {
				return fmt.Errorf("events: move to a bucket of its own: %w", err)
			}
		}
	}
	if re.own {
		// Events are only ever appended in key order: full pages waste no space. FillPercent
		// is not stored, so it is set in every transaction.
		re.b.FillPercent = 1
		for _, e := range events {
			if err := re.b.Put(e.k, e.v); err != nil {
				return fmt.Errorf("event %x: %w", e.k, err)
			}
		}
		return nil
	}
	if re.prefix == nil {
		if re.prefix, err = newSlot(tx, re.b, runID); err != nil {
			return fmt.Errorf("events slot: %w", err)
		}
	}
	re.b.FillPercent = sharedFill
	for _, e := range events {
		if err := re.b.Put(sharedEventKey(re.prefix, e.k), e.v); err != nil {
			return fmt.Errorf("event %x: %w", e.k, err)
		}
	}
	return nil
}

// deleteEvents deletes the run's events, wherever they are.
func deleteEvents(tx *bolt.Tx, runID []byte) error {
	if eb := tx.Bucket(bucketEvents); eb != nil && eb.Bucket(runID) != nil {
		if err := eb.DeleteBucket(runID); err != nil {
			return err
		}
	}
	sb := tx.Bucket(bucketRunEvents)
	if sb == nil {
		return nil
	}
	re := runEvents{b: sb}
	if v := tx.Bucket(bucketRunSlots).Get(runID); v != nil {
		// A damaged slot entry is deleted without the events it named: which they are is
		// not known, and wend check reports them as events of no run.
		re.prefix, _ = readSlot(runID, v)
	}
	return deleteShared(tx, runID, re)
}
