package export_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/interpreter/sim"
)

// busySpec makes an open run with something of every pending kind: a try that timed out and
// waits for its retry, a signal no step takes, the run's deadline timer, a signal wait.
const busySpec = sim.Head + `
timeouts: {run: 1h}
steps:
  - parallel:
      - {id: fetch, activity: p.fetch, retry: {tries: 3, backoff: [1m]}, timeout: 30s}
      - {wait_for_signal: approve}
`

func busyRun(t *testing.T) *sim.Sim {
	s := sim.New(t, busySpec, map[string]any{"url": "https://example.com/a"})
	s.Signal("unrelated", map[string]any{"x": 1})
	s.Now = sim.T0.Add(30 * time.Second)
	s.Step(func(string, any, int) (any, *history.Failure) {
		return nil, &history.Failure{Category: history.CategoryTimeout, PropagationKind: "timeout", Type: "timeout",
			Message: "attempt 1 exceeded its timeout"}
	})
	return s
}

const nestedSpec = sim.Head + `
steps:
  - id: ship
    parallel:
      - activity: p.notify
      - steps: [{activity: p.pick}, {activity: p.wrap}]
  - id: pack
    for_each: [1, 2]
    steps:
      - activity: p.weigh
      - {id: label, activity: p.label}
`

func render(t *testing.T, s *sim.Sim) string {
	t.Helper()
	var b bytes.Buffer
	if err := export.RenderNamed(&b, exportOf(t, s), s.W.StepIDs()); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRenderGolden(t *testing.T) {
	for name, drive := range map[string]func(t *testing.T) *sim.Sim{
		"nonretryable": func(t *testing.T) *sim.Sim {
			s := sim.New(t, chargeSpec, nil)
			s.RunActivities(declined)
			return s
		},
		"saga": func(t *testing.T) *sim.Sim {
			s := sim.New(t, sagaSpec, nil)
			s.RunActivities(sagaAnswers)
			s.Now = sim.T0.Add(time.Minute)
			s.Cancel("user left")
			s.RunActivities(sagaAnswers)
			return s
		},
		"open": busyRun,
		// Nested steps are named by id and place : ship › branch 2 › step 2,
		// pack[1] › label; the JSON export keeps the paths.
		"nested": func(t *testing.T) *sim.Sim {
			s := sim.New(t, nestedSpec, nil)
			s.RunActivities(func(string, any, int) (any, *history.Failure) { return "ok", nil })
			return s
		},
		// A failure its state-only catch handled says caught (timeline and failures), and a
		// message's newline and tab stay escaped in their one-line cells.
		"caught": func(t *testing.T) *sim.Sim {
			s := sim.New(t, sim.Head+`
steps:
  - id: charge
    activity: p.charge
    catch: {steps: [], set: {declined: true}}
  - {id: after, activity: p.after}
`, nil)
			s.RunActivities(func(name string, in any, _ int) (any, *history.Failure) {
				if name == "charge" {
					return nil, &history.Failure{Category: history.CategoryActivity, Type: "Declined",
						Message: "card declined\nby the bank\tcode 51", NonRetryable: true}
				}
				return in, nil
			})
			return s
		},
		"timedout": func(t *testing.T) *sim.Sim {
			s := busyRun(t)
			s.FireTimers(sim.T0.Add(2 * time.Hour))
			return s
		},
	} {
		t.Run(name, func(t *testing.T) {
			golden(t, name+".show.txt", []byte(render(t, drive(t))))
		})
	}
}

// The marks a person scans for must be there, whatever the layout becomes.
func TestRenderShowsFailureMarks(t *testing.T) {
	s := sim.New(t, chargeSpec, nil)
	s.RunActivities(declined)
	out := render(t, s)
	for _, want := range []string{
		"status    failed\n",
		"CardDeclined: card declined [activity/activity, non-retryable] at charge #2",
		"charge  p.charge  failed  NON-RETRYABLE",
		"retry: try 2 after 1s backoff",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
	// Exactly the two non-retryable failures (ActivityFailed, WorkflowFailed) carry the mark.
	section := out[strings.Index(out, "\nfailures\n"):]
	section = section[:strings.Index(section[1:], "\n\n")+1]
	if n := strings.Count(section, "NON-RETRYABLE"); n != 2 {
		t.Errorf("%d non-retryable marks in failures:\n%s", n, section)
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n--; w.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestRenderReportsWriteErrors(t *testing.T) {
	s := sim.New(t, chargeSpec, nil)
	s.RunActivities(declined)
	doc := exportOf(t, s)
	if err := export.Render(&failWriter{n: 3}, doc); err == nil || err.Error() != "disk full" {
		t.Fatalf("Render on a failing writer: %v", err)
	}
}
