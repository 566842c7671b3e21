package spec

import (
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Version is the only spec version this build reads.
const Version = "v1"

// Workflow is a parsed and checked workflow file.
type Workflow struct {
	File        string // path as given to Load
	Source      []byte // exact file content; runs record it with its sha256
	Name        string
	Description string
	Input       any                // the input JSON Schema as a JSON value; nil when absent
	InputSchema *jsonschema.Schema // Input compiled; nil when absent (ValidateInput accepts anything)
	Plugins     map[string]*Plugin
	PluginOrder []string // plugin names in file order
	// Signals are the signals the workflow declares it accepts (`signals:`), by name; nil
	// when it declares none, and then every signal is taken as before contracts existed.
	// Secrets are the credentials the workflow declares, by name; nil when none.
	Secrets     map[string]*Secret
	SecretOrder []string // declared secret names in file order
	Signals     map[string]*SignalDecl
	SignalOrder []string // declared signal names in file order

	Defaults            Defaults
	Timeouts            Timeouts
	CompensateOnFailure bool
	// CompensationContinueOnError keeps compensating after one compensation fails for good.
	CompensationContinueOnError bool

	OnCancel []*Step
	Steps    []*Step
	Output   *Value // nil when absent

	Schedules []*Schedule // when wend serve starts runs of this workflow (schedule.go)

	// Retention is how long wend serve keeps a closed run of this workflow before purging it
	// (`retention:`); unset, serve's --retention applies, and without one runs are kept.
	Retention Duration

	// Limits bound the calls of an activity across every run the engine drives, by
	// plugin.activity (activity_limits.go); nil when the file declares none.
	Limits     map[string]*Limit
	LimitOrder []string // limited activities in file order

	// Concurrency bounds the runs of this workflow at once by key (concurrency.go); nil when
	// the file declares none.
	Concurrency *Concurrency

	// Search are the run's search fields (`search:`, search.go), by name; nil when none.
	Search      map[string]*SearchField
	SearchOrder []string // search field names in file order
}

// MaxPluginStartTimeout bounds a plugin's start_timeout: a start that takes longer is stuck.
const MaxPluginStartTimeout = 10 * time.Minute

// Plugin is a declared activity plugin.
type Plugin struct {
	Name    string
	Command []string // executable first; relative paths are relative to the workflow file
	SHA256  string   // lower-case hex; "" when not pinned
	Env     []string // NAME or NAME=value
	// StartTimeout bounds the plugin's start (exec to handshake and first health check);
	// zero: the engine's (WEND_PLUGIN_START_TIMEOUT, else the plugin host's default).
	StartTimeout Duration
	// Builtin names a plugin wend serves itself ("http", "exec"); its Command is then
	// BuiltinCommandPrefix + Builtin, which the plugin host starts as the wend binary.
	Builtin string
	Pos     Pos
}

// Defaults apply to activity steps that do not set their own.
type Defaults struct {
	Retry            *Retry
	Timeout          Duration
	HeartbeatTimeout Duration
}

// Timeouts bound a workflow: Execution spans continue-as-new, Run restarts with each run.
type Timeouts struct {
	Execution Duration
	Run       Duration
}

// Retry is an activity's retry policy.
type Retry struct {
	Tries        int        // total tries including the first; 0 means unlimited
	Backoff      []Duration // wait after try 1, 2, ...; the last repeats
	Exponential  *Exponential
	NonRetryable []string // error types that fail at once
	Pos          Pos
}

// Exponential backoff: Initial * Factor^(try-1), capped at Max, +/- Jitter (fraction).
type Exponential struct {
	Initial Duration
	Factor  float64
	Max     Duration
	Jitter  float64
}

// Wait returns the backoff after try (1-based), before jitter.
func (r *Retry) Wait(try int) time.Duration {
	switch {
	case r == nil || try < 1:
		return 0
	case r.Exponential != nil:
		e := r.Exponential
		d := float64(e.Initial.D)
		for i := 1; i < try && (e.Max.D == 0 || d < float64(e.Max.D)); i++ {
			d *= e.Factor
		}
		if e.Max.D != 0 && d > float64(e.Max.D) {
			return e.Max.D
		}
		return time.Duration(d)
	case len(r.Backoff) == 0:
		return 0
	case try <= len(r.Backoff):
		return r.Backoff[try-1].D
	default:
		return r.Backoff[len(r.Backoff)-1].D
	}
}

// Kind is what a step does.
type Kind string

// Step kinds.
const (
	KindActivity        Kind = "activity"
	KindSteps           Kind = "steps"
	KindParallel        Kind = "parallel"
	KindForEach         Kind = "for_each"
	KindDelay           Kind = "delay"
	KindWaitForSignal   Kind = "wait_for_signal"
	KindRunWorkflow     Kind = "run_workflow"
	KindWaitForWorkflow Kind = "wait_for_workflow"
	KindContinueAsNew   Kind = "continue_as_new"
	KindFail            Kind = "fail"
)

// Step is one node of the step graph.
type Step struct {
	Kind        Kind
	ID          string // "" when the file gives none
	Description string
	Path        string // e.g. "steps[2].parallel[0]"; unique and stable for a spec
	Pos         Pos

	If               *Expr
	With             *Value
	Set              []SetField
	Timeout          Duration
	HeartbeatTimeout Duration
	Retry            *Retry
	CompensateWith   []*Step
	Catch            []*Step

	Plugin, Activity string  // activity: plugin name and activity name
	Steps            []*Step // steps, and the body of for_each
	Parallel         []*Step

	ForEach     *Value // an expression or a literal list
	As          string // default "item"
	Concurrency int    // default 1
	// Shard, when > 0, runs the items in child runs of Shard items each, one child at a time
	// (a "shard child"), so a for_each may hold more items than one run's history.
	Shard int
	// ShardReadsInput and ShardReadsState say whether a sharded body reads input or state:
	// each child run's input carries them only then (set by the checker).
	ShardReadsInput, ShardReadsState bool

	Delay      Duration
	DelayUntil *Value

	Signal    string
	SignalPos Pos // where the wait_for_signal value is, for findings about the name

	RunWorkflow     string // path as written, relative to this file
	WaitForWorkflow *Value

	Fail *FailSpec
}

// SetField is one `set` entry: a state key and the value merged into it.
type SetField struct {
	Key   string
	Value *Value
}

// FailSpec is the error a `fail` step raises.
type FailSpec struct {
	Message      *Value
	Type         string
	NonRetryable bool
}

// Walk calls fn for every step of the workflow (body, compensations, catches, on_cancel) in
// file order, depth first.
func (w *Workflow) Walk(fn func(*Step)) {
	walkSteps(w.Steps, fn)
	walkSteps(w.OnCancel, fn)
}

// StepAt returns the step whose static path is path, or nil.
func (w *Workflow) StepAt(path string) *Step {
	var found *Step
	w.Walk(func(s *Step) {
		if found == nil && s.Path == path {
			found = s
		}
	})
	return found
}

func walkSteps(steps []*Step, fn func(*Step)) {
	for _, s := range steps {
		fn(s)
		walkSteps(s.Steps, fn)
		walkSteps(s.Parallel, fn)
		walkSteps(s.CompensateWith, fn)
		walkSteps(s.Catch, fn)
	}
}
