package testsuite

import (
	"time"

	"github.com/expr-lang/expr/vm"
	"github.com/wendflow/wend/spec"
)

// Suffix names test files.
const Suffix = ".wend.test.yaml"

// File is one decoded test file.
type File struct {
	Path     string // as given on the command line, for messages
	Workflow string // the workflow under test, resolved against the test file's folder
	WFPos    spec.Pos
	Mocks    []*Mock // shared by every case, after the case's own
	Cases    []*Case
}

// Case is one scenario: an input, what the world answers, and what must happen.
type Case struct {
	Name     string
	Pos      spec.Pos
	Input    any
	Mocks    []*Mock
	Signals  []*Trigger
	Cancel   *Trigger
	Term     *Trigger
	Children []*Child
	Expect   Expect
}

// Mock answers calls of one activity, narrowed by step and by a condition over the input.
type Mock struct {
	Activity string // plugin.activity
	Step     string // "" for any step
	When     *vm.Program
	WhenSrc  string
	Pos      spec.Pos
	Path     string   // in the test file: cases[0].mocks[1]
	Results  []Result // one per call, the last one repeating
}

// Result is one answer of a mock or a mocked child.
type Result struct {
	Output    any
	HasOutput bool
	Echo      bool   // the output is the call's input
	Timeout   string // "timeout" or "heartbeat_timeout": the try times out
	Error     *ErrorSpec
	Takes     time.Duration // virtual time the call takes
	Pos       spec.Pos
}

// ErrorSpec is a mocked failure.
type ErrorSpec struct {
	Type, Message string
	NonRetryable  bool
}

// Trigger is a signal, cancel or terminate delivered at a virtual time or after a step.
type Trigger struct {
	Name   string // signal name
	Data   any
	Reason string
	At     time.Duration
	After  string // step id; "" when At is used
	Pos    spec.Pos
	Path   string
}

// Child mocks a run_workflow or wait_for_workflow step, or runs the real child file.
type Child struct {
	Step   string
	Run    bool // run the child workflow file with the case's mocks
	Result Result
	Pos    spec.Pos
	Path   string
}

// Expect is what a case checks; nil fields are not checked.
type Expect struct {
	Status         *Want[string]
	ClosedReason   *Want[string]
	Output         *Want[any]
	OutputContains *Want[any]
	State          *Want[any]
	StateContains  *Want[any]
	Calls          *Want[[]CallWant]
	Compensations  *Want[[]string]
	Failure        *Want[FailureWant]
	Duration       *Want[time.Duration]
	Events         *Want[[]EventWant]
}

// Want is one expected value and where the test file states it.
type Want[T any] struct {
	V    T
	Pos  spec.Pos
	Path string
}

// CallWant is one expected activity call.
type CallWant struct {
	Activity string
	Step     string // "" for any
	Input    any    // partial match; nil for any
	HasInput bool
	Attempt  int // 0 for any
}

// FailureWant is the expected failure of the run; empty fields are not checked.
type FailureWant struct {
	Type, Category, Message, Step string
	NonRetryable                  *bool
}

// EventWant is one event of an ordered subset.
type EventWant struct {
	Type string
	Step string // "" for any
}
