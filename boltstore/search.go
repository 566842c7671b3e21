package boltstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
)

// bucketSearch indexes the runs' search field values (history.Run.Search) for equality:
//
//	uvarint(len(field)) | field | uvarint(len(value)) | value | run id -> frame of nothing
//
// value is the search value's canonical text with a type letter: "s" and the string (a time is
// its RFC 3339 text in UTC), "n" and the number as strconv.FormatFloat 'g' -1 writes it, "b"
// and true or false. It is made when the first run with a search value is committed: a file
// written before search fields existed has no search values and so needs none. The run
// record stays the truth: Runs checks every record the index names against the whole filter,
// so an entry left stale costs a read, never a wrong answer.
var bucketSearch = []byte("search")

// searchIndexKey is the index text of a search value; false for a value of no search type.
func searchIndexKey(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return "s" + x, true
	case float64:
		return "n" + strconv.FormatFloat(x, 'g', -1, 64), true
	case bool:
		return "b" + strconv.FormatBool(x), true
	}
	return "", false
}

// searchPrefix is the key prefix of every run whose field has the index text val.
func searchPrefix(field, val string) []byte {
	k := binary.AppendUvarint(nil, uint64(len(field)))
	k = append(k, field...)
	k = binary.AppendUvarint(k, uint64(len(val)))
	return append(k, val...)
}

// searchKeys are the index keys of a run with the search values vals.
func searchKeys(runID string, vals map[string]any) map[string]bool {
	keys := map[string]bool{}
	for field, v := range vals {
		if val, ok := searchIndexKey(v); ok {
			keys[string(append(searchPrefix(field, val), runID...))] = true
		}
	}
	return keys
}

// storedSearch reads the search values of a stored record, old; nil when it has none. Only a
// record that names search values is decoded (most runs' have none).
func storedSearch(id, old []byte) map[string]any {
	if old == nil || !bytes.Contains(old, []byte(`"search":`)) {
		return nil
	}
	body, _ := unframe(id, old)
	if body == nil && len(old) > frameHeader {
		body = old[frameHeader:] // damaged: its values are a guess, as reindex's workflow id
	}
	var rec struct {
		Search map[string]any `json:"search"`
	}
	if json.Unmarshal(body, &rec) != nil {
		return nil
	}
	return rec.Search
}

// reindexSearch keeps the search index at the run's new values; old is its stored record,
// nil for a new run. Both sets of values are read from the records' bytes, never from the
// commit's history.Run: a commit replayed from the log carries the record's bytes and only
// the ids and seqs beside them (decodeBatch), so an index made from the record is the same
// whether the commit is applied live or replayed after a crash, and is what Check and
// RepairIndexes compute from the records too.
func reindexSearch(tx *bolt.Tx, old []byte, r preparedRun) error {
	before := searchKeys(string(r.id), storedSearch(r.id, old))
	after := searchKeys(string(r.id), storedSearch(r.id, r.record))
	if len(before) == 0 && len(after) == 0 {
		return nil
	}
	b, err := tx.CreateBucketIfNotExists(bucketSearch)
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	for k := range before {
		if !after[k] {
			if err := b.Delete([]byte(k)); err != nil {
				return fmt.Errorf("search index: %w", err)
			}
		}
	}
	for k := range after {
		if !before[k] {
			if err := b.Put([]byte(k), indexEntry([]byte(k))); err != nil {
				return fmt.Errorf("search index: %w", err)
			}
		}
	}
	return nil
}

// unindexSearch deletes a purged run's search index entries.
func unindexSearch(tx *bolt.Tx, r history.Run) error {
	b := tx.Bucket(bucketSearch)
	if b == nil {
		return nil
	}
	for k := range searchKeys(r.RunID, r.Search) {
		if err := b.Delete([]byte(k)); err != nil {
			return fmt.Errorf("search index: %w", err)
		}
	}
	return nil
}

// searchLookup finds, through the index, the ids of the runs that may pass f's first equality
// clause on a search field; false when f has none, and the caller reads every run. The value
// as written may be of any type, so each text it can stand for is looked up.
func searchLookup(tx *bolt.Tx, f history.RunFilter) (ids [][]byte, ok bool, err error) {
	var cond *history.SearchCond
	for i := range f.Search {
		if f.Search[i].Op == "=" {
			cond = &f.Search[i]
			break
		}
	}
	if cond == nil {
		return nil, false, nil
	}
	b := tx.Bucket(bucketSearch)
	if b == nil {
		return nil, true, nil // no run has a search value
	}
	seen := map[string]bool{}
	for _, val := range searchTexts(cond.Value) {
		prefix := searchPrefix(cond.Field, val)
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if err := readIndexEntry(k, v); err != nil {
				return nil, true, fmt.Errorf("search index entry of %s: %w; run wend check", cond.Field, err)
			}
			id := k[len(prefix):]
			if !seen[string(id)] {
				seen[string(id)] = true
				ids = append(ids, bytes.Clone(id))
			}
		}
	}
	return ids, true, nil
}

// searchTexts are the index texts a clause's value can match: as text, and as a number, a
// bool or a time when it reads as one.
func searchTexts(s string) []string {
	out := []string{"s" + s}
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		out = append(out, "n"+strconv.FormatFloat(n, 'g', -1, 64))
	}
	if b, err := strconv.ParseBool(s); err == nil {
		out = append(out, "b"+strconv.FormatBool(b))
	}
	if t, ok := history.ParseSearchTime(s); ok {
		if u := "s" + t.UTC().Format(time.RFC3339Nano); u != out[0] {
			out = append(out, u)
		}
	}
	return out
}

// checkSearchIndex checks the search index against the run records: every entry verifies and
// names a run holding that value, and every value of every run has its entry (a missing one
// would hide the run from an equality filter). It reads in slices (sliceEach), each run
// compared with its entries and each entry with its run in one slice's read, so a commit
// between two slices shows no difference that is not there.
func (s *Store) checkSearchIndex() []string {
	var out []string
	err := s.sliceEach(bucketRuns, func(tx *bolt.Tx, k, v []byte) error {
		b := tx.Bucket(bucketSearch)
		for key := range searchKeys(string(k), storedSearch(k, v)) {
			if b == nil || b.Get([]byte(key)) == nil {
				out = append(out, fmt.Sprintf("search index: entry %s is missing: its run is hidden from an equality filter on the field", searchKeyText([]byte(key))))
			}
		}
		return nil
	})
	if err == nil {
		err = s.sliceEach(bucketSearch, func(tx *bolt.Tx, k, v []byte) error {
			if err := readIndexEntry(k, v); err != nil {
				out = append(out, fmt.Sprintf("search index: entry %s: %v", searchKeyText(k), err))
			} else if !searchEntryHeld(tx, k) {
				out = append(out, fmt.Sprintf("search index: entry %s names no run holding that value", searchKeyText(k)))
			}
			return nil
		})
	}
	if err != nil {
		out = append(out, err.Error())
	}
	slices.Sort(out)
	return out
}

// searchEntryHeld reports whether the run a search index key names holds the value it indexes,
// read in tx.
func searchEntryHeld(tx *bolt.Tx, k []byte) bool {
	_, rest, ok := splitUvarintPrefix(k)
	if !ok {
		return false
	}
	_, run, ok := splitUvarintPrefix(rest)
	if !ok {
		return false
	}
	return searchKeys(string(run), storedSearch(run, tx.Bucket(bucketRuns).Get(run)))[string(k)]
}

// searchKeyText names an index key for a report as a filter would write its value: run RUN,
// FIELD = "TEXT" for a string (or a time), FIELD = 12.5 for a number, FIELD = true for a bool.
func searchKeyText(k []byte) string {
	field, rest, ok := splitUvarintPrefix(k)
	if !ok {
		return fmt.Sprintf("%q (malformed)", k)
	}
	val, run, ok := splitUvarintPrefix(rest)
	if !ok || len(val) == 0 {
		return fmt.Sprintf("%q (malformed)", k)
	}
	text := fmt.Sprintf("%q (of unknown type %q)", val[1:], val[:1])
	switch val[0] {
	case 's':
		text = strconv.Quote(string(val[1:]))
	case 'n', 'b':
		text = string(val[1:])
	}
	return fmt.Sprintf("run %q, %s = %s", run, field, text)
}

func splitUvarintPrefix(k []byte) (head, rest []byte, ok bool) {
	n, w := binary.Uvarint(k)
	if w <= 0 || uint64(len(k)-w) < n {
		return nil, nil, false
	}
	return k[w : w+int(n)], k[w+int(n):], true
}
