package boltstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
)

// bucketSearch indexes the runs' search field values (history.Run.Search) in the order the
// filter compares them, each field's runs newest first under each value:
//
//	uvarint(len(field)) | field | value | startedKey(started_at, run id) -> frame of nothing
//
// value is a type letter and the value's bytes in an order bytes.Compare keeps: "n" and a
// number's IEEE 754 bits, sign flipped (negatives inverted, -0 as 0: the order of numbers);
// "t" and a text that reads as an RFC 3339 time (which the filter compares as a time), as
// sortable Unix seconds and nanoseconds; "s" and other text, each 0x00 escaped as 0x00 0xff
// and closed by 0x00 0x01 (so a text sorts before its extensions); "b" and 0 or 1. A range
// clause (<, <=, >, >=) walks one span of a field's numbers or times; =, one value's runs;
// != the field's values but one (searchCandidates). The key ends in the run's started index
// key, so a value's runs come newest first and a page needs no record to order them. It is
// made when the first run with a search value is committed: a file written before search
// fields existed has no search values and so needs none; one written with the earlier,
// unordered index (bucketSearchUnsorted) gets this one at its first Open for writing
// (buildSearchIndex). The run record stays the truth: every record the index names is checked
// against the whole filter, so an entry left stale costs a read, never a wrong answer.
var bucketSearch = []byte("search_sorted")

// bucketSearchUnsorted is the earlier search index, for equality only (value as text, then
// run id): replaced by bucketSearch at the first Open for writing.
var bucketSearchUnsorted = []byte("search")

// Type letters of the index's values.
const (
	searchNumber = 'n'
	searchTime   = 't'
	searchText   = 's'
	searchBool   = 'b'
)

// searchValueKey is the ordered bytes of a search value (type letter first); false for a
// value of no search type.
func searchValueKey(v any) ([]byte, bool) {
	switch x := v.(type) {
	case string:
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return searchTimeKey(t), true
		}
		return searchTextKey(x), true
	case float64:
		return searchNumberKey(x), true
	case bool:
		return searchBoolKey(x), true
	}
	return nil, false
}

func searchNumberKey(x float64) []byte {
	bits := math.Float64bits(x)
	switch {
	case x == 0:
		bits = 1 << 63 // -0 is 0
	case bits>>63 == 1:
		bits = ^bits
	default:
		bits |= 1 << 63
	}
	return binary.BigEndian.AppendUint64([]byte{searchNumber}, bits)
}

func searchTimeKey(t time.Time) []byte {
	k := binary.BigEndian.AppendUint64([]byte{searchTime}, uint64(t.Unix())^1<<63)
	return binary.BigEndian.AppendUint32(k, uint32(t.Nanosecond()))
}

func searchTextKey(x string) []byte {
	k := make([]byte, 0, len(x)+3)
	k = append(k, searchText)
	for i := 0; i < len(x); i++ {
		if k = append(k, x[i]); x[i] == 0 {
			k = append(k, 0xff)
		}
	}
	return append(k, 0, 1)
}

func searchBoolKey(x bool) []byte {
	if x {
		return []byte{searchBool, 1}
	}
	return []byte{searchBool, 0}
}

// searchValueLen is the length of the value (type letter included) at the start of rest;
// false when it is malformed.
func searchValueLen(rest []byte) (int, bool) {
	if len(rest) == 0 {
		return 0, false
	}
	fixed := map[byte]int{searchNumber: 9, searchTime: 13, searchBool: 2}
	if n, ok := fixed[rest[0]]; ok {
		return n, len(rest) >= n
	}
	if rest[0] != searchText {
		return 0, false
	}
	for i := 1; i+1 < len(rest); i++ {
		if rest[i] == 0 {
			switch rest[i+1] {
			case 1:
				return i + 2, true
			case 0xff:
				i++
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

// searchFieldPrefix is the key prefix of every entry of field.
func searchFieldPrefix(field string) []byte {
	k := binary.AppendUvarint(nil, uint64(len(field)))
	return append(k, field...)
}

// searchKey is the index key of run id, started at started, whose field has the value val
// (searchValueKey's bytes).
func searchKey(field string, val []byte, started time.Time, id string) []byte {
	return append(append(searchFieldPrefix(field), val...), startedKey(started, id)...)
}

// splitSearchKey reverses searchKey.
func splitSearchKey(k []byte) (field string, val []byte, started time.Time, id string, ok bool) {
	f, rest, ok := splitUvarintPrefix(k)
	if !ok || len(f) == 0 {
		return "", nil, time.Time{}, "", false
	}
	n, ok := searchValueLen(rest)
	if !ok {
		return "", nil, time.Time{}, "", false
	}
	started, id, ok = splitStartedKey(rest[n:])
	if !ok || id == "" {
		return "", nil, time.Time{}, "", false
	}
	return string(f), rest[:n], started, id, true
}

// searchKeys are the index keys of run id, started at started, with the search values vals.
func searchKeys(id string, started time.Time, vals map[string]any) map[string]bool {
	keys := map[string]bool{}
	for field, v := range vals {
		if val, ok := searchValueKey(v); ok {
			keys[string(searchKey(field, val, started, id))] = true
		}
	}
	return keys
}

// storedSearch reads the search values and the start of a stored record, old; no values when
// it has none. Only a record that names search values is decoded (most runs' have none).
func storedSearch(id, old []byte) (map[string]any, time.Time) {
	if old == nil || !bytes.Contains(old, []byte(`"search":`)) {
		return nil, time.Time{}
	}
	body, _ := unframe(id, old)
	if body == nil && len(old) > frameHeader {
		body = old[frameHeader:] // damaged: its values are a guess, as reindex's workflow id
	}
	var rec struct {
		Search    map[string]any `json:"search"`
		StartedAt time.Time      `json:"started_at"`
	}
	if json.Unmarshal(body, &rec) != nil {
		return nil, time.Time{}
	}
	return rec.Search, rec.StartedAt
}

// storedSearchKeys are the index keys a stored record calls for.
func storedSearchKeys(id, v []byte) map[string]bool {
	vals, started := storedSearch(id, v)
	return searchKeys(string(id), started, vals)
}

// reindexSearch keeps the search index at the run's new values; old is its stored record,
// nil for a new run. Both sets of values are read from the records' bytes, never from the
// commit's history.Run: a commit replayed from the log carries the record's bytes and only
// the ids and seqs beside them (decodeBatch), so an index made from the record is the same
// whether the commit is applied live or replayed after a crash, and is what Check and
// RepairIndexes compute from the records too.
func reindexSearch(tx *bolt.Tx, old []byte, r preparedRun) error {
	before := storedSearchKeys(r.id, old)
	after := storedSearchKeys(r.id, r.record)
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

// buildSearchIndex replaces the earlier, unsorted search index of a database with the sorted
// one, made from every run record, in tx. It runs at Open for writing, before the log's
// replay, whose records then keep it as any commit does.
func buildSearchIndex(tx *bolt.Tx) error {
	if tx.Bucket(bucketSearchUnsorted) == nil || tx.Bucket(bucketSearch) != nil {
		return nil
	}
	b, err := tx.CreateBucket(bucketSearch)
	if err != nil {
		return fmt.Errorf("build the search index: %w", err)
	}
	err = forEach(tx.Bucket(bucketRuns), func(k, v []byte) error {
		for key := range storedSearchKeys(k, v) {
			if err := b.Put([]byte(key), indexEntry([]byte(key))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("build the search index: %w", err)
	}
	return tx.DeleteBucket(bucketSearchUnsorted)
}

// unindexSearch deletes a purged run's search index entries.
func unindexSearch(tx *bolt.Tx, r history.Run) error {
	b := tx.Bucket(bucketSearch)
	if b == nil {
		return nil
	}
	for k := range searchKeys(r.RunID, r.StartedAt, r.Search) {
		if err := b.Delete([]byte(k)); err != nil {
			return fmt.Errorf("search index: %w", err)
		}
	}
	return nil
}

// checkSearchIndex checks the search index against the run records: every entry verifies and
// names a run holding that value, and every value of every run has its entry (a missing one
// would hide the run from an equality filter). It reads in slices (sliceEach), each run
// compared with its entries and each entry with its run in one slice's read, so a commit
// between two slices shows no difference that is not there.
func (s *Store) checkSearchIndex() []string {
	var out []string
	unsorted := false
	_ = s.view("check database", func(tx *bolt.Tx) error {
		unsorted = tx.Bucket(bucketSearch) == nil && tx.Bucket(bucketSearchUnsorted) != nil
		return nil
	})
	if unsorted {
		return nil // opened for reading before the sorted index was built: the next Open for writing builds it
	}
	err := s.sliceEach(bucketRuns, func(tx *bolt.Tx, k, v []byte) error {
		b := tx.Bucket(bucketSearch)
		for key := range storedSearchKeys(k, v) {
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
	_, _, _, id, ok := splitSearchKey(k)
	if !ok {
		return false
	}
	return storedSearchKeys([]byte(id), tx.Bucket(bucketRuns).Get([]byte(id)))[string(k)]
}

// searchKeyText names an index key for a report as a filter would write its value: run RUN,
// FIELD = "TEXT" for a string or a time, FIELD = 12.5 for a number, FIELD = true for a bool.
func searchKeyText(k []byte) string {
	field, val, _, id, ok := splitSearchKey(k)
	if !ok {
		return fmt.Sprintf("%q (malformed)", k)
	}
	return fmt.Sprintf("run %q, %s = %s", id, field, searchValueText(val))
}

// searchValueText is the value of searchValueKey's bytes as a filter would write it.
func searchValueText(val []byte) string {
	switch val[0] {
	case searchNumber:
		bits := binary.BigEndian.Uint64(val[1:])
		if bits>>63 == 1 {
			bits &^= 1 << 63
		} else {
			bits = ^bits
		}
		return strconv.FormatFloat(math.Float64frombits(bits), 'g', -1, 64)
	case searchTime:
		secs := int64(binary.BigEndian.Uint64(val[1:]) ^ 1<<63)
		t := time.Unix(secs, int64(binary.BigEndian.Uint32(val[9:]))).UTC()
		return strconv.Quote(t.Format(time.RFC3339Nano))
	case searchBool:
		return strconv.FormatBool(val[1] == 1)
	}
	text := bytes.ReplaceAll(val[1:len(val)-2], []byte{0, 0xff}, []byte{0})
	return strconv.Quote(string(text))
}

func splitUvarintPrefix(k []byte) (head, rest []byte, ok bool) {
	n, w := binary.Uvarint(k)
	if w <= 0 || uint64(len(k)-w) < n {
		return nil, nil, false
	}
	return k[w : w+int(n)], k[w+int(n):], true
}
