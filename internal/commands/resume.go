package commands

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
)

var resumeCmd = &command{
	summary: "drive every unfinished run until it closes or waits for outside input",
	usage: `Usage: wend resume [--db PATH]

Resumes every unfinished run from its committed history and drives them all until each is
settled, then exits. A run is settled when it has closed, or when its history shows nothing
this process can make progress on by itself:
  - no activity scheduled and unfinished (in flight or waiting out a retry backoff),
  - no timer pending (delays, and the timeouts of waits: a wait with a timeout is not
    settled until the timeout fires or the wait ends),
  - every run_workflow child has started and is itself open and settled,
  - every wait_for_workflow names a workflow that is open and settled or does not exist,
so what is left is waiting for a signal or for a workflow someone else has to start. Runs
that cannot be replayed (for example a spec this build no longer reads) are listed and
skipped. While it runs, other wend commands reach this process over the control socket.
When another wend process holds the database, that process drives the runs, and this
command waits for the same condition through its socket.

At start, each open run is listed on stderr with what it waits for and when its next timer
fires ("waiting for signal shipped, run timeout in 1h59m"), since a run whose next event is
hours off otherwise looks hung; Ctrl-C is safe at any time. Tasks the histories need but the
database lacks (lost, or set aside as damaged) are rebuilt first, as 'wend serve' does.
Each run still open at the end is printed on stdout with what it waits for.

Flags:
  --db PATH   database file (default $WEND_DB, else .wend/wend.db)

Exit codes: 0 every run settled, 1 some run could not be resumed or the engine stopped on
a failed commit, 2 usage or I/O error, 130 interrupted (the runs resume later).
`,
	run: runResume,
}

// settlePoll is how often resume looks at the histories for the settled condition.
const settlePoll = 100 * time.Millisecond

func runResume(e *env, args []string) int {
	fs := flag.NewFlagSet("resume", flag.ContinueOnError)
	db := dbFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "resume", "%s", flagError(err))
	}
	if len(pos) > 0 {
		return usageError(e, "resume", "unexpected argument %q", pos[0])
	}
	path := dbPath(e, *db)
	var b backend
	skip := map[string]bool{}
	engineErr := func() error { return nil }
	d, err := startDriver(e, path)
	switch {
	case errors.Is(err, boltstore.ErrInUse):
		if b, err = openBackend(e, path, readRuns); err != nil {
			fmt.Fprintf(e.stderr, "wend resume: %v\n", err)
			return exitUsage
		}
		fmt.Fprintln(e.stderr, "wend resume: another wend process holds the database and drives its runs; waiting for them to settle")
	case err != nil:
		fmt.Fprintf(e.stderr, "wend resume: %v\n", err)
		return exitUsage
	default:
		defer d.close()
		b = local{server.New(d.Engine, d.Store), func() error { return nil }}
		for _, bl := range d.blocked {
			id, _, _ := strings.Cut(bl, " ")
			skip[id] = true
		}
		engineErr = d.Engine.Err
	}
	defer b.Close()
	announce(e, b, skip, time.Now())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for {
		open, busy, err := settled(b, skip)
		if err != nil {
			fmt.Fprintf(e.stderr, "wend resume: %v\n", err)
			return exitUsage
		}
		if !busy {
			return reportSettled(e, b, open, len(skip))
		}
		if err := engineErr(); err != nil {
			fmt.Fprintf(e.stderr, "wend resume: %v\n", err)
			return exitFailed
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(e.stderr, "wend resume: interrupted; the runs resume later")
			return exitInterrupted
		case <-time.After(settlePoll):
		}
	}
}

// settled checks every open run (but those in skip) against the settled condition of
// resume's help, returning the open runs and whether any is still busy.
func settled(b backend, skip map[string]bool) (open []history.Run, busy bool, err error) {
	runs, err := b.List(api.ListQuery{Status: history.StatusRunning}, 0)
	if err != nil {
		return nil, false, err
	}
	for _, r := range runs {
		if skip[r.RunID] {
			continue
		}
		open = append(open, r)
		p, err := b.Events(r.RunID, 0)
		if errors.Is(err, history.ErrNotFound) {
			continue // closed and gone meanwhile? look again next round
		}
		if err != nil {
			return nil, false, err
		}
		if !p.Run.Open() {
			return nil, true, nil // it closed since the list: look again
		}
		v, err := runview.Fold(p.Run, p.Events)
		if err != nil {
			continue // unreadable: nothing here can drive it (the engine lists it as blocked)
		}
		for _, w := range v.Pending() {
			if w.Kind == runview.WaitActivity || w.Kind == runview.WaitTimer {
				return nil, true, nil
			}
			if w.Kind != runview.WaitChild && w.Kind != runview.WaitWorkflow {
				continue
			}
			others, err := b.List(api.ListQuery{WorkflowID: w.WorkflowID}, 0)
			if err != nil {
				return nil, false, err
			}
			switch {
			case len(others) == 0 && w.Kind == runview.WaitChild:
				return nil, true, nil // the child is about to start
			case len(others) > 0 && !others[0].Open():
				return nil, true, nil // it closed; the news is on its way to the waiting run
			}
			// Open: it is checked in its own right in this loop. Missing: someone else's to start.
		}
	}
	return open, false, nil
}

func reportSettled(e *env, b backend, open []history.Run, blocked int) int {
	for _, r := range open {
		var waits []string
		if d, err := b.Show(r.RunID); err == nil {
			for _, w := range d.Waits {
				waits = append(waits, runview.WaitText(w, runview.StepNamer(d)))
			}
		}
		if len(waits) == 0 {
			waits = []string{"input the history does not name"}
		}
		fmt.Fprintf(e.stdout, "%s %s waiting for %s\n", r.WorkflowID, r.RunID, strings.Join(waits, "; "))
	}
	fmt.Fprintf(e.stderr, "wend resume: every run has closed or waits for a signal or another workflow (%d open)\n", len(open))
	if blocked > 0 {
		fmt.Fprintf(e.stderr, "wend resume: %d run(s) could not be resumed (listed above)\n", blocked)
		return exitFailed
	}
	return exitOK
}

// announce says, as resume starts, what each open run waits for and when its timers fire, and
// that Ctrl-C is safe: a run waiting hours for its next event must not look hung.
func announce(e *env, b backend, skip map[string]bool, now time.Time) {
	runs, err := b.List(api.ListQuery{Status: history.StatusRunning}, 0)
	if err != nil {
		return // the settle loop reports it
	}
	n := 0
	for _, r := range runs {
		if skip[r.RunID] {
			continue
		}
		waits, err := runWaits(b, r.RunID, now)
		if err != nil {
			continue
		}
		n++
		fmt.Fprintf(e.stderr, "wend resume: %s (run %s) waiting for %s\n", r.WorkflowID, r.RunID, waits)
	}
	if n > 0 {
		fmt.Fprintf(e.stderr, "wend resume: driving %s until each closes or waits for outside input; Ctrl-C is safe: the runs resume from their history later\n", plural(n, "open run"))
	}
}

// runWaits is what an open run waits for, in the few words announce prints: what it waits for,
// then the timers that end the wait.
func runWaits(b backend, runID string, now time.Time) (string, error) {
	d, err := b.Show(runID)
	if err != nil {
		return "", err
	}
	var waits, timers []string
	for _, w := range d.Waits {
		if w.Kind == runview.WaitTimer {
			timers = append(timers, waitsFor(w, now, runview.StepNamer(d)))
		} else {
			waits = append(waits, waitsFor(w, now, runview.StepNamer(d)))
		}
	}
	waits = append(waits, timers...)
	if len(waits) == 0 {
		waits = []string{"its next step"}
	}
	return strings.Join(waits, ", "), nil
}

// waitsFor is one wait in the few words announce prints.
func waitsFor(w runview.Wait, now time.Time, name func(path string) string) string {
	switch w.Kind {
	case runview.WaitSignal:
		return "signal " + w.Signal
	case runview.WaitTimer:
		what := strings.ReplaceAll(w.Purpose, "_", " ")
		if what == "" {
			what = "timer"
		}
		if left := w.Until.Sub(now); left > 0 {
			return fmt.Sprintf("%s in %s", what, roughly(left))
		}
		return what + " due now"
	case runview.WaitActivity:
		if left := w.Until.Sub(now); left > 0 {
			return fmt.Sprintf("activity %s (attempt %d) in %s", w.Activity, w.Attempt, roughly(left))
		}
		return fmt.Sprintf("activity %s (attempt %d)", w.Activity, w.Attempt)
	case runview.WaitChild:
		return "child workflow " + w.WorkflowID
	case runview.WaitWorkflow:
		return "workflow " + w.WorkflowID
	}
	return runview.WaitText(w, name)
}

// roughly is d to the second below a minute, else to the minute below it: "1h59m", "45s".
func roughly(d time.Duration) string {
	if d < time.Minute {
		return d.Truncate(time.Second).String()
	}
	return strings.TrimSuffix(d.Truncate(time.Minute).String(), "0s")
}
