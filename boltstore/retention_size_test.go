package boltstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// retentionSim is a simulated schedule under retention: perDay tiny closed runs a day (a
// started and a completed event each, committed an hour's worth at a time), and once a day
// the runs closed more than keep before that day purged through PurgeCandidates and PurgeRuns,
// as serve's retention does.
type retentionSim struct {
	days, perDay int
	keep         time.Duration
}

// retentionPoint is the database file after a simulated day, at a checkpoint.
type retentionPoint struct {
	day       int
	size      int64 // the file's size in bytes (bbolt grows it in steps)
	highWater int64 // bytes up to bbolt's highest page in use (Tx.Size), the part a step holds
	feed      int64 // bytes of the change feed's pages, which grow to its own bound (changeFeedMax), purges or not
	freePages int   // bbolt's free and pending pages (DB.Stats)
	live      int   // runs in the store
}

// run simulates r on a new store at path and calls at after every simulated day; it leaves
// the store closed.
func (r retentionSim) run(tb testing.TB, path string, at func(retentionPoint)) {
	tb.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	perCommit := max(r.perDay/24, 1)
	live := 0
	for day := range r.days {
		dayStart := t0.Add(time.Duration(day) * 24 * time.Hour)
		var c history.Commit
		for i := range r.perDay {
			at := dayStart.Add(time.Duration(i) * 24 * time.Hour / time.Duration(r.perDay))
			c.Runs = append(c.Runs, tinyClosedRun(fmt.Sprintf("run-%04d-%05d", day, i), at))
			if len(c.Runs) == perCommit || i == r.perDay-1 {
				if err := s.Commit(ctx, c); err != nil {
					tb.Fatal(err)
				}
				c = history.Commit{}
			}
		}
		live += r.perDay
		cutoff := dayStart.Add(24 * time.Hour).Add(-r.keep)
		cands, err := s.PurgeCandidates(func(run history.Run) bool { return run.ClosedAt.Before(cutoff) })
		if err != nil {
			tb.Fatal(err)
		}
		ids := make([]string, len(cands))
		for i, run := range cands {
			ids[i] = run.RunID
		}
		purged, err := s.PurgeRuns(ctx, ids, nil)
		if err != nil || len(purged) != len(ids) {
			tb.Fatalf("day %d: purged %d of %d: %v", day, len(purged), len(ids), err)
		}
		live -= len(purged)
		// Measured at a checkpoint: between two, the day's commits are in the log and bbolt's
		// open transaction, not yet in the file, and a day without a purge may have none.
		if err := s.settle(); err != nil {
			tb.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			tb.Fatal(err)
		}
		var hw, feed int64
		if err := s.db.View(func(tx *bolt.Tx) error {
			hw = tx.Size()
			st := tx.Bucket(bucketChanges).Stats()
			feed = int64(st.BranchPageN+st.BranchOverflowN+st.LeafPageN+st.LeafOverflowN) * int64(s.db.Info().PageSize)
			return nil
		}); err != nil {
			tb.Fatal(err)
		}
		bs := s.db.Stats()
		at(retentionPoint{day: day + 1, size: st.Size(), highWater: hw, feed: feed, freePages: bs.FreePageN + bs.PendingPageN, live: live})
	}
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
}

// tinyClosedRun is a run an every-minute schedule leaves: started at at, completed a second later.
func tinyClosedRun(id string, at time.Time) history.RunUpdate {
	u := storetest.Started("sched-"+id, id, at)
	end := storetest.Next(u.Run, history.WorkflowCompleted, 1)
	end.Events[0].Step = ""
	end.Events[0].Time = at.Add(time.Second)
	u.Events = append(u.Events, end.Events...)
	u.Run = end.Run
	u.Run.Status, u.Run.ClosedReason = history.ClosedBy(end.Events[0])
	u.Run.ClosedAt = end.Events[0].Time
	return u
}

// TestRetentionBoundsFileSize: under retention the file stops growing once the kept window is
// full, because purged pages are reused. 60 simulated days at 144 runs a day, 7 days kept: the
// pages in use (Tx.Size, less the change feed's) and the file after day 60 are less than 25% more than after day 30.
// Without purge the pages in use about double; the file, grown by bbolt in 16 MiB steps at
// this size, would not show it, hence the pages.
func TestRetentionBoundsFileSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	sim := retentionSim{days: 60, perDay: 144, keep: 7 * 24 * time.Hour}
	var at30, at60 retentionPoint
	sim.run(t, path, func(p retentionPoint) {
		switch p.day {
		case 30:
			at30 = p
		case 60:
			at60 = p
		}
	})
	if want := 8 * 144; at60.live > want || at60.live < 7*144 {
		t.Fatalf("live runs after day 60 = %d, want 7 to 8 days' worth (%d)", at60.live, want)
	}
	// Less the change feed's pages: it fills up to its own bound over these days (a commit and
	// a purge of each run), which a file smaller by the rest shows as a larger share.
	if in30, in60 := at30.highWater-at30.feed, at60.highWater-at60.feed; in60 > in30*125/100 {
		t.Fatalf("pages in use but the change feed's grew from %d bytes after day 30 to %d after day 60 (more than 25%%): purged pages are not reused", in30, in60)
	}
	if at60.size > at30.size*125/100 {
		t.Fatalf("file grew from %d bytes after day 30 to %d after day 60 (more than 25%%): purged pages are not reused", at30.size, at60.size)
	}
	res, err := Compact(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.After > res.Before {
		t.Fatalf("compaction grew the file from %d to %d bytes", res.Before, res.After)
	}
}

// BenchmarkRetentionYear is docs/performance.md's retention figure: a year of an `every: 1m`
// schedule (1,440 tiny runs a day, committed 60 to a commit) at 7 days' retention, the file's
// size and bbolt's free pages logged at the end of every simulated week, then Compact.
// WEND_RETENTION_DAYS shortens it; WEND_RETENTION_DAILY=1 logs every day.
//
//	go test -run '^$' -bench RetentionYear -benchtime 1x -v ./boltstore/
func BenchmarkRetentionYear(b *testing.B) {
	days := 365
	if v, err := strconv.Atoi(os.Getenv("WEND_RETENTION_DAYS")); err == nil && v > 0 {
		days = v
	}
	for range b.N {
		path := filepath.Join(b.TempDir(), "wend.db")
		sim := retentionSim{days: days, perDay: 1440, keep: 7 * 24 * time.Hour}
		start := time.Now()
		var last retentionPoint
		sim.run(b, path, func(p retentionPoint) {
			last = p
			if p.day%7 == 0 || p.day == days || os.Getenv("WEND_RETENTION_DAILY") != "" {
				b.Logf("day %3d: %6.2f MiB file, %6.2f MiB up to the highest page, %5d free pages, %6d live runs", p.day, float64(p.size)/(1<<20), float64(p.highWater)/(1<<20), p.freePages, p.live)
			}
		})
		res, err := Compact(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("after compact: %.2f MiB (from %.2f MiB); simulated %d days in %s", float64(res.After)/(1<<20), float64(res.Before)/(1<<20), days, time.Since(start).Round(time.Second))
		b.ReportMetric(float64(last.size)/(1<<20), "final-MiB")
		b.ReportMetric(float64(res.After)/(1<<20), "compacted-MiB")
	}
}
