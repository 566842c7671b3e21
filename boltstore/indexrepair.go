package boltstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The derived indexes are the workflow index (bucketWorkflows: an entry per run under its
// workflow id, and a head per workflow counting them) and the search index (bucketSearch: an
// entry per search value of each run). Both are a function of the run records alone: apply
// writes them in the commit that writes the record, from the record's bytes (so the log's
// replay makes them exactly as the live commit did), a purge deletes them with the record,
// Check compares them with the records both ways, and RepairIndexes rebuilds them.

// recordIndexes are the index keys a sound run record under id calls for: its workflow index
// entry and its search index entries; ok is false for a record that does not verify or decode,
// which Check reports and no index is rebuilt from.
func recordIndexes(id, v []byte) (wfKey []byte, search map[string]bool, ok bool) {
	body, err := unframe(id, v)
	if err != nil {
		return nil, nil, false
	}
	var rec struct {
		WorkflowID string         `json:"workflow_id"`
		Search     map[string]any `json:"search"`
		StartedAt  time.Time      `json:"started_at"`
	}
	wf, plain := leadingWorkflowID(body)
	if !plain {
		if json.Unmarshal(body, &rec) != nil {
			return nil, nil, false
		}
		return workflowKey(rec.WorkflowID, string(id)), searchKeys(string(id), rec.StartedAt, rec.Search), true
	}
	// Only the search object is decoded: `"search":` cannot stand inside a JSON string (its
	// quotes would be escaped), and the fields before it hold no object, so its first
	// occurrence is the record's own key. A record with search values is then decoded whole
	// for its start, which its index keys end with.
	if i := bytes.Index(body, []byte(`"search":`)); i >= 0 {
		if json.Unmarshal(body, &rec) != nil {
			return nil, nil, false
		}
	}
	return workflowKey(wf, string(id)), searchKeys(string(id), rec.StartedAt, rec.Search), true
}

// leadingWorkflowID reads the workflow id a record body opens with (encodeRun writes it
// first) when it holds no escape (the frame verified, the bytes are encodeRun's); false
// otherwise, and the body is decoded whole.
func leadingWorkflowID(body []byte) (string, bool) {
	const open = `{"workflow_id":"`
	if !bytes.HasPrefix(body, []byte(open)) {
		return "", false
	}
	rest := body[len(open):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return "", false
	}
	return string(rest[:end]), true
}

// indexScanChunk is how many keys one read transaction of RepairIndexes' scan reads: between
// checkpoints a read holds the writer, so the scan, which serve's watchdog runs every minute,
// lets commits in between its chunks.
const indexScanChunk = 256

// scanChunks calls fn on every key of bucket (nothing when it does not exist), in chunks of
// indexScanChunk keys, each copied out in a transaction of its own and handed to fn after it
// ended. Commits between chunks may add or delete keys the scan then sees or misses: its
// caller checks what it found again in the transaction that acts on it.
func (s *Store) scanChunks(op string, bucket []byte, fn func(k, v []byte)) error {
	var from []byte
	chunk := make([]kv, 0, indexScanChunk)
	for {
		chunk = chunk[:0]
		more := false
		err := s.view(op, func(tx *bolt.Tx) error {
			b := tx.Bucket(bucket)
			if b == nil {
				return nil
			}
			c := b.Cursor()
			for k, v := c.Seek(from); k != nil; k, v = c.Next() {
				if len(chunk) == indexScanChunk {
					more = true
					break
				}
				chunk = append(chunk, kv{bytes.Clone(k), bytes.Clone(v)})
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, e := range chunk {
			fn(e.k, e.v)
		}
		if !more {
			return nil
		}
		from = append(chunk[len(chunk)-1].k, 0) // the first key after the chunk's last
	}
}

// indexDiff is what a scan found out of step between the records and the indexes.
type indexDiff struct {
	wfMissing, wfExtra, searchMissing, searchExtra [][]byte
	heads                                          map[string]bool // workflows whose head miscounts
}

func (d *indexDiff) empty() bool {
	return len(d.wfMissing)+len(d.wfExtra)+len(d.searchMissing)+len(d.searchExtra)+len(d.heads) == 0
}

// diffIndexes scans the records and both indexes in short transactions and lists every entry
// missing, extra or damaged (damaged ones count as missing: they are put again) and every
// workflow head that does not count its entries.
func (s *Store) diffIndexes() (*indexDiff, error) {
	wantWF, wantSearch := map[string]bool{}, map[string]bool{}
	err := s.scanChunks("repair indexes", bucketRuns, func(k, v []byte) {
		wf, search, ok := recordIndexes(k, v)
		if !ok {
			return
		}
		wantWF[string(wf)] = true
		for key := range search {
			wantSearch[key] = true
		}
	})
	if err != nil {
		return nil, err
	}
	d := &indexDiff{heads: map[string]bool{}}
	heads, counts := map[string]uint64{}, map[string]uint64{}
	err = s.scanChunks("repair indexes", bucketWorkflows, func(k, v []byte) {
		wf, id, ok := splitWorkflowKey(k)
		switch {
		case !ok:
			d.wfExtra = append(d.wfExtra, k)
		case id == "":
			if n, err := readIndexHead(k, v); err == nil {
				heads[wf] = n
			} else {
				d.heads[wf] = true
			}
		default:
			counts[wf]++
			if !wantWF[string(k)] {
				d.wfExtra = append(d.wfExtra, k)
			} else if readIndexEntry(k, v) == nil {
				delete(wantWF, string(k))
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for wf, n := range counts {
		if h, ok := heads[wf]; !ok || h != n {
			d.heads[wf] = true
		}
	}
	for wf := range heads {
		if counts[wf] == 0 {
			d.heads[wf] = true
		}
	}
	for k := range wantWF {
		d.wfMissing = append(d.wfMissing, []byte(k))
	}
	err = s.scanChunks("repair indexes", bucketSearch, func(k, v []byte) {
		if !wantSearch[string(k)] {
			d.searchExtra = append(d.searchExtra, k)
		} else if readIndexEntry(k, v) == nil {
			delete(wantSearch, string(k))
		}
	})
	if err != nil {
		return nil, err
	}
	for k := range wantSearch {
		d.searchMissing = append(d.searchMissing, []byte(k))
	}
	return d, nil
}

// RepairIndexes rebuilds the derived indexes from the run records: it puts every entry a
// record calls for that is missing or damaged, deletes every entry no record calls for, and
// recounts every workflow head that miscounts. It returns one line per change, none when the
// indexes were sound. A damaged record is left to Check, and its entries as they are.
//
// The scan that finds the changes reads in short transactions, beside commits; each change
// is checked again against the record in the one write transaction that makes them all,
// synced when RepairIndexes returns (outside the log, as a purge: a later record the log
// replays finds the indexes as this left them).
func (s *Store) RepairIndexes() ([]string, error) {
	if err := s.usable(); err != nil {
		return nil, fmt.Errorf("repair indexes: %w", err)
	}
	d, err := s.diffIndexes()
	if err != nil {
		return nil, err
	}
	var out []string
	if !d.empty() {
		err = s.updateOutsideLog(func(tx *bolt.Tx) error {
			var err error
			out, err = d.apply(tx, nil)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("repair indexes: %w", err)
		}
	}
	counts, err := s.repairReadIndexes() // the run counts and the started index (counts.go)
	if err != nil {
		return nil, err
	}
	out = append(out, counts...)
	slices.Sort(out)
	return out, nil
}

// apply makes in tx each change d lists that the records in tx still call for.
func (d *indexDiff) apply(tx *bolt.Tx, out []string) ([]string, error) {
	runs, wfs := tx.Bucket(bucketRuns), tx.Bucket(bucketWorkflows)
	// current says what the record of run id calls for now; known is false when the record
	// is damaged, whose entries are left as they are.
	current := func(id []byte) (wf []byte, search map[string]bool, known bool) {
		v := runs.Get(id)
		if v == nil {
			return nil, nil, true
		}
		return recordIndexes(id, v)
	}
	for _, k := range d.wfMissing {
		wf, id, _ := splitWorkflowKey(k)
		if now, _, _ := current([]byte(id)); !bytes.Equal(now, k) || readIndexEntry(k, wfs.Get(k)) == nil {
			continue
		}
		if err := wfs.Put(k, indexEntry(k)); err != nil {
			return nil, err
		}
		d.heads[wf] = true
		out = append(out, fmt.Sprintf("workflow index: put run %q under workflow %q", id, wf))
	}
	for _, k := range d.wfExtra {
		wf, id, ok := splitWorkflowKey(k)
		if ok {
			if now, _, known := current([]byte(id)); !known || bytes.Equal(now, k) {
				continue
			}
		}
		if wfs.Get(k) == nil {
			continue
		}
		if err := wfs.Delete(k); err != nil {
			return nil, err
		}
		if ok {
			d.heads[wf] = true
		}
		out = append(out, fmt.Sprintf("workflow index: deleted run %q under workflow %q, which no run record calls for", id, wf))
	}
	for _, wf := range sortedKeys(d.heads) {
		line, err := recountHead(wfs, wf)
		if err != nil {
			return nil, err
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return d.applySearch(tx, current, out)
}

// applySearch is apply's part for the search index.
func (d *indexDiff) applySearch(tx *bolt.Tx, current func([]byte) ([]byte, map[string]bool, bool), out []string) ([]string, error) {
	if len(d.searchMissing)+len(d.searchExtra) == 0 {
		return out, nil
	}
	b, err := tx.CreateBucketIfNotExists(bucketSearch)
	if err != nil {
		return nil, err
	}
	for _, k := range d.searchMissing {
		id := searchKeyRun(k)
		if _, now, _ := current(id); !now[string(k)] || readIndexEntry(k, b.Get(k)) == nil {
			continue
		}
		if err := b.Put(k, indexEntry(k)); err != nil {
			return nil, err
		}
		out = append(out, "search index: put "+searchKeyText(k))
	}
	for _, k := range d.searchExtra {
		if id := searchKeyRun(k); id != nil {
			if _, now, known := current(id); !known || now[string(k)] {
				continue
			}
		}
		if b.Get(k) == nil {
			continue
		}
		if err := b.Delete(k); err != nil {
			return nil, err
		}
		out = append(out, "search index: deleted "+searchKeyText(k)+", which no run record calls for")
	}
	return out, nil
}

// recountHead sets workflow wf's head to the number of its entries (deletes it when there are
// none) and says so when that changed it.
func recountHead(wfs *bolt.Bucket, wf string) (string, error) {
	prefix := workflowPrefix(wf)
	var n uint64
	c := wfs.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) > len(prefix) {
			n++
		}
	}
	v := wfs.Get(prefix)
	if h, err := readIndexHead(prefix, v); v != nil && err == nil && h == n && n > 0 {
		return "", nil
	}
	if n == 0 {
		if v == nil {
			return "", nil
		}
		if err := wfs.Delete(prefix); err != nil {
			return "", err
		}
		return fmt.Sprintf("workflow index: deleted the head of workflow %q, which has no run", wf), nil
	}
	if err := wfs.Put(prefix, indexHead(prefix, n)); err != nil {
		return "", err
	}
	return fmt.Sprintf("workflow index: workflow %q counts %d run(s)", wf, n), nil
}

// searchKeyRun is the run id at the end of a search index key, nil for a malformed key.
func searchKeyRun(k []byte) []byte {
	_, _, _, id, ok := splitSearchKey(k)
	if !ok {
		return nil
	}
	return []byte(id)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
