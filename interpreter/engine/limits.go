package engine

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// Activity limits (the workflow's `limits:`, docs/language.md). A try of a limited activity
// waits for its limit before its MaxActivities slot and before its dispatch mark: while it
// waits it has not started (no attempt counted, no timeout running, and a crash delivers it
// later as the same attempt). Waiters of one activity are admitted in the order they came;
// the runs of files that declare the same activity share its counts, each waiter checking
// its own file's numbers. A try that took its limit gives it back where it gives back its
// slot (release), so the two are held over the same span.
//
// A rate counts a try when its call starts at the plugin (callStarted), not when the limit
// admits it: between the two the try may wait for a slot, its dispatch mark and its plugin's
// start, which on a plugin just started takes seconds. Until its call starts an admitted try
// counts as a start at every moment (pending), so tries admitted while the plugin starts
// never reach it together past the rate.

// limitWindow is the longest rate period (N/h): older starts never count.
const limitWindow = time.Hour

// activityLimiter is the shared state of one limited activity.
type activityLimiter struct {
	mu      sync.Mutex
	running int            // tries admitted and not released
	pending int            // tries a rate admitted whose call has not started: each counts as a start now
	queue   []*limitWaiter // waiting tries, first come first
	starts  []time.Time    // admissions, oldest first: the last keep within limitWindow
	keep    int            // the largest rate count seen
}

type limitWaiter struct{ wake chan struct{} }

func (w *limitWaiter) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// limits holds the engine's limiters by activity name, and which try holds which.
type limits struct {
	mu   sync.Mutex
	by   map[string]*activityLimiter
	held map[string]*heldLimit // by task id
	n    atomic.Int64          // len(held): release skips the lock when none is held
}

// heldLimit is the limit one admitted try holds.
type heldLimit struct {
	l       *activityLimiter
	pending bool // counted in l.pending: its rate start is not recorded yet
}

func (ls *limits) of(name string) *activityLimiter {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.by == nil {
		ls.by = map[string]*activityLimiter{}
	}
	l := ls.by[name]
	if l == nil {
		l = &activityLimiter{}
		ls.by[name] = l
	}
	return l
}

// acquireLimit waits until lim admits a try of activity name (taskID), first come first; false
// if ctx ended first.
func (e *Engine) acquireLimit(ctx context.Context, name, taskID string, lim *spec.Limit) bool {
	l := e.limits.of(name)
	if !l.acquire(ctx, e.clock, lim) {
		return false
	}
	e.limits.mu.Lock()
	if e.limits.held == nil {
		e.limits.held = map[string]*heldLimit{}
	}
	e.limits.held[taskID] = &heldLimit{l: l, pending: lim.Rate.IsSet()}
	e.limits.n.Add(1)
	e.limits.mu.Unlock()
	return true
}

// limitCallStarted records, for the rate taskID's limit counts, that its call starts now at
// the plugin (the plugin is ready and the call goes out).
func (e *Engine) limitCallStarted(taskID string) {
	if e.limits.n.Load() == 0 {
		return
	}
	e.limits.mu.Lock()
	h := e.limits.held[taskID]
	pending := h != nil && h.pending
	if pending {
		h.pending = false
	}
	e.limits.mu.Unlock()
	if pending {
		h.l.started(e.clock)
	}
}

// releaseLimit gives back the limit taskID holds, if any.
func (e *Engine) releaseLimit(taskID string) {
	if e.limits.n.Load() == 0 {
		return
	}
	e.limits.mu.Lock()
	h := e.limits.held[taskID]
	if h != nil {
		delete(e.limits.held, taskID)
		e.limits.n.Add(-1)
	}
	e.limits.mu.Unlock()
	if h != nil {
		h.l.release(h.pending)
	}
}

func (l *activityLimiter) acquire(ctx context.Context, clock Clock, lim *spec.Limit) bool {
	w := &limitWaiter{wake: make(chan struct{}, 1)}
	l.mu.Lock()
	l.queue = append(l.queue, w)
	var stopTimer func() bool
	defer func() {
		if stopTimer != nil {
			stopTimer()
		}
	}()
	for {
		if l.queue[0] == w {
			now := clock.Now()
			wait, ok := l.admits(lim, now)
			if ok {
				l.running++
				if lim.Rate.IsSet() {
					l.pending++
					l.keep = max(l.keep, lim.Rate.N)
				}
				l.queue = l.queue[1:]
				l.pokeHead()
				l.mu.Unlock()
				return true
			}
			if wait > 0 {
				if stopTimer != nil {
					stopTimer()
				}
				stopTimer = clock.AfterFunc(wait, w.poke)
			}
		}
		l.mu.Unlock()
		select {
		case <-w.wake:
		case <-ctx.Done():
			l.mu.Lock()
			if i := slices.Index(l.queue, w); i >= 0 {
				l.queue = slices.Delete(l.queue, i, i+1)
				if i == 0 {
					l.pokeHead()
				}
			}
			l.mu.Unlock()
			return false
		}
		l.mu.Lock()
	}
}

// admits says whether lim lets a try start now; if the rate holds it back, for how long (0:
// until a pending try's call starts or a try ends, which pokes the head). l.mu is held.
func (l *activityLimiter) admits(lim *spec.Limit, now time.Time) (wait time.Duration, ok bool) {
	if lim.Concurrency > 0 && l.running >= lim.Concurrency {
		return 0, false // a release pokes the head
	}
	if !lim.Rate.IsSet() {
		return 0, true
	}
	from := now.Add(-lim.Rate.Per)
	i := sort.Search(len(l.starts), func(i int) bool { return l.starts[i].After(from) })
	if len(l.starts)-i+l.pending < lim.Rate.N {
		return 0, true
	}
	room := lim.Rate.N - l.pending // the starts the window may hold beside the pending tries
	if room <= 0 || room > len(l.starts) {
		return 0, false
	}
	// The room-th most recent start leaves the window at its time plus Per.
	return l.starts[len(l.starts)-room].Add(lim.Rate.Per).Sub(now), false
}

// started moves a pending try's start to the window at now and lets the head look again.
func (l *activityLimiter) started(clock Clock) {
	l.mu.Lock()
	l.pending--
	l.record(clock.Now())
	l.pokeHead()
	l.mu.Unlock()
}

// record notes a call's start at now, keeping only what a rate can still count: the last keep
// starts, none older than limitWindow. Starts are recorded in time order: started reads the
// clock under l.mu. l.mu is held.
func (l *activityLimiter) record(now time.Time) {
	l.starts = append(l.starts, now)
	from := now.Add(-limitWindow)
	drop := max(len(l.starts)-l.keep, 0)
	for drop < len(l.starts) && !l.starts[drop].After(from) {
		drop++
	}
	l.starts = l.starts[drop:] // append copies the live part when it grows: memory stays bounded
}

// release ends an admitted try; pending says its call never started, so no start is recorded.
func (l *activityLimiter) release(pending bool) {
	l.mu.Lock()
	l.running--
	if pending {
		l.pending--
	}
	l.pokeHead()
	l.mu.Unlock()
}

// pokeHead wakes the first waiter to check the limit again. l.mu is held.
func (l *activityLimiter) pokeHead() {
	if len(l.queue) > 0 {
		l.queue[0].poke()
	}
}

// LimitStats are the calls of one limited activity.
type LimitStats struct {
	Running int // tries admitted by the limit, not ended yet
	Waiting int // tries waiting for the limit: not started
}

// LimitStats says how many tries of each limited activity run and wait now, by
// plugin.activity; activities no run limited are absent.
func (e *Engine) LimitStats() map[string]LimitStats {
	e.limits.mu.Lock()
	ls := make([]*activityLimiter, 0, len(e.limits.by))
	names := make([]string, 0, len(e.limits.by))
	for name, l := range e.limits.by {
		names, ls = append(names, name), append(ls, l)
	}
	e.limits.mu.Unlock()
	out := make(map[string]LimitStats, len(ls))
	for i, l := range ls {
		l.mu.Lock()
		out[names[i]] = LimitStats{Running: l.running, Waiting: len(l.queue)}
		l.mu.Unlock()
	}
	return out
}

// limitOf is the limit a run's workflow declares on the activity of at; nil when none. lr.mu
// is held and lr resident.
func limitOf(lr *liveRun, at activityTask) *spec.Limit {
	if lr.w == nil || len(lr.w.Limits) == 0 {
		return nil
	}
	return lr.w.Limits[at.Plugin+"."+at.Activity]
}

// lookupLimit, given to launch as a try's limit, says the try has yet to look its limit up
// (Engine.lookupLimit): the launch came from a stored task, not from its run's commit.
var lookupLimit = &spec.Limit{}

// lookupLimit is limitOf for a try launched from a stored task, with the run's lock taken.
func (e *Engine) lookupLimit(at activityTask) *spec.Limit {
	lr := e.live(at.RunID)
	if lr == nil {
		return nil
	}
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if e.ensure(lr) != nil {
		return nil
	}
	return limitOf(lr, at)
}

// limitedTask says whether t is a try of an activity limits names: such a try waits for its
// limit before its dispatch mark, so a commit never marks it (reserveDispatch).
func limitedTask(t *history.Task, limits map[string]*spec.Limit) bool {
	if len(limits) == 0 || t.Kind != history.TaskActivity {
		return false
	}
	var at struct {
		Plugin   string `json:"plugin"`
		Activity string `json:"activity"`
	}
	if json.Unmarshal(t.Data, &at) != nil {
		return false
	}
	return limits[at.Plugin+"."+at.Activity] != nil
}
