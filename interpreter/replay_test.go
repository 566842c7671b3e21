package interpreter_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/spec"
)

// recorded is a history kept under testdata/histories: the spec it ran with and its events.
type recorded struct {
	Spec   string          `json:"spec"`
	Events []history.Event `json:"events"`
}

// replayCases are runs recorded once (UPDATE=1 rewrites them) and replayed forever after, so
// a change to the interpreter that would decide differently for an existing history fails
// here instead of blocking users' runs (temporalio/sdk-go test/replaytests).
var replayCases = map[string]struct {
	spec  string
	input any
	drive func(s *sim.Sim)
}{
	"sequence_parallel_foreach": {sim.Head + `
steps:
  - {id: a, activity: p.echo, with: {n: "${{ input.n }}"}, set: {n: "${{ output.n }}"}}
  - id: par
    parallel:
      - {activity: p.echo, with: 1}
      - steps: [{delay: 5m}, {activity: p.echo, with: 2}]
  - id: loop
    for_each: "${{ [1, 2, 3, 4] }}"
    concurrency: 2
    steps: [{id: x, activity: p.echo, with: "${{ item }}"}, {activity: p.echo, with: "${{ steps.x.output }}"}]
output: "${{ [state.n, steps.par.output, steps.loop.output] }}"
`, map[string]any{"n": 5}, func(s *sim.Sim) {
		s.RunActivities(sim.Echo)
		s.FireTimers(sim.T0.Add(time.Hour))
		s.RunActivities(sim.Echo)
	}},
	// keys(), values() and toPairs() iterate in key order. A
	// replay under Go's random map order would schedule the items in another order and be
	// refused as nondeterministic.
	"map_order": {sim.Head + `
steps:
  - id: each
    for_each: "${{ keys(input.m) }}"
    steps:
      - {activity: p.echo, with: "${{ item }}", set: {last: "${{ output }}"}}
  - {id: v, activity: p.echo, with: {values: "${{ values(input.m) }}", pairs: "${{ toPairs(input.m) }}"}}
output: "${{ [state.last, steps.each.output, steps.v.output] }}"
`, map[string]any{"m": map[string]any{"f": 6, "b": 2, "h": 8, "a": 1, "e": 5, "c": 3, "g": 7, "d": 4}}, func(s *sim.Sim) {
		s.RunActivities(sim.Echo)
	}},
	"retries_catch_signal": {sim.Head + `
steps:
  - id: flaky
    activity: p.flaky
    retry: {tries: 3, backoff: {initial: 1s, factor: 2, max: 10s, jitter: 0.5}}
    catch: [{activity: p.page, with: "${{ error.message }}"}]
  - {id: ok, wait_for_signal: go, timeout: 1h, set: {by: "${{ signal }}"}}
output: "${{ state.by }}"
`, nil, func(s *sim.Sim) {
		s.RunActivities(func(act string, in any, _ int) (any, *history.Failure) {
			if act == "flaky" {
				return nil, &history.Failure{Type: "Busy", Message: "busy"}
			}
			return in, nil
		})
		s.Signal("go", "ann")
	}},
}

func TestReplayRecordedHistories(t *testing.T) {
	for name, tc := range replayCases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "histories", name+".json")
			if os.Getenv("UPDATE") != "" {
				s := sim.New(t, tc.spec, tc.input)
				tc.drive(s)
				b, _ := json.MarshalIndent(recorded{Spec: tc.spec, Events: s.Events}, "", " ")
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (UPDATE=1 go test ./interpreter records it)", err)
			}
			var rec recorded
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			if !rec.Events[len(rec.Events)-1].Type.Terminal() {
				t.Fatalf("recorded history does not end the run")
			}
			w, ds := spec.Load("test.wend.yaml", []byte(rec.Spec))
			if ds.HasErrors() {
				t.Fatal(ds.Error())
			}
			st, _ := history.DataOf[history.Started](rec.Events[0])
			if err := interpreter.New(w, st).Replay(rec.Events); err != nil {
				t.Fatalf("recorded history no longer replays: %v", err)
			}
			// The same history against an edited spec (one more step before the output) is
			// refused, not re-interpreted.
			editedSrc := strings.Replace(rec.Spec, "\noutput:", "\n  - {activity: p.extra}\noutput:", 1)
			edited, eds := spec.Load("test.wend.yaml", []byte(editedSrc))
			if eds.HasErrors() || editedSrc == rec.Spec {
				t.Fatalf("edited spec does not load: %v", eds.Error())
			}
			if err := interpreter.New(edited, st).Replay(rec.Events); !errors.Is(err, interpreter.ErrNondeterministic) {
				t.Fatalf("replay against the edited spec: %v, want ErrNondeterministic", err)
			}
		})
	}
}

// TestReplayDecodedDecodesStartedOnce: ReplayDecoded, for a caller that decoded the
// WorkflowStarted payload and gave it to New, replays to the same state as Replay without
// decoding that payload again (the engine's rebuild of an evicted run decoded it twice); the
// allocations say so, the payload (a spec source and an
// input) being the largest to decode. After it, a Replay decodes as before.
func TestReplayDecodedDecodesStartedOnce(t *testing.T) {
	for _, name := range []string{"sequence_parallel_foreach", "retries_catch_signal"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "histories", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var rec recorded
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			w, ds := spec.Load("test.wend.yaml", []byte(rec.Spec))
			if ds.HasErrors() {
				t.Fatal(ds.Error())
			}
			st, _ := history.DataOf[history.Started](rec.Events[0])
			plain, decoded := interpreter.New(w, st), interpreter.New(w, st)
			if err := plain.Replay(rec.Events); err != nil {
				t.Fatal(err)
			}
			if err := decoded.ReplayDecoded(rec.Events); err != nil {
				t.Fatal(err)
			}
			if p, d := plain.Closed(), decoded.Closed(); p != d || p == "" {
				t.Fatalf("closed by %q after Replay, %q after ReplayDecoded", p, d)
			}
			ps, _ := json.Marshal(plain.State())
			dstate, _ := json.Marshal(decoded.State())
			if string(ps) != string(dstate) {
				t.Fatalf("state %s after Replay, %s after ReplayDecoded", ps, dstate)
			}
			allocs := func(replay func(r *interpreter.Run, evs []history.Event) error) float64 {
				return testing.AllocsPerRun(20, func() {
					if err := replay(interpreter.New(w, st), rec.Events); err != nil {
						t.Fatal(err)
					}
				})
			}
			full := allocs((*interpreter.Run).Replay)
			once := allocs((*interpreter.Run).ReplayDecoded)
			if once >= full {
				t.Errorf("ReplayDecoded made %.0f allocations, Replay %.0f; want fewer (no second decode of the started payload)", once, full)
			}
			// A Replay after a ReplayDecoded decodes the payload again, not New's argument: the
			// flag does not outlive the call.
			wrong := st
			wrong.Input = json.RawMessage(`{"n": 99}`)
			r := interpreter.New(w, wrong)
			if err := r.ReplayDecoded(nil); err != nil {
				t.Fatal(err)
			}
			if err := r.Replay(rec.Events); err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(r.State()); string(got) != string(ps) {
				t.Fatalf("state %s after ReplayDecoded then Replay, %s after Replay", got, ps)
			}
		})
	}
}
