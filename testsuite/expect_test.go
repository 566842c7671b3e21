package testsuite

import (
	"strings"
	"testing"
)

// Every expectation kind passes when it states what happened and fails, at the line that
// states it, when it does not: an expectation that cannot fail would test nothing.
func TestExpectationsCanFail(t *testing.T) {
	wf := head + `compensate_on_failure: true
steps:
  - id: a
    activity: p.x
    with: {n: 1}
    set: {seen: "${{ output }}"}
    compensate_with: {activity: p.undo}
  - id: nap
    delay: 1m
  - id: b
    activity: p.y
    with: {n: 2}
`
	mocks := `    mocks:
      - {activity: p.x, output: ok}
      - {activity: p.undo, output: undone}
      - {activity: p.y, error: {type: Nope, message: "y is down", non_retryable: true}}
`
	tests := []struct{ key, good, bad string }{
		{"status", `failed`, `completed`},
		{"closed_reason", `failed`, `timed_out`},
		{"state", `{seen: ok}`, `{seen: ok, more: 1}`},
		{"state_contains", `{seen: ok}`, `{seen: nope}`},
		{"calls", `[{activity: p.x, step: a, input: {n: 1}}, p.y, {activity: p.undo, step: a.compensate_with}]`, `[p.x, p.y]`},
		{"compensations", `[a]`, `[]`},
		{"failure", `{type: Nope, category: activity, message: down, step: b, non_retryable: true}`, `{type: Nope, non_retryable: false}`},
		{"duration", `1m`, `2m`},
		{"events", `[{type: CompensationStarted, step: a}, WorkflowFailed]`, `[WorkflowFailed, {type: CompensationStarted, step: a}]`},
		{"output", `null`, `1`}, // the run failed: no output matches, not even null
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			for _, v := range []struct {
				val  string
				pass bool
			}{{tt.good, tt.key != "output"}, {tt.bad, false}} {
				rep, path := runFiles(t, wf, "cases:\n  - name: c\n"+mocks+"    expect:\n      "+tt.key+": "+v.val+"\n")
				c := onlyCase(t, rep)
				if c.Problem != "" {
					t.Fatal(c.Problem)
				}
				if c.Passed != v.pass {
					t.Fatalf("%s: %s: passed=%v, want %v; mismatches %+v\n%s", tt.key, v.val, c.Passed, v.pass, c.Mismatches, strings.Join(c.Timeline, "\n"))
				}
				if !v.pass {
					m := c.Mismatches[0]
					if m.Line != 9 || m.Column != 9+len(tt.key) || m.Path != "cases[0].expect."+tt.key {
						t.Fatalf("%s: mismatch at %d:%d %s, want 9:%d cases[0].expect.%s (%s)", tt.key, m.Line, m.Column, m.Path, 9+len(tt.key), tt.key, path)
					}
				}
			}
		})
	}
}

func TestContains(t *testing.T) {
	tests := []struct {
		want, got any
		ok        bool
	}{
		{map[string]any{"a": 1.0}, map[string]any{"a": 1.0, "b": 2.0}, true},
		{map[string]any{"a": map[string]any{"x": "y"}}, map[string]any{"a": map[string]any{"x": "y", "z": 1.0}}, true},
		{map[string]any{"a": 1.0}, map[string]any{"b": 1.0}, false},
		{[]any{map[string]any{"a": 1.0}}, []any{map[string]any{"a": 1.0, "c": 3.0}}, true},
		{[]any{1.0}, []any{1.0, 2.0}, false}, // lists match in length
		{"x", nil, false},
		{nil, nil, true},
	}
	for i, tt := range tests {
		if ok, _ := contains(tt.want, tt.got, ""); ok != tt.ok {
			t.Errorf("%d: contains(%v, %v) = %v, want %v", i, tt.want, tt.got, ok, tt.ok)
		}
	}
}

// TestFailureSummaryNamesTheStep: a failure mismatch says the step by its id (step=boom), as
// the case writes it, not by its position (step=steps[0]); a step without an id keeps the
// nearest id and the rest of its path.
func TestFailureSummaryNamesTheStep(t *testing.T) {
	wf := head + `steps:
  - id: boom
    activity: p.x
  - id: wrap
    steps:
      - activity: p.y
`
	for _, tc := range []struct{ mocks, want string }{
		{"      - {activity: p.x, error: {type: Nope, message: down, non_retryable: true}}\n", "step=boom "},
		{"      - {activity: p.x, output: ok}\n      - {activity: p.y, error: {type: Nope, message: down, non_retryable: true}}\n", "step=wrap.steps[0] "},
	} {
		rep, _ := runFiles(t, wf, "cases:\n  - name: c\n    mocks:\n"+tc.mocks+"    expect:\n      failure: {type: Other}\n")
		c := onlyCase(t, rep)
		if c.Passed || len(c.Mismatches) != 1 {
			t.Fatalf("passed %v, mismatches %+v", c.Passed, c.Mismatches)
		}
		if got := c.Mismatches[0].Actual; !strings.Contains(got, tc.want) {
			t.Errorf("actual %q, want it to contain %q", got, tc.want)
		}
	}
}
