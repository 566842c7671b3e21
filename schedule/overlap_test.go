package schedule

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// sim is a virtual clock and a fake engine: a run lasts runFor, a cancel closes it after
// cancelTakes (its compensations), a terminate closes it at once.
type sim struct {
	now                 time.Time
	runFor, cancelTakes time.Duration
	closeAt             map[string]time.Time
	log                 []string
}

func (s *sim) isOpen(id string) bool {
	at, ok := s.closeAt[id]
	return ok && s.now.Before(at)
}

func (s *sim) clock() string { return fmt.Sprintf("%ds", s.now.Unix()) }

// act does what the runner does after committing the state: stops, then starts.
func (s *sim) act(st *State) {
	for _, x := range st.Stopping {
		if !s.isOpen(x.WorkflowID) {
			continue
		}
		verb, at := "cancel", s.now.Add(s.cancelTakes)
		if x.Terminate {
			verb, at = "terminate", s.now
		}
		if at.Before(s.closeAt[x.WorkflowID]) {
			s.closeAt[x.WorkflowID] = at
		}
		s.log = append(s.log, fmt.Sprintf("%s %s@%s", verb, short(x.WorkflowID), s.clock()))
	}
	for _, f := range st.Starting {
		if _, ok := s.closeAt[f.WorkflowID]; ok {
			continue // start is idempotent by workflow id
		}
		s.closeAt[f.WorkflowID] = s.now.Add(s.runFor)
		s.log = append(s.log, fmt.Sprintf("start %s@%s", short(f.WorkflowID), s.clock()))
	}
	st.Stopping, st.Starting = nil, nil
}

// short turns "every-1970-01-01T00:02:00Z" into "120".
func short(id string) string {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(id, "every-"))
	if err != nil {
		return id
	}
	return fmt.Sprint(t.Unix())
}

// TestOverlapPolicies runs a schedule firing every minute whose runs take 150s, for six
// minutes of virtual time, under each overlap policy (Temporal's meanings).
func TestOverlapPolicies(t *testing.T) {
	cases := []struct {
		overlap Overlap
		want    string
		skipped uint64
	}{
		{Skip, "start 60@60s start 240@240s", 4},
		{BufferOne, "start 60@60s start 120@210s start 240@360s", 2},
		{BufferAll, "start 60@60s start 120@210s start 180@360s", 0},
		{AllowAll, "start 60@60s start 120@120s start 180@180s start 240@240s start 300@300s start 360@360s", 0},
		{CancelOther, "start 60@60s cancel 60@120s start 120@140s cancel 120@180s start 180@200s cancel 180@240s start 240@260s cancel 240@300s start 300@320s cancel 300@360s", 0},
		// Compensations that take longer than the interval: the run is asked to cancel once,
		// and the newest fire replaces the waiting one.
		{CancelOther + ":slow", "start 60@60s cancel 60@120s start 180@210s cancel 180@240s start 300@330s cancel 300@360s", 2},
		{TerminateOther, "start 60@60s terminate 60@120s start 120@120s terminate 120@180s start 180@180s terminate 180@240s start 240@240s terminate 240@300s start 300@300s terminate 300@360s start 360@360s", 0},
	}
	for _, c := range cases {
		t.Run(string(c.overlap), func(t *testing.T) {
			tm, err := NewTiming("", time.Minute, "")
			if err != nil {
				t.Fatal(err)
			}
			policy, slow, _ := strings.Cut(string(c.overlap), ":")
			d := Def{ID: "every", Timing: tm, Overlap: Overlap(policy)}
			s := &sim{now: time.Unix(0, 0), runFor: 150 * time.Second, cancelTakes: 20 * time.Second, closeAt: map[string]time.Time{}}
			if slow != "" {
				s.cancelTakes = 90 * time.Second
			}
			st := Init(s.now)
			for ; s.now.Unix() <= 360; s.now = s.now.Add(10 * time.Second) {
				Tick(d, &st, s.now, s.isOpen)
				s.act(&st)
			}
			if got := strings.Join(s.log, " "); got != c.want {
				t.Fatalf("%s:\n got  %s\n want %s", c.overlap, got, c.want)
			}
			if st.Counts.Skipped != c.skipped {
				t.Fatalf("skipped %d fires, want %d", st.Counts.Skipped, c.skipped)
			}
		})
	}
}

func TestCatchupWindowMissesOldFires(t *testing.T) {
	tm, _ := NewTiming("", time.Minute, "")
	d := Def{ID: "every", Timing: tm, Overlap: AllowAll, CatchupWindow: 150 * time.Second}
	st := Init(time.Unix(0, 0))
	// wend was down for ten minutes: fires at 60..600; those due over 150s ago are missed.
	Tick(d, &st, time.Unix(600, 0), nil)
	if st.Counts.Missed != 7 || st.Counts.Started != 3 {
		t.Fatalf("missed %d started %d, want 7 and 3 (450s, 540s... no: 480, 540, 600)", st.Counts.Missed, st.Counts.Started)
	}
	if got := short(st.Starting[0].WorkflowID); got != "480" {
		t.Fatalf("first started fire %s, want 480", got)
	}
}

func TestPausedScheduleLetsFiresPass(t *testing.T) {
	tm, _ := NewTiming("", time.Minute, "")
	d := Def{ID: "every", Timing: tm, Overlap: AllowAll, Paused: true}
	st := Init(time.Unix(0, 0))
	Tick(d, &st, time.Unix(300, 0), nil)
	if len(st.Starting) != 0 {
		t.Fatalf("a paused schedule started %v", st.Starting)
	}
	resume := false
	st.Paused = &resume
	Tick(d, &st, time.Unix(330, 0), nil)
	if len(st.Starting) != 0 {
		t.Fatalf("resuming fired the paused period: %v", st.Starting)
	}
	Tick(d, &st, time.Unix(360, 0), nil)
	if len(st.Starting) != 1 || short(st.Starting[0].WorkflowID) != "360" {
		t.Fatalf("after resume, starting %v, want the 360s fire", st.Starting)
	}
}

func TestTickBoundsFiresPerCall(t *testing.T) {
	tm, _ := NewTiming("", time.Second, "")
	d := Def{ID: "every", Timing: tm, Overlap: Skip}
	st := Init(time.Unix(0, 0))
	_, more := Tick(d, &st, time.Unix(5000, 0), func(string) bool { return true })
	if !more || st.Counts.Started+st.Counts.Skipped != MaxTickFires {
		t.Fatalf("more=%v handled %d, want true and %d", more, st.Counts.Started+st.Counts.Skipped, MaxTickFires)
	}
}

// TestBackfillThousandFires: a backfill of 1,000 minutes under allow_all starts 1,000 runs
// with the ids their calendar fires have, oldest first; a second backfill of the same range
// names the same runs.
func TestBackfillThousandFires(t *testing.T) {
	tm, _ := NewTiming("* * * * *", 0, "Europe/Paris")
	d := Def{ID: "minutely", Timing: tm, Overlap: Skip}
	st := Init(time.Unix(0, 0))
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	n, err := Backfill(d, &st, from, from.Add(1000*time.Minute), from, AllowAll)
	if err != nil || n != 1000 || len(st.Starting) != 1000 {
		t.Fatalf("backfill = %d, %v; starting %d; want 1000", n, err, len(st.Starting))
	}
	if st.Starting[0].WorkflowID != WorkflowID("minutely", from) || st.Starting[999].Nominal != from.Add(999*time.Minute) {
		t.Fatalf("first %s last %s", st.Starting[0].WorkflowID, st.Starting[999].Nominal)
	}
	if _, err := Backfill(d, &st, from, from.Add((MaxBackfill+1)*time.Minute), from, AllowAll); err == nil {
		t.Fatal("a backfill over MaxBackfill fires was taken")
	}
	if _, err := Backfill(d, &st, from, from, from, AllowAll); err == nil {
		t.Fatal("an empty range was taken")
	}
}

// TestLongOutageCostsNoCommitPerFire: a schedule firing every second, down for a year,
// counts its missed fires in one Tick (not one commit per fire) and starts the ones inside
// the window.
func TestLongOutageCostsNoCommitPerFire(t *testing.T) {
	tm, _ := NewTiming("", time.Second, "")
	d := Def{ID: "every", Timing: tm, Overlap: AllowAll, CatchupWindow: 10 * time.Second}
	st := Init(time.Unix(0, 0))
	now := time.Unix(365*24*3600, 0)
	_, more := Tick(d, &st, now, nil)
	if more || st.Counts.Started != 11 || st.Counts.Missed != uint64(now.Unix())-11 {
		t.Fatalf("more=%v started %d missed %d; want false, 11 (the last 10s and now), %d", more, st.Counts.Started, st.Counts.Missed, now.Unix()-11)
	}
	cron, _ := NewTiming("*/5 * * * *", 0, "Europe/Paris")
	d = Def{ID: "cron", Timing: cron, Overlap: Skip, CatchupWindow: time.Hour}
	st = Init(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	Tick(d, &st, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), nil)
	// A year of */5 is 365*24*12 wall times, less the 12 of the hour Paris skips in March,
	// which fire once, at 3:00, with the 3:00 fire itself.
	if got := st.Counts.Missed + st.Counts.Started + st.Counts.Skipped; got != 365*24*12-12 {
		t.Fatalf("a year of */5 fires handled as %d, want %d", got, 365*24*12-12)
	}
}

func TestBufferAllIsBounded(t *testing.T) {
	if Decide(BufferAll, 1, MaxBuffered) != Drop || Decide(BufferAll, 1, MaxBuffered-1) != Buffer {
		t.Fatal("buffer_all is not capped at MaxBuffered")
	}
}
