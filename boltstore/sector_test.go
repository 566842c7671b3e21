package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// sectorSize is the most a disk writes atomically: a power loss can leave a page with some of
// its sectors written and the others old or, on some disks, zeroed.
const sectorSize = 512

// sampleSeed picks the sectors the default run tears besides the page headers.
const sampleSeed = 1729

// outcome is what became of one torn sector. When several checks report a tear, the first of
// panicked, byCheck, byCRC in this order names it.
type outcome int

const (
	noEffect outcome = iota // nothing reported, and every read equals the original's
	byCheck                 // a page-level check: bbolt's (Open, tx.Check) or Open's walk of the keys
	byCRC                   // a record-level check: event checksum and seq, history.Check, decoding, index, schema
	panicked                // bbolt panicked (or faulted) and wend made an error of it
	silent                  // a read differs from the original's and nothing reported it
)

var outcomeNames = [...]string{"no_effect", "detected_by_check", "detected_by_crc", "panics", "silent"}

// TestTornSector (docs/reliability.md A3): a history file with one 512-byte sector zeroed, in
// turn each sector of each page, fails to open or opens, and then either reads back exactly as
// before or is reported by Check or by the read itself. The process stays up: each of bbolt's
// panics comes back as an error. Under -tags soak (or WEND_SECTORS=all) every sector is torn;
// otherwise the first of each page (the page header) and a seeded sample of the others. The
// file's layout varies a little from run to run (bbolt's hashmap freelist hands out free pages in
// map order), and so do the counts; silent stays 0.
func TestTornSector(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	// bbolt grows a small file to its mmap size, a power of two: 64 pages here.
	small := Options{InitialMmapSize: 64 << 10}
	ids := buildTornHistory(t, src, small)
	keepOnFailure(t, src, sampleSeed) // with the page and sector named, enough to redo a trial
	orig, err := os.ReadFile(src)
	must(t, err)
	pageSize := int(binary.LittleEndian.Uint32(orig[metaPageSize:]))
	pages := len(orig) / pageSize
	if pages < 64 || pages > 256 {
		t.Fatalf("history file has %d pages, want 64 to 256", pages)
	}
	s := openAt(t, src, small)
	want, err := readAll(s, ids)
	must(t, err)
	must(t, s.Close())

	offs, sweep := tornOffsets(pageSize, pages)
	var counts [silent + 1]int
	var first [silent + 1]string
	path := filepath.Join(dir, "torn.db")
	b := slices.Clone(orig)
	for _, off := range offs {
		copy(b, orig)
		clear(b[off : off+sectorSize])
		must(t, os.WriteFile(path, b, 0o600))
		o, why := tearOne(t, path, small, ids, want)
		at := fmt.Sprintf("page %d sector %d", off/pageSize, off%pageSize/sectorSize)
		counts[o]++
		if first[o] == "" {
			first[o] = at + ": " + why
		}
		if o == silent {
			t.Errorf("%s: %s", at, why)
		}
	}
	for o, ex := range first[byCheck:] {
		if ex != "" {
			t.Logf("first %s: %s", outcomeNames[byCheck+outcome(o)], ex)
		}
	}
	fmt.Printf("RELIABILITY suite=boltstore-torn-sector trials=%d no_effect=%d detected_by_check=%d detected_by_crc=%d panics=%d silent=%d pages=%d high_water=%d sweep=%s\n",
		len(offs), counts[noEffect], counts[byCheck], counts[byCRC], counts[panicked], counts[silent],
		pages, highWater(orig, pageSize), sweep)
}

// tornOffsets returns the file offsets of the sectors to tear: all of them under -tags soak or
// with WEND_SECTORS=all, else the first sector of every page and about one in eight of the
// others, the same ones on every run. It also names the choice for the figures line.
func tornOffsets(pageSize, pages int) ([]int, string) {
	per := pageSize / sectorSize
	full := soak || os.Getenv("WEND_SECTORS") == "all"
	rng := rand.New(rand.NewPCG(sampleSeed, 0))
	var offs []int
	for p := range pages {
		for sec := range per {
			if full || sec == 0 || rng.IntN(per) == 0 {
				offs = append(offs, p*pageSize+sec*sectorSize)
			}
		}
	}
	if full {
		return offs, "full"
	}
	return offs, fmt.Sprintf("sample seed=%d", sampleSeed)
}

// highWater is the number of pages in use: the larger high-water mark of the two meta pages.
func highWater(b []byte, pageSize int) uint64 {
	const metaPgid = metaOffset + 40
	return max(binary.LittleEndian.Uint64(b[metaPgid:]), binary.LittleEndian.Uint64(b[pageSize+metaPgid:]))
}

// buildTornHistory writes the history the sweep tears: runs of two workflows with events of
// mixed sizes (a few over a page: overflow pages), a task per run replaced at each step, half
// of the runs closed, and two just started (their events few enough to be stored inline in the
// events bucket's page). It returns the run ids.
func buildTornHistory(t *testing.T, path string, opts Options) []string {
	t.Helper()
	s, err := Open(path, opts)
	must(t, err)
	rng := rand.New(rand.NewPCG(sampleSeed, 1))
	var runs []history.Run
	var ids []string
	for i := range 8 {
		u := storetest.Started(fmt.Sprintf("wf-%d", i%2), fmt.Sprintf("run-%d", i), t0.Add(time.Duration(i)*time.Minute))
		commitRun(t, s, u)
		runs, ids = append(runs, u.Run), append(ids, u.Run.RunID)
	}
	for step := range 18 {
		for i, r := range runs {
			if i >= 6 && step > 0 {
				continue
			}
			u := storetest.Next(r, history.ActivityCompleted, 1)
			n := rng.IntN(300)
			if rng.IntN(10) == 0 {
				n = 4000 + rng.IntN(3000)
			}
			u.Events[0].Data = payload(n)
			task := history.Task{ID: fmt.Sprintf("%s-t%d", r.RunID, step), RunID: r.RunID, Kind: history.TaskActivity, AvailableAt: t0}
			c := history.Commit{Runs: []history.RunUpdate{u}, PutTasks: []history.Task{task}}
			if step > 0 {
				c.DeleteTasks = []string{fmt.Sprintf("%s-t%d", r.RunID, step-1)}
			}
			must(t, s.Commit(t.Context(), c))
			runs[i] = u.Run
		}
	}
	for i := 0; i < 6; i += 2 {
		u := storetest.Next(runs[i], history.WorkflowCompleted, 1)
		u.Run.Status, u.Run.ClosedReason, u.Run.ClosedAt = history.StatusCompleted, history.ClosedCompleted, t0.Add(time.Hour)
		commitRun(t, s, u)
	}
	must(t, s.Close())
	return ids
}

// readBack is what the public API returns of a history.
type readBack struct {
	Runs   []history.Run
	ByWF   map[string][]history.Run
	Each   map[string]history.Run
	Events map[string][]history.Event
	Tasks  []history.Task
}

// readAll reads the run list (all, and by workflow), each run's record and events, and the
// tasks, going on past errors.
func readAll(s *Store, ids []string) (readBack, error) {
	rb := readBack{ByWF: map[string][]history.Run{}, Each: map[string]history.Run{}, Events: map[string][]history.Event{}}
	var errs []error
	keep := func(err error) { errs = append(errs, err) }
	var err error
	rb.Runs, err = s.Runs(history.RunFilter{})
	keep(err)
	for _, wf := range []string{"wf-0", "wf-1"} {
		rb.ByWF[wf], err = s.Runs(history.RunFilter{WorkflowID: wf})
		keep(err)
	}
	for _, id := range ids {
		rb.Each[id], err = s.Run(id)
		keep(err)
		rb.Events[id], err = s.Events(id, 0)
		keep(err)
	}
	rb.Tasks, err = s.Tasks()
	keep(err)
	return rb, errors.Join(errs...)
}

// tearOne opens a torn copy, checks it and reads it back, and says what became of the tear and
// why. A panic reaching it is one wend let through: the test fails.
func tearOne(t *testing.T, path string, opts Options, ids []string, want readBack) (o outcome, why string) {
	t.Helper()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: panic escaped: %v", path, r)
			o, why = panicked, fmt.Sprint(r)
		}
	}()
	s, err := Open(path, opts)
	if errors.Is(err, ErrInUse) {
		t.Fatalf("an earlier trial left the file locked: %v", err)
	}
	if err != nil {
		return worst(report(err.Error(), errors.Is(err, ErrNotWend)))
	}
	defer s.Close()
	ps, err := s.Check()
	must(t, err)
	var found []finding
	for _, p := range ps {
		found = append(found, report(p, !strings.HasPrefix(p, "bbolt: ")))
	}
	got, err := readAll(s, ids)
	if err != nil {
		found = append(found, report(err.Error(), true))
	}
	if len(found) > 0 {
		return worst(found...)
	}
	if !reflect.DeepEqual(got, want) {
		return silent, "reads differ from the original's"
	}
	return noEffect, ""
}

type finding struct {
	o   outcome
	msg string
}

// report classifies one reported problem: a panic made an error, by guard ("(bbolt: <value>)")
// or by bbolt's tx.Check itself ("panic: ..." or a runtime error's text); else a record-level
// (app) or page-level problem.
func report(msg string, app bool) finding {
	switch {
	case strings.Contains(msg, "(bbolt: "), strings.Contains(msg, "bbolt: panic: "), strings.Contains(msg, "runtime error: "):
		return finding{panicked, msg}
	case app:
		return finding{byCRC, msg}
	}
	return finding{byCheck, msg}
}

// worst returns the outcome that names a tear one or more checks reported.
func worst(fs ...finding) (outcome, string) {
	best := fs[0]
	for _, f := range fs[1:] {
		if f.o > best.o {
			best = f
		}
	}
	return best.o, best.msg
}
