package boltstore

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
)

// searchSpan is a part of one field's index a clause's matches lie in: the keys under prefix
// whose value (the bytes after the field) compares with bound as op says (op "" takes every
// key under prefix; "!=" every key but bound's).
type searchSpan struct {
	prefix []byte // field prefix and type letter, or a whole value
	op     string
	bound  []byte // a value's bytes (type letter first)
}

// clauseSpans are the spans of the index that hold every run c can match, read from the
// filter's own rules (history.SearchCond.Match): = is each value the clause's text can stand
// for; a range a span of the field's numbers and one of its times (text and bools never
// compare by order); != every value of the field but those.
func clauseSpans(c history.SearchCond) []searchSpan {
	field := searchFieldPrefix(c.Field)
	typed := func(letter byte) []byte { return append(bytes.Clone(field), letter) }
	var vals [][]byte // the values the clause's text stands for
	vals = append(vals, searchTextKey(c.Value))
	num, numErr := strconv.ParseFloat(c.Value, 64)
	if numErr == nil && !math.IsNaN(num) {
		vals = append(vals, searchNumberKey(num))
	}
	if b, err := strconv.ParseBool(c.Value); err == nil {
		vals = append(vals, searchBoolKey(b))
	}
	t, isTime := history.ParseSearchTime(c.Value)
	if isTime {
		vals = append(vals, searchTimeKey(t))
	}
	var spans []searchSpan
	switch c.Op {
	case "=":
		for _, v := range vals {
			spans = append(spans, searchSpan{prefix: append(bytes.Clone(field), v...)})
		}
	case "<", "<=", ">", ">=":
		switch {
		case numErr == nil && math.IsNaN(num):
			// Every number compares above NaN (cmp.Compare): the whole span, the records decide.
			spans = append(spans, searchSpan{prefix: typed(searchNumber)})
		case numErr == nil:
			spans = append(spans, searchSpan{prefix: typed(searchNumber), op: c.Op, bound: searchNumberKey(num)})
		}
		if isTime {
			spans = append(spans, searchSpan{prefix: typed(searchTime), op: c.Op, bound: searchTimeKey(t)})
		}
	case "!=":
		spans = append(spans, searchSpan{prefix: typed(searchText), op: "!=", bound: searchTextKey(c.Value)})
		if numErr == nil {
			span := searchSpan{prefix: typed(searchNumber)}
			if !math.IsNaN(num) {
				span.op, span.bound = "!=", searchNumberKey(num)
			}
			spans = append(spans, span)
		}
		if b, err := strconv.ParseBool(c.Value); err == nil {
			spans = append(spans, searchSpan{prefix: typed(searchBool), op: "!=", bound: searchBoolKey(b)})
		}
		if isTime {
			spans = append(spans, searchSpan{prefix: typed(searchTime), op: "!=", bound: searchTimeKey(t)})
		}
	}
	return spans
}

// walk calls take with the started index key (position) of each entry in the span, in key
// order, through c; it stops early when take returns false. A malformed key is an error.
func (sp searchSpan) walk(c *bolt.Cursor, fieldLen int, take func(pos []byte) bool) error {
	from := sp.prefix
	if sp.op == ">" || sp.op == ">=" {
		from = append(bytes.Clone(sp.prefix[:fieldLen]), sp.bound...)
	}
	for k, v := c.Seek(from); k != nil && bytes.HasPrefix(k, sp.prefix); k, v = c.Next() {
		if err := readIndexEntry(k, v); err != nil {
			return fmt.Errorf("search index entry %s: %w; run wend check", searchKeyText(k), err)
		}
		n, ok := searchValueLen(k[fieldLen:])
		if !ok {
			return fmt.Errorf("search index: malformed key %x; run wend check", k)
		}
		val, pos := k[fieldLen:fieldLen+n], k[fieldLen+n:]
		order := bytes.Compare(val, sp.bound)
		switch sp.op {
		case "<":
			if order >= 0 {
				return nil
			}
		case "<=":
			if order > 0 {
				return nil
			}
		case ">":
			if order == 0 {
				continue
			}
		case "!=":
			if order == 0 {
				continue
			}
		}
		if !take(pos) {
			return nil
		}
	}
	return nil
}

// searchCandidates finds, through the search index, the positions (started index keys) of the
// runs that may pass f: those of one clause's spans (an = clause's if there is one, else a
// range's, else a !='s), each once, newest first. indexed is false when f has no clause on a
// search field, or the index is not there to read (a file not yet opened for writing since the
// sorted index exists), or the clause holds more than max runs (max 0: no bound): the caller
// then reads the runs otherwise.
func searchCandidates(tx *bolt.Tx, f history.RunFilter, max int) (pos [][]byte, indexed bool, err error) {
	var cond *history.SearchCond
	for _, rank := range []func(op string) bool{
		func(op string) bool { return op == "=" },
		func(op string) bool { return op != "=" && op != "!=" },
		func(op string) bool { return op == "!=" },
	} {
		for i := range f.Search {
			if cond == nil && rank(f.Search[i].Op) && slices.Contains(history.SearchOps, f.Search[i].Op) {
				cond = &f.Search[i]
			}
		}
	}
	if cond == nil {
		return nil, false, nil
	}
	b := tx.Bucket(bucketSearch)
	if b == nil {
		if tx.Bucket(bucketSearchUnsorted) != nil {
			return nil, false, nil // the earlier index: read the records
		}
		return nil, true, nil // no run has a search value
	}
	fieldLen := len(searchFieldPrefix(cond.Field))
	seen := map[string]bool{}
	for _, sp := range clauseSpans(*cond) {
		err := sp.walk(b.Cursor(), fieldLen, func(p []byte) bool {
			if !seen[string(p)] {
				seen[string(p)] = true
				pos = append(pos, bytes.Clone(p))
			}
			return max == 0 || len(pos) <= max
		})
		if err != nil {
			return nil, true, err
		}
		if max > 0 && len(pos) > max {
			return nil, false, nil
		}
	}
	slices.SortFunc(pos, bytes.Compare) // the started index's order: newest first
	return pos, true, nil
}

// searchPageMax bounds the entries a page read through the search index collects (about
// 2 MiB of keys at most): a clause that more runs pass is listed from the started index
// instead, whose newest runs then pass it often enough to fill a page.
const searchPageMax = 1 << 15

// searchPageSlice is how many run records one read transaction of SearchNewest decodes.
const searchPageSlice = 256

// SearchNewest reads, through the search index, the runs passing f and keep after the
// position (afterT, afterID) in newest-first order (afterID "": from the newest), until want
// are kept; end says none is left after them. It reads one clause's index entries (key only,
// no record) and then only the records of the runs in the page, newest first, in slices of
// short reads. ok is false when the index cannot serve f (no search clause, no sorted index
// yet, or more than searchPageMax runs in the clause's spans): the caller lists otherwise.
func (s *Store) SearchNewest(f history.RunFilter, afterT time.Time, afterID string, want int, keep func(history.Run) bool) (runs []history.Run, end, ok bool, err error) {
	var pos [][]byte
	err = s.view("list runs", func(tx *bolt.Tx) error {
		var err error
		pos, ok, err = searchCandidates(tx, f, searchPageMax)
		return err
	})
	if err != nil || !ok {
		return nil, false, ok, err
	}
	if afterID != "" {
		after := startedKey(afterT, afterID)
		i, found := slices.BinarySearchFunc(pos, after, bytes.Compare)
		if found {
			i++
		}
		pos = pos[i:]
	}
	for len(pos) > 0 && len(runs) < want {
		read := 0
		err := s.view("list runs", func(tx *bolt.Tx) error {
			recs := tx.Bucket(bucketRuns)
			for _, p := range pos[:min(len(pos), searchPageSlice)] {
				if len(runs) == want {
					return nil
				}
				read++
				_, id, good := splitStartedKey(p)
				if !good {
					return fmt.Errorf("search index: malformed key; run wend check")
				}
				v := recs.Get([]byte(id))
				if v == nil {
					continue // purged since, or an entry without its run: wend check reports it
				}
				r, err := decodeRun(tx, []byte(id), v)
				if err != nil {
					return fmt.Errorf("%w; run wend check", err)
				}
				if f.Match(r) && keep(r) {
					runs = append(runs, r)
				}
			}
			return nil
		})
		if err != nil {
			return nil, false, true, err
		}
		pos = pos[read:]
	}
	return runs, len(pos) == 0, true, nil
}
