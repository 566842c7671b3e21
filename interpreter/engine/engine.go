package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/internal/tracecontext"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// Activities runs one try of an activity. Implementations return a *history.ActivityError
// to say whether a retry can help; any other error counts as a retryable activity failure.
type Activities interface {
	Execute(ctx context.Context, call history.ActivityCall, heartbeat func(history.Heartbeat)) (json.RawMessage, error)
}

// BuildActivities is Activities that also names the plugin build serving each try: it calls
// served with the build's sha256 once it has chosen the process, before the try runs. The
// engine records it on the try's outcome (plugin_sha256), so an operator sees which tries ran
// old code after a plugin was rolled. plugins.Router is one.
type BuildActivities interface {
	ExecuteBuild(ctx context.Context, call history.ActivityCall, heartbeat func(history.Heartbeat), served func(sha256 string)) (json.RawMessage, error)
}

// Errors of the engine.
var (
	// ErrRunClosed is returned for a signal or cancel sent to a run that has finished.
	ErrRunClosed = api.ErrRunClosed
	// ErrBlocked is returned for input to a run the engine stopped driving (replay mismatch
	// or a history it cannot apply); the run keeps its history untouched.
	ErrBlocked = api.ErrBlocked
	// ErrStopped is returned after Close or a fatal store error.
	ErrStopped = api.ErrStopped
	// ErrInvalidInput is returned by Start when the input does not match the input schema.
	ErrInvalidInput = api.ErrInvalidInput
	// ErrNotRetryable is returned by Retry for a run it cannot resume: one that did not fail,
	// timed out, failed other than in an activity, or was compensated.
	ErrNotRetryable = api.ErrNotRetryable
)

// Options configure an Engine.
type Options struct {
	Store         history.Store
	Activities    Activities
	Clock         Clock                                   // RealClock when nil
	Logf          func(format string, args ...any)        // diagnostics; dropped when nil
	Observe       func(run history.Run, ev history.Event) // called after each committed event, in order per run
	MaxActivities int                                     // concurrent activity calls; DefaultMaxActivities when <= 0
	NewID         func() string                           // run ids; random when nil
	// Parked says this engine drives no run: it takes signals, cancels and retries, and its
	// Activities hold every call until Close (the CLI's wend signal, cancel, retry, repair).
	// It marks no try dispatched and records no interruption at Recover: the tries stay as
	// they are in the store for the next process that drives the runs (dispatch.go).
	Parked bool
	// IdleAfter lets a run's state machine leave memory once the run has taken no input for
	// this long and has no activity try in flight (it waits on a signal, a timer, a retry's
	// backoff or a child); its next input rebuilds it by replay from its history, as a
	// Temporal worker's sticky cache does (idle.go). 0 keeps every open run in memory.
	IdleAfter time.Duration
	// MaxResidentRuns bounds the open runs held in memory: past it, the runs idle longest that
	// can leave do, whatever IdleAfter says. 0: DefaultMaxResidentRuns when IdleAfter is set
	// (an engine that lets runs leave memory also bounds how many stay), else no bound;
	// negative: no bound.
	MaxResidentRuns int
	// TraceContext gives every try a W3C traceparent, derived from the run id for a run started
	// without one (set when traces are exported); without it only the tries of runs started
	// with a traceparent get one.
	TraceContext bool
}

// Engine drives runs over a store.
type Engine struct {
	opts  Options
	store history.Store
	clock Clock

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	sem    chan struct{}
	sched  *scheduler
	// The pool that delivers fired timers (timerfire.go): the firings queued, and how many
	// workers take them, at most timerMax, and the most there were (timerMu guards these).
	timerq                            chan timerFiring
	timerMu                           sync.Mutex
	timerWorkers, timerMax, timerPeak int

	mu         sync.Mutex
	runs       map[string]*liveRun // open runs by run id
	current    map[string]string   // workflow id -> its open run id
	closeWaits map[string][]chan struct{}
	waits      map[string][]waitRef // awaited workflow id -> waiting steps
	inflight   map[string]context.CancelFunc
	starting   map[string]chan struct{} // workflow ids a Start is committing (start.go, claimID)
	stopped    error
	sweepStop  func() bool // disarms the idle sweep's next tick (idle.go)
	// Resume's background repair (recover.go): closed when it ends, and what it found.
	resumeDone   chan struct{}
	resumeRepair RepairReport
	resumeErr    error

	stale        atomic.Int64 // outcomes of superseded attempts, dropped
	waitingSlot  atomic.Int64 // tries waiting for a MaxActivities slot (calls.go)
	damagedTasks atomic.Int64 // damaged task records set aside (recover.go)
	idle         idleStats    // evictions and rebuilds (idle.go)
	specs        specCache    // parsed specs of replayed runs (specs.go)
	limits       limits       // the activities' limits (limits.go)
	queue        runQueue     // runs by concurrency key, and the queued ones (runqueue.go)
}

type liveRun struct {
	dir string // the spec file's folder; fixed for the run's life
	// workflowID is rec.WorkflowID, fixed for the run's life, so that e.mu holders can read it
	// without lr.mu (rec is replaced under lr.mu at every commit).
	workflowID string
	mu         sync.Mutex
	rec        history.Run

	qmu      sync.Mutex // guards queue and draining
	queue    []pendingInput
	draining bool

	w       *spec.Workflow
	interp  *interpreter.Run
	blocked error
	carry   *carrier // the drain's carrier while it applies a batch (deliver.go)

	warned map[string]bool // structural limits already warned about (80 %), by kind

	// trace is the run's trace context (tracecontext.ForRun of its id and accepted
	// traceparent, both fixed for its life), computed at its first try; lr.mu guards it.
	trace tracecontext.TraceParent

	// Set while the run's state machine is out of memory (interp and w nil, idle.go): the
	// tasks its history needed when it left, for Repair to check without rebuilding it.
	needs    []taskNeed
	lastUsed time.Time // when the run last took input; lr.mu guards it
	// unread is set for a run Resume registered without replaying it, until it is replayed:
	// what tasks its history needs is not known, so Repair replays it to check them.
	unread bool
}

type waitRef struct{ runID, step string }

// DefaultMaxActivities is how many activity calls an engine makes at once when Options leave
// it unset (wend serve --max-activities sets it).
const DefaultMaxActivities = 256

// DefaultMaxResidentRuns is how many open runs an engine with Options.IdleAfter holds in memory
// when Options leave MaxResidentRuns 0. Runs started in a burst all wait at once, long before
// IdleAfter: without a bound each keeps its state machine (several KB) until then, and a burst
// of 100,000 held more than a GB.
const DefaultMaxResidentRuns = 10_000

// maxTimerDeliveries bounds the timer firings applied at once, and those queued (timerfire.go).
const maxTimerDeliveries = 1024

// New makes an engine; call Recover before Start to resume what a previous process left.
func New(opts Options) *Engine {
	if opts.Clock == nil {
		opts.Clock = RealClock{}
	}
	if opts.MaxActivities <= 0 {
		opts.MaxActivities = DefaultMaxActivities
	}
	if opts.NewID == nil {
		opts.NewID = randomID
	}
	if opts.MaxResidentRuns == 0 && opts.IdleAfter > 0 {
		opts.MaxResidentRuns = DefaultMaxResidentRuns
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Engine{
		opts: opts, store: opts.Store, clock: opts.Clock, ctx: ctx, cancel: cancel,
		sem: make(chan struct{}, opts.MaxActivities), timerq: make(chan timerFiring, maxTimerDeliveries), timerMax: maxTimerDeliveries,
		runs: map[string]*liveRun{}, current: map[string]string{}, closeWaits: map[string][]chan struct{}{},
		waits: map[string][]waitRef{}, inflight: map[string]context.CancelFunc{}, starting: map[string]chan struct{}{},
	}
	e.sched = newScheduler(opts.Clock, e.due)
	e.startSweeper()
	return e
}

// Close stops taking work, cancels activity calls in flight (their tasks stay in the store
// and run again after a restart) and waits for the engine's goroutines.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.stopped == nil {
		e.stopped = ErrStopped
	}
	e.mu.Unlock()
	e.sched.stop()
	e.stopSweeper()
	e.cancel()
	e.cancelInflight()
	e.wg.Wait()
	return nil
}

// Err returns why the engine stopped, or nil while it runs.
func (e *Engine) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped == ErrStopped {
		return nil // closed on purpose
	}
	return e.stopped
}

// StaleOutcomes counts activity outcomes dropped because their attempt was superseded.
func (e *Engine) StaleOutcomes() int64 { return e.stale.Load() }

// spawn runs fn in a goroutine that Close waits for — unless the engine is stopping: a
// WaitGroup must never be added to while Close waits on it.
// It says whether fn was started.
func (e *Engine) spawn(fn func()) bool {
	e.mu.Lock()
	if e.stopped != nil {
		e.mu.Unlock()
		return false
	}
	e.wg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.wg.Done()
		fn()
	}()
	return true
}

// enter counts a caller's call in Close's wait, unless the engine has stopped: a Start in
// flight finishes its commit before Close returns and the store is closed under it. done ends
// the call.
func (e *Engine) enter() (done func(), err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped != nil {
		return nil, e.stopped
	}
	e.wg.Add(1)
	return e.wg.Done, nil
}

func (e *Engine) logf(format string, args ...any) {
	if e.opts.Logf != nil {
		e.opts.Logf(format, args...)
	}
}

// fatal stops the engine after a failed commit: writing on after an fsync error risks a
// history that says something the disk does not (fsyncgate).
func (e *Engine) fatal(err error) {
	e.mu.Lock()
	if e.stopped == nil {
		e.stopped = fmt.Errorf("engine stopped after a failed commit: %w", err)
	}
	e.mu.Unlock()
	e.logf("wend: %v", err)
	e.sched.stop()
	e.cancel()
	e.cancelInflight()
}

func (e *Engine) isStopped() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopped
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
