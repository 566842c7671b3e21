package testsuite

import (
	"strings"
	"testing"
	"time"
)

// A workflow that waits 72 h for a signal and then 30 days plays in virtual time: the case
// checks the virtual duration, and the test's bound is on inputs, not on the wall clock.
func TestVirtualTimeLongWaits(t *testing.T) {
	wf := head + `steps:
  - id: approval
    wait_for_signal: approved
    timeout: 100h
  - id: cooling_off
    delay: 30d
  - id: close
    activity: p.close
`
	rep, _ := runFiles(t, wf, `cases:
  - name: long waits
    signals: [{name: approved, data: {ok: true}, at: 72h}]
    mocks: [{activity: p.close, output: {closed: true}}]
    expect:
      status: completed
      duration: 33d
      calls: [p.close]
`)
	c := onlyCase(t, rep)
	if !c.Passed {
		t.Fatalf("case failed: %+v\n%s", c.Mismatches, strings.Join(c.Timeline, "\n"))
	}
}

func TestMockSelection(t *testing.T) {
	wf := head + `steps:
  - id: a
    activity: p.x
    with: {kind: first}
  - id: b
    activity: p.x
    with: {kind: second}
    retry: {tries: 3, backoff: [1s]}
output:
  a: "${{ steps.a.output }}"
  b: "${{ steps.b.output }}"
`
	tests := []struct {
		name, mocks, want string
	}{
		{"step narrows", `[{activity: p.x, step: b, output: B}, {activity: p.x, output: any}]`, `{a: any, b: B}`},
		{"when narrows", `[{activity: p.x, when: "input.kind == 'second'", output: S}, {activity: p.x, output: any}]`, `{a: any, b: S}`},
		{"case mocks before file mocks", `[{activity: p.x, output: mine}]`, `{a: mine, b: mine}`},
		{"results in order, the last repeats", `[{activity: p.x, results: [{output: 1}, {error: {message: no}}, {output: 3}]}]`, `{a: 1, b: 3}`},
		{"echo", `[{activity: p.x, echo: true}]`, `{a: {kind: first}, b: {kind: second}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, _ := runFiles(t, wf, `mocks: [{activity: p.x, output: file}]
cases:
  - name: c
    mocks: `+tt.mocks+`
    expect: {status: completed, output: `+tt.want+`}
`)
			if c := onlyCase(t, rep); !c.Passed {
				t.Fatalf("%s %+v\n%s", c.Problem, c.Mismatches, strings.Join(c.Timeline, "\n"))
			}
		})
	}
}

func TestTriggersAfterAStep(t *testing.T) {
	wf := head + `steps:
  - id: one
    activity: p.x
  - id: wait
    wait_for_signal: go
  - id: two
    activity: p.x
`
	tests := []struct{ name, trig, expect string }{
		{"signal after a step", `signals: [{name: go, after: one}]`, `{status: completed, calls: [p.x, p.x]}`},
		{"cancel after a step", `cancel: {after: one}`, `{status: cancelled, calls: [p.x]}`},
		{"terminate at a time", `terminate: {at: 5m}`, `{status: cancelled, closed_reason: terminated, duration: 5m}`},
		{"no signal: still running", ``, `{status: running, calls: [p.x]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, _ := runFiles(t, wf, `cases:
  - name: c
    mocks: [{activity: p.x, output: 1, takes: 1m}]
    `+tt.trig+`
    expect: `+tt.expect+`
`)
			if c := onlyCase(t, rep); !c.Passed {
				t.Fatalf("%s %+v\n%s", c.Problem, c.Mismatches, strings.Join(c.Timeline, "\n"))
			}
		})
	}
}

func TestChildrenMockedOrRun(t *testing.T) {
	wf := head + `steps:
  - id: kid
    run_workflow: ./child.wend.yaml
    with: {n: 2}
output: "${{ steps.kid.output }}"
`
	child := head + `steps:
  - id: work
    activity: p.double
    with: {n: "${{ input.n }}"}
output: "${{ steps.work.output }}"
`
	tests := []struct{ name, kids, expect string }{
		{"run the real child with the case's mocks", ``, `{status: completed, output: {n: 2}, duration: 3s}`},
		{"run: true says so", `children: [{step: kid, run: true}]`, `{status: completed, output: {n: 2}}`},
		{"mocked output", `children: [{step: kid, output: 7, takes: 1h}]`, `{status: completed, output: 7, duration: 1h}`},
		{"mocked failure", `children: [{step: kid, error: {type: Boom, message: no}}]`, `{status: failed, failure: {category: child_workflow, type: Boom}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, _ := runFiles(t, wf, `cases:
  - name: c
    mocks: [{activity: p.double, echo: true, takes: 3s}]
    `+tt.kids+`
    expect: `+tt.expect+`
`, "child.wend.yaml", child)
			if c := onlyCase(t, rep); !c.Passed {
				t.Fatalf("%s %+v\n%s", c.Problem, c.Mismatches, strings.Join(c.Timeline, "\n"))
			}
		})
	}
}

// A case that cannot be played names why and where, and fails rather than hanging.
func TestCaseProblems(t *testing.T) {
	wf := head + `input: {type: object, required: [id]}
steps:
  - id: a
    activity: p.x
    retry: {tries: 0, backoff: [1s]}
`
	tests := []struct{ name, body, want string }{
		{"unmocked activity", `input: {id: 1}`, "no mock answers p.x at step a (input null)"},
		{"input against the workflow's schema", `input: {}
    mocks: [{activity: p.x, output: 1}]`, "input: "},
		{"retries without end", `input: {id: 1}
    mocks: [{activity: p.x, error: {message: again}}]`, "history reached"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, _ := runFiles(t, wf, "cases:\n  - name: c\n    "+tt.body+"\n    expect: {status: completed}\n")
			c := onlyCase(t, rep)
			text := c.Problem + strings.Join(c.Timeline, "\n")
			if c.Passed || !strings.Contains(text, tt.want) {
				t.Fatalf("want a failed case mentioning %q; got problem %q mismatches %+v", tt.want, c.Problem, c.Mismatches)
			}
		})
	}
}

// TestPlaysAsTheEngineDoes: `wend test` must decide as the engine: a case without input
// sees {}, and it plays new runs under the engine's current rules, where a
// backoff's max bounds the wait with jitter included (the per-wait bound is tested in
// interpreter, TestBackoffMaxBoundsJitter).
func TestPlaysAsTheEngineDoes(t *testing.T) {
	wf := head + `steps:
  - id: a
    activity: p.x
    retry: {tries: 40, backoff: {initial: 10ms, factor: 2, max: 100ms, jitter: 0.5}}
output: "${{ input.n ?? 0 }}"
`
	rep, _ := runFiles(t, wf, `cases:
  - name: no input, busy 39 times
    mocks: [{activity: p.x, results: [`+strings.Repeat(`{error: {type: Busy, message: busy}}, `, 39)+`{output: ok}]}]
    expect: {status: completed, output: 0}
`)
	c := onlyCase(t, rep)
	if !c.Passed {
		t.Fatalf("%s %+v\n%s", c.Problem, c.Mismatches, strings.Join(c.Timeline, "\n"))
	}
	// Waits of 10, 20, 40, 80ms then 35 at the cap, each within [d/2, min(1.5d, max)]: from
	// 5+10+20+40+35*50ms to 15+30+60+100+35*100ms.
	d, err := time.ParseDuration(c.Duration)
	if err != nil || d > 3705*time.Millisecond || d < 1825*time.Millisecond {
		t.Fatalf("virtual duration %q (%v): want 1.825s to 3.705s", c.Duration, err)
	}
}
