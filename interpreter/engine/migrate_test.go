package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// migrateCase is a run of one step kind parked in the middle of its work, the edit that
// holds for it and one that breaks it.
type migrateCase struct {
	kind   string
	body   string                               // steps of the file the run starts with, parked at a gate, a signal or a timer
	park   func(h *harness) bool                // the run is where the move happens
	goOn   func(h *harness, gate chan struct{}) // lets the run finish
	breaks [2]string                            // an edit of body that changes a recorded decision
	// compatEdit, when set, is the edit that holds (else a step appended after the body),
	// and want the output the run finishes with on the new text.
	compatEdit [2]string
	want       string
}

func gateCalled(n int) func(h *harness) bool {
	return func(h *harness) bool { return h.acts.count("gate") >= n }
}

func hasRecorded(typ history.EventType) func(h *harness) bool {
	return func(h *harness) bool {
		runs, _ := h.store.Runs(history.RunFilter{WorkflowID: "m"})
		return len(runs) > 0 && h.hasEvent(runs[0].RunID, typ)
	}
}

func release(_ *harness, gate chan struct{}) { close(gate) }

var migrateCases = []migrateCase{
	{kind: "sequence", body: "  - {id: a, activity: p.echo, with: 1}\n  - {id: g, activity: p.gate}\n",
		park: gateCalled(1), goOn: release, breaks: [2]string{"with: 1", "with: 2"}},
	{kind: "parallel", body: "  - id: par\n    parallel:\n      - {id: a, activity: p.echo, with: 1}\n      - {id: g, activity: p.gate}\n",
		park: gateCalled(1), goOn: release, breaks: [2]string{"{id: a, activity: p.echo, with: 1}\n      - {id: g, activity: p.gate}", "{id: g, activity: p.gate}\n      - {id: a, activity: p.echo, with: 1}"}},
	{kind: "for_each", body: "  - id: each\n    for_each: [1, 2]\n    steps: [{activity: p.gate, with: \"${{ item }}\"}]\n",
		park: gateCalled(1), goOn: release, breaks: [2]string{"[1, 2]", "[2, 1]"}},
	{kind: "wait_for_signal", body: "  - {id: a, activity: p.echo, with: 1}\n  - {id: w, wait_for_signal: go, timeout: 1h}\n",
		park: hasRecorded(history.TimerScheduled),
		goOn: func(h *harness, _ chan struct{}) {
			if err := h.e.Signal(context.Background(), "m", "go", nil); err != nil {
				h.t.Fatal(err)
			}
		}, breaks: [2]string{"timeout: 1h", "timeout: 2h"}},
	{kind: "delay", body: "  - {id: a, activity: p.echo, with: 1}\n  - {id: d, delay: 1m}\n",
		park: hasRecorded(history.TimerScheduled), goOn: func(*harness, chan struct{}) {}, breaks: [2]string{"delay: 1m", "delay: 2m"}},
	{kind: "child workflow", body: "  - {id: k, run_workflow: ./child.wend.yaml, with: {x: 1}}\n",
		park: gateCalled(1), goOn: release, breaks: [2]string{"x: 1", "x: 2"}},
	{kind: "compensation", body: "  - {id: a, activity: p.echo, with: 1, compensate_with: {activity: p.echo, with: undo}}\n  - {id: w, wait_for_signal: go, timeout: 1h}\n",
		park: hasRecorded(history.TimerScheduled),
		goOn: func(h *harness, _ chan struct{}) {
			if err := h.e.Cancel(context.Background(), "m", "stop"); err != nil {
				h.t.Fatal(err)
			}
		}, breaks: [2]string{"with: 1", "with: 2"}, compatEdit: [2]string{"with: undo", "with: undo-v2"}, want: "undo-v2"},
}

const migrateTail = "output: v1\n"

func (c migrateCase) files() (base, compat, broken string) {
	base = head + "steps:\n" + c.body + migrateTail
	if c.compatEdit[0] != "" {
		compat = strings.Replace(base, c.compatEdit[0], c.compatEdit[1], 1)
	} else {
		compat = head + "steps:\n" + c.body + "  - {id: z, activity: p.echo, with: moved}\noutput: \"${{ steps.z.output }}\"\n"
	}
	return base, compat, strings.Replace(base, c.breaks[0], c.breaks[1], 1)
}

// TestMigrateContinuesEachStepKind: a run of each step kind, parked at a try in flight, a
// signal wait, a timer or a child, moves to a file that holds for it and finishes on that
// file, in the same process and across a restart after the move; a file that breaks it is
// refused with where they part, and the run finishes on its old file.
func TestMigrateContinuesEachStepKind(t *testing.T) {
	for _, c := range migrateCases {
		for _, restart := range []bool{false, true} {
			name := c.kind
			if restart {
				name += "/restart after the move"
			}
			t.Run(name, func(t *testing.T) {
				h := newHarness(t)
				gate := make(chan struct{})
				h.acts.fns["gate"] = func(ctx context.Context, call history.ActivityCall) (json.RawMessage, error) {
					select {
					case <-gate:
						return json.RawMessage(`"opened"`), nil
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				h.write("child.wend.yaml", head+"steps: [{id: c, activity: p.gate}]\n")
				base, compat, broken := c.files()
				f := h.write("m.wend.yaml", base)
				h.start(f, "m", "null")
				waitFor(t, "the run parks at its "+c.kind+" step", func() bool { return c.park(h) })

				bad := h.write("broken.wend.yaml", broken)
				res := h.migrate("m", bad, false)
				if res.Moved || res.Divergence == nil {
					t.Fatalf("the breaking edit %q moved the run: %+v", c.breaks, res)
				}
				rec := h.onlyRun("m")
				if rec.SpecSHA256 != res.FromSHA256 || h.hasEvent(rec.RunID, history.WorkflowMigrated) {
					t.Fatalf("a refused move changed the run: %+v", rec)
				}

				good := h.write("compat.wend.yaml", compat)
				if dry := h.migrate("m", good, true); dry.Moved || dry.Divergence != nil {
					t.Fatalf("dry run: %+v", dry)
				}
				if h.hasEvent(rec.RunID, history.WorkflowMigrated) {
					t.Fatal("a dry run recorded a move")
				}
				res = h.migrate("m", good, false)
				if !res.Moved || res.Divergence != nil || res.FromSHA256 != rec.SpecSHA256 || res.ToSHA256 != sha([]byte(compat)) {
					t.Fatalf("the holding edit did not move the run: %+v", res)
				}
				if again := h.migrate("m", good, false); again.Moved || !again.Already {
					t.Fatalf("a repeated move: %+v, want already there", again)
				}
				if restart {
					h.e.Close()
					h.open()
					if rep, err := h.e.Recover(context.Background()); err != nil || len(rep.Blocked) != 0 {
						t.Fatalf("recover after the move: %+v %v", rep, err)
					}
				}
				c.goOn(h, gate)
				r := h.wait("m")
				want := c.want
				if want == "" {
					if got := h.output(r); got != `"moved"` {
						t.Fatalf("output %s, want the new file's \"moved\"", got)
					}
				} else if !h.calledWith("echo", want) {
					t.Fatalf("no echo call with %q: the run did not go on under the new file", want)
				}
				if r.SpecSHA256 != sha([]byte(compat)) {
					t.Fatalf("the closed run's record names spec %s", r.SpecSHA256)
				}
				evs, _ := h.store.Events(r.RunID, 0)
				if ps := append(history.Check(r, evs), history.CheckRecord(r, evs)...); len(ps) > 0 {
					t.Fatalf("history check: %v", ps)
				}
				m := migrationOf(t, evs)
				if m.FromSHA256 != sha([]byte(base)) || m.By != "tester" || m.SpecSource != compat {
					t.Fatalf("WorkflowMigrated %+v", m)
				}
			})
		}
	}
}

func (h *harness) migrate(id, file string, dry bool) MigrateResult {
	h.t.Helper()
	src := h.read(file)
	res, err := h.e.Migrate(context.Background(), MigrateRequest{WorkflowID: id, File: file, Source: src, By: "tester", DryRun: dry})
	if err != nil {
		h.t.Fatalf("migrate %s to %s: %v", id, file, err)
	}
	return res
}

func (h *harness) read(file string) string {
	h.t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

func (h *harness) calledWith(activity, input string) bool {
	h.acts.mu.Lock()
	defer h.acts.mu.Unlock()
	for _, c := range h.acts.calls {
		var v any
		if c.Activity == activity && json.Unmarshal(c.Input, &v) == nil && v == input {
			return true
		}
	}
	return false
}

func migrationOf(t *testing.T, evs []history.Event) history.Migration {
	t.Helper()
	for _, ev := range evs {
		if ev.Type == history.WorkflowMigrated {
			m, err := history.DataOf[history.Migration](ev)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Fatal("no WorkflowMigrated in the history")
	return history.Migration{}
}

// TestMigrateRefuses: what Migrate will not move, and the error each gets.
func TestMigrateRefuses(t *testing.T) {
	h := newHarness(t)
	f := h.write("m.wend.yaml", head+"steps: [{id: w, wait_for_signal: go}]\n")
	h.start(f, "m", "null")
	done := h.write("done.wend.yaml", head+"steps: [{id: a, activity: p.echo, with: 1}]\n")
	h.start(done, "done", "null")
	h.wait("done")
	other := strings.Replace(head, "name: t", "name: other", 1) + "steps: [{id: w, wait_for_signal: go}]\n"
	cases := []struct {
		name, id, src string
		want          error
		by            string
	}{
		{"a requester name with a terminal escape", "m", head + "steps: [{id: w, wait_for_signal: go}]\noutput: x\n", ErrBadID, "\x1b[31mroot"},
		{"no such workflow id", "nope", head + "steps: [{id: w, wait_for_signal: go}]\n", history.ErrNotFound, ""},
		{"a closed run", "done", head + "steps: [{id: a, activity: p.echo, with: 1}]\noutput: x\n", ErrRunClosed, ""},
		{"a file of another workflow", "m", other, ErrOtherWorkflow, ""},
		{"a file that fails validation", "m", head + "steps: [{id: w, wait_for_signal: go, bogus: 1}]\n", ErrInvalidSpec, ""},
		{"no text", "m", "", ErrInvalidSpec, ""},
		{"an id with a control character", "m\x00", head + "steps: []\n", ErrBadID, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := h.e.Migrate(context.Background(), MigrateRequest{WorkflowID: c.id, File: "x.wend.yaml", Source: c.src, By: cmp.Or(c.by, "tester")})
			if !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
		})
	}
	rec := h.onlyRun("m")
	if h.hasEvent(rec.RunID, history.WorkflowMigrated) || rec.SpecSHA256 != sha([]byte(h.read(f))) {
		t.Fatalf("a refused move changed the run: %+v", rec)
	}
}

// TestMigrateRacesInput: a signal sent while the run is being moved lands either before the
// check (the new file, which decides otherwise after it, is then refused) or after the move
// (it is applied under the new file); never between, which would leave a history that neither
// text reproduces. Every run's history replays on the text its record names.
func TestMigrateRacesInput(t *testing.T) {
	h := newHarness(t)
	v1 := head + "steps:\n  - {id: w, wait_for_signal: go}\n  - {id: a, activity: p.echo, with: one}\n  - {id: hold, wait_for_signal: end}\n"
	v2 := strings.Replace(v1, "with: one", "with: two", 1)
	f := h.write("r.wend.yaml", v1)
	good := h.write("r2.wend.yaml", v2)
	moved, refused := 0, 0
	for i := range 40 {
		id := "race-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		r := h.start(f, id, "null")
		done := make(chan error, 1)
		go func() { done <- h.e.Signal(context.Background(), id, "go", nil) }()
		res, err := h.e.Migrate(context.Background(), MigrateRequest{WorkflowID: id, File: good, Source: v2, By: "tester"})
		if err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if res.Moved {
			moved++
		} else {
			refused++
		}
		waitFor(t, id+" takes its signal", func() bool { return h.hasEvent(r.RunID, history.ActivityCompleted) })
		rec := h.onlyRun(id)
		evs, _ := h.store.Events(rec.RunID, 0)
		if err := Replay(evs); err != nil {
			t.Fatalf("%s (moved %v): its history does not replay on its text: %v", id, res.Moved, err)
		}
		want := "one"
		if res.Moved {
			want = "two"
		}
		for _, ev := range evs {
			if ev.Type == history.ActivityScheduled {
				a, _ := history.DataOf[history.ActivitySchedule](ev)
				if string(a.Input) != `"`+want+`"` {
					t.Fatalf("%s (moved %v): the activity got %s, want %q", id, res.Moved, a.Input, want)
				}
			}
		}
	}
	t.Logf("%d moved, %d refused (the signal came first)", moved, refused)
}

// TestMovedRunRetriesAndContinuesOnItsNewText: a moved run that fails is retried on the text
// it was moved to (the retry's copied history carries the move), and a moved run that
// continues as new starts its next run on that text.
func TestMovedRunRetriesAndContinuesOnItsNewText(t *testing.T) {
	t.Run("retry", func(t *testing.T) {
		h := newHarness(t)
		fail := true
		h.acts.fns["charge"] = func(context.Context, history.ActivityCall) (json.RawMessage, error) {
			if fail {
				return nil, &history.ActivityError{Type: "Down", Message: "bank down", NonRetryable: true}
			}
			return json.RawMessage(`"paid"`), nil
		}
		base := head + "steps:\n  - {id: w, wait_for_signal: go}\n  - {id: charge, activity: p.charge}\noutput: v1\n"
		moved := head + "steps:\n  - {id: w, wait_for_signal: go}\n  - {id: charge, activity: p.charge}\noutput: \"${{ [steps.charge.output, 'v2'] }}\"\n"
		f := h.write("p.wend.yaml", base)
		h.start(f, "p", "null")
		h.settle("p", history.WorkflowStarted)
		if res := h.migrate("p", h.write("p2.wend.yaml", moved), false); !res.Moved {
			t.Fatalf("move: %+v", res)
		}
		if err := h.e.Signal(context.Background(), "p", "go", nil); err != nil {
			t.Fatal(err)
		}
		if first := h.wait("p"); first.Status != history.StatusFailed {
			t.Fatalf("first run %s", first.Status)
		}
		fail = false
		r, err := h.e.Retry(context.Background(), "p")
		if err != nil {
			t.Fatal(err)
		}
		done := h.waitRecord(r.RunID, func(r history.Run) bool { return !r.Open() })
		if got := h.output(done); got != `["paid","v2"]` || done.SpecSHA256 != sha([]byte(moved)) {
			t.Fatalf("retried run: output %s on spec %s, want the moved text's", got, done.SpecSHA256)
		}
	})
	t.Run("continue_as_new", func(t *testing.T) {
		h := newHarness(t)
		base := head + "steps:\n  - {id: w, wait_for_signal: go}\n  - {id: again, continue_as_new: true, with: {n: 1}, if: \"${{ input.n == 0 }}\"}\noutput: v1\n"
		moved := strings.Replace(base, "output: v1", "output: v2", 1)
		f := h.write("c.wend.yaml", base)
		h.start(f, "c", `{"n": 0}`)
		h.settle("c", history.WorkflowStarted)
		if res := h.migrate("c", h.write("c2.wend.yaml", moved), false); !res.Moved {
			t.Fatalf("move: %+v", res)
		}
		for i := range 2 {
			waitFor(t, "the chain's next run", func() bool {
				runs, _ := h.store.Runs(history.RunFilter{WorkflowID: "c"})
				return len(runs) == i+1
			})
			if err := h.e.Signal(context.Background(), "c", "go", nil); err != nil {
				t.Fatal(err)
			}
		}
		done := h.waitChain("c")
		if got := h.output(done); got != `"v2"` || done.SpecSHA256 != sha([]byte(moved)) {
			t.Fatalf("the continued run: output %s on spec %s, want the moved text's", got, done.SpecSHA256)
		}
	})
}

// TestMigrateEvictedRun: a run out of memory (idle) is brought back under its lock, checked
// and moved, and its next input is applied under the new text.
func TestMigrateEvictedRun(t *testing.T) {
	h := newIdleHarness(t, Options{IdleAfter: time.Minute})
	base := head + "steps: [{id: w, wait_for_signal: go}]\noutput: v1\n"
	moved := head + "steps: [{id: w, wait_for_signal: go}]\noutput: v2\n"
	h.start(h.write("e.wend.yaml", base), "e", "null")
	h.settle("e", history.WorkflowStarted)
	h.clock.Advance(2 * time.Minute)
	if s := h.e.Idle(); s.Evicted != 1 || s.Resident != 0 {
		t.Fatalf("%+v, want the run out of memory", s)
	}
	if res := h.migrate("e", h.write("e2.wend.yaml", moved), false); !res.Moved {
		t.Fatalf("move: %+v", res)
	}
	if err := h.e.Signal(context.Background(), "e", "go", nil); err != nil {
		t.Fatal(err)
	}
	if got := h.output(h.wait("e")); got != `"v2"` {
		t.Fatalf("output %s, want the moved text's", got)
	}
}
