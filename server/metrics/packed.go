package metrics

import (
	"encoding/binary"
	"errors"
	"maps"
	"math"
	"slices"
)

// A run's summary is kept packed: one byte slice without pointers instead of a struct of eight
// small maps. With 100,000 runs the maps made a heap of hundreds of megabytes that every
// garbage collection had to mark, a cost the serve's commits felt during scrapes; packed, the
// summaries are a few hundred bytes each that the collector never looks into. A summary is
// unpacked only to be taken off the sum, when its run changed or was purged.

// packedSummary is a packed runSummary; its header (name, status, last seq) is read without
// unpacking the rest.
type packedSummary []byte

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendCounts(b []byte, m map[string]int) []byte {
	b = binary.AppendUvarint(b, uint64(len(m)))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b = appendString(b, k)
		b = binary.AppendVarint(b, int64(m[k]))
	}
	return b
}

func appendCounts2(b []byte, m map[string]map[string]int) []byte {
	b = binary.AppendUvarint(b, uint64(len(m)))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b = appendString(b, k)
		b = appendCounts(b, m[k])
	}
	return b
}

// pack packs s.
func pack(s *runSummary) packedSummary {
	b := appendString(nil, s.name)
	b = appendString(b, s.status)
	b = binary.AppendUvarint(b, s.lastSeq)
	for _, n := range []int{s.nonRetryable, s.backlog.RetryingActivities, s.backlog.PendingActivities, s.backlog.PendingTimers, s.signals} {
		b = binary.AppendVarint(b, int64(n))
	}
	b = appendCounts(b, s.steps)
	b = appendCounts(b, s.failures)
	b = appendCounts2(b, s.attempts)
	b = appendCounts2(b, s.activities)
	return appendLatency(b, s.latency)
}

func appendLatency(b []byte, latency map[string]*stepHist) []byte {
	b = binary.AppendUvarint(b, uint64(len(latency)))
	for _, k := range slices.Sorted(maps.Keys(latency)) {
		h := latency[k]
		b = appendString(b, k)
		b = binary.AppendUvarint(b, h.count)
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(h.sum))
		b = binary.AppendUvarint(b, uint64(len(h.buckets)))
		for _, n := range h.buckets {
			b = binary.AppendUvarint(b, n)
		}
	}
	return b
}

var errPacked = errors.New("metrics: a packed summary is cut short")

// reader reads a packedSummary; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	n, w := binary.Uvarint(r.b)
	if w <= 0 {
		r.err, r.b = errPacked, nil
		return 0
	}
	r.b = r.b[w:]
	return n
}

func (r *reader) varint() int {
	n, w := binary.Varint(r.b)
	if w <= 0 {
		r.err, r.b = errPacked, nil
		return 0
	}
	r.b = r.b[w:]
	return int(n)
}

func (r *reader) string() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err, r.b = errPacked, nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) counts() map[string]int {
	m := map[string]int{}
	for n := r.uvarint(); n > 0 && r.err == nil; n-- {
		k := r.string()
		m[k] = r.varint()
	}
	return m
}

func (r *reader) counts2() map[string]map[string]int {
	m := map[string]map[string]int{}
	for n := r.uvarint(); n > 0 && r.err == nil; n-- {
		k := r.string()
		m[k] = r.counts()
	}
	return m
}

// header is the run's name, status and last seq.
func (p packedSummary) header() (name, status string, lastSeq uint64) {
	r := reader{b: p}
	name, status = r.string(), r.string()
	return name, status, r.uvarint()
}

// unpack reverses pack.
func (p packedSummary) unpack() (*runSummary, error) {
	r := reader{b: p}
	s := newRunSummary()
	s.name, s.status, s.lastSeq = r.string(), r.string(), r.uvarint()
	s.nonRetryable, s.backlog.RetryingActivities, s.backlog.PendingActivities, s.backlog.PendingTimers, s.signals =
		r.varint(), r.varint(), r.varint(), r.varint(), r.varint()
	s.steps, s.failures = r.counts(), r.counts()
	s.attempts, s.activities = r.counts2(), r.counts2()
	s.latency = r.latency()
	if r.err != nil {
		return nil, r.err
	}
	return s, nil
}

func (r *reader) latency() map[string]*stepHist {
	m := map[string]*stepHist{}
	for n := r.uvarint(); n > 0 && r.err == nil; n-- {
		k := r.string()
		h := &stepHist{count: r.uvarint()}
		if len(r.b) < 8 {
			r.err, r.b = errPacked, nil
			return m
		}
		h.sum = math.Float64frombits(binary.BigEndian.Uint64(r.b))
		r.b = r.b[8:]
		if nb := r.uvarint(); nb > 0 {
			if nb != uint64(len(stepBuckets)) {
				r.err, r.b = errPacked, nil
				return m
			}
			h.buckets = make([]uint64, 0, nb)
			for ; nb > 0 && r.err == nil; nb-- {
				h.buckets = append(h.buckets, r.uvarint())
			}
		}
		m[k] = h
	}
	return m
}

// sumFormat opens a packed sum: a sum kept by another format (an older wend's) is not read,
// and the summaries are made again.
const sumFormat = 2

// packTotals packs the raw sum t, which the store keeps beside the summaries (sums.go), and
// the runs whose commits were under way when it was taken (counters.go): their changes may
// be in the feed at or before the kept position, so a new process reads them again too.
func packTotals(t *totals, unsettled []string) []byte {
	b := []byte{sumFormat}
	b = binary.AppendUvarint(b, uint64(len(unsettled)))
	for _, id := range unsettled {
		b = appendString(b, id)
	}
	b = appendCounts2(b, t.runs)
	b = appendCounts2(b, t.failures)
	b = appendCounts(b, t.nonRetryable)
	b = appendCounts2(b, t.attempts)
	b = appendCounts2(b, t.activities)
	b = appendCounts(b, t.steps)
	for _, n := range []int{t.backlog.RetryingActivities, t.backlog.PendingActivities, t.backlog.PendingTimers, t.signals} {
		b = binary.AppendVarint(b, int64(n))
	}
	return appendLatency(b, t.latency)
}

// unpackTotals reverses packTotals.
func unpackTotals(b []byte) (*totals, []string, error) {
	if len(b) == 0 || b[0] != sumFormat {
		return nil, nil, errors.New("metrics: a kept sum of another format")
	}
	r := reader{b: b[1:]}
	var unsettled []string
	for n := r.uvarint(); n > 0 && r.err == nil; n-- {
		unsettled = append(unsettled, r.string())
	}
	t := newTotals()
	t.runs, t.failures, t.nonRetryable = r.counts2(), r.counts2(), r.counts()
	t.attempts, t.activities, t.steps = r.counts2(), r.counts2(), r.counts()
	t.backlog.RetryingActivities, t.backlog.PendingActivities, t.backlog.PendingTimers, t.signals = r.varint(), r.varint(), r.varint(), r.varint()
	t.latency = r.latency()
	if r.err == nil && len(r.b) > 0 {
		r.err = errors.New("metrics: a kept sum with bytes after its end")
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	return t, unsettled, nil
}
