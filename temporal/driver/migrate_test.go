package driver

import (
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/temporal/wire"
)

// migrateBase ran a, waits for go, then ends with a's output.
const migrateBase = sim.Head + `steps:
  - {id: a, activity: p.echo, with: 1}
  - {id: wait, wait_for_signal: go}
output: "${{ [steps.a.output] }}"
`

// TestMigrateSignalMovesAfterTheCheck: a migrate signal moves a Temporal-hosted run to a text
// that takes every decision its history records: WorkflowMigrated joins the history where the
// signal arrived, the run goes on under the new text (its added step runs, its output is the
// new one) and the history replays whole on it. A text the history parts from, an invalid
// text or another workflow's leave the run on its own text, and the verdict query says why.
func TestMigrateSignalMovesAfterTheCheck(t *testing.T) {
	added := strings.Replace(migrateBase, "output: \"${{ [steps.a.output] }}\"", "  - {id: b, activity: p.echo, with: 2}\noutput: \"${{ [steps.a.output, steps.b.output] }}\"", 1)
	inserted := strings.Replace(migrateBase, "  - {id: a,", "  - {id: z, activity: p.echo, with: 0}\n  - {id: a,", 1)
	cases := []struct {
		name, src string
		moved     bool
		output    string
		verdict   func(wire.MigrateVerdict) bool
	}{
		{"a step added after the run's position", added, true, `[1,2]`,
			func(v wire.MigrateVerdict) bool { return v.Moved && v.ToSHA256 == history.SpecSHA256([]byte(added)) }},
		{"a step inserted before what ran", inserted, false, `[1]`,
			func(v wire.MigrateVerdict) bool {
				return !v.Moved && v.Divergence != nil && v.Divergence.Step == "steps[0]" && v.Divergence.Recorded == string(history.ActivityScheduled)
			}},
		{"the same text", migrateBase, false, `[1]`, func(v wire.MigrateVerdict) bool { return v.Already && !v.Moved }},
		{"an invalid text", migrateBase + "bogus: 1\n", false, `[1]`,
			func(v wire.MigrateVerdict) bool { return !v.Moved && strings.Contains(v.Error, "invalid") }},
		{"another workflow", strings.Replace(migrateBase, "name: ", "name: other", 1), false, `[1]`,
			func(v wire.MigrateVerdict) bool { return !v.Moved && strings.Contains(v.Error, "is workflow") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, p := newEnv(t)
			e.RegisterDelayedCallback(func() {
				e.SignalWorkflow(wire.MigrateSignalName, wire.Migrate{ID: "m1", Source: c.src, File: "/flows/new.wend.yaml", By: "ann"})
				e.SignalWorkflow(wire.SignalName, wire.Signal{Name: "go", SignalID: "g"})
			}, time.Minute)
			evs := run(t, e, startInput(migrateBase, nil, nil)) // checkHistory replays it on its current text
			if got := output(t, e); got != c.output {
				t.Fatalf("output %s, want %s", got, c.output)
			}
			moves := ofType(evs, history.WorkflowMigrated)
			if c.moved != (len(moves) == 1) || len(moves) > 1 {
				t.Fatalf("%d WorkflowMigrated, moved %v", len(moves), c.moved)
			}
			if c.moved {
				m, err := history.DataOf[history.Migration](moves[0])
				if err != nil || m.By != "ann" || m.SpecSource != c.src || m.FromSHA256 != history.SpecSHA256([]byte(migrateBase)) {
					t.Fatalf("migration %+v %v", m, err)
				}
				// It lands where the signal arrived: after a's completion, before the go signal.
				if i := indexOf(evs, moves[0]); evs[i-1].Type != history.ActivityCompleted || evs[i+1].Type != history.SignalReceived {
					t.Fatalf("WorkflowMigrated between %s and %s", evs[i-1].Type, evs[i+1].Type)
				}
				if n := len(p.triesOf("echo")); n != 2 {
					t.Fatalf("%d echo tries, want a's and the added b's", n)
				}
			}
			q, err := e.QueryWorkflow(wire.QueryMigration, "m1")
			if err != nil {
				t.Fatal(err)
			}
			var v wire.MigrateVerdict
			if err := q.Get(&v); err != nil {
				t.Fatal(err)
			}
			if !v.Seen || !c.verdict(v) {
				t.Fatalf("verdict %+v", v)
			}
			if q, err = e.QueryWorkflow(wire.QueryMigration, "unknown"); err != nil || q.Get(&v) != nil || v.Seen {
				t.Fatalf("an unknown migration's verdict: %+v %v", v, err)
			}
		})
	}
}

func indexOf(evs []history.Event, ev history.Event) int {
	for i := range evs {
		if evs[i].Seq == ev.Seq {
			return i
		}
	}
	return -1
}
