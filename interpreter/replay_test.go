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
	"github.com/wendflow/wend/internal/simtest"
	"github.com/wendflow/wend/interpreter"
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
	drive func(s *simtest.Sim)
}{
	"sequence_parallel_foreach": {simtest.Head + `
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
`, map[string]any{"n": 5}, func(s *simtest.Sim) {
		s.RunActivities(simtest.Echo)
		s.FireTimers(simtest.T0.Add(time.Hour))
		s.RunActivities(simtest.Echo)
	}},
	// Recorded after issue 12 item 1: keys(), values() and toPairs() iterate in key order. A
	// replay under Go's random map order would schedule the items in another order and be
	// refused as nondeterministic.
	"map_order": {simtest.Head + `
steps:
  - id: each
    for_each: "${{ keys(input.m) }}"
    steps:
      - {activity: p.echo, with: "${{ item }}", set: {last: "${{ output }}"}}
  - {id: v, activity: p.echo, with: {values: "${{ values(input.m) }}", pairs: "${{ toPairs(input.m) }}"}}
output: "${{ [state.last, steps.each.output, steps.v.output] }}"
`, map[string]any{"m": map[string]any{"f": 6, "b": 2, "h": 8, "a": 1, "e": 5, "c": 3, "g": 7, "d": 4}}, func(s *simtest.Sim) {
		s.RunActivities(simtest.Echo)
	}},
	"retries_catch_signal": {simtest.Head + `
steps:
  - id: flaky
    activity: p.flaky
    retry: {tries: 3, backoff: {initial: 1s, factor: 2, max: 10s, jitter: 0.5}}
    catch: [{activity: p.page, with: "${{ error.message }}"}]
  - {id: ok, wait_for_signal: go, timeout: 1h, set: {by: "${{ signal }}"}}
output: "${{ state.by }}"
`, nil, func(s *simtest.Sim) {
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
				s := simtest.New(t, tc.spec, tc.input)
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
