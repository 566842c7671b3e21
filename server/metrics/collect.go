package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
)

func metricDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// HELP texts are for people reading a dashboard: no Go identifiers, no field names. The name
// labels (workflow, activity) are bounded: see maxLabelNames.
var (
	descRuns         = metricDesc("wend_runs", "Runs in the store by status and workflow name.", "status", "workflow")
	descCatchingUp   = metricDesc("wend_metrics_catching_up", "1 while the server reads every run once to count it (its first start over runs no wend counted); the step, attempt, activity and failure families are absent meanwhile.")
	descSteps        = metricDesc("wend_steps", "Leaf steps of the stored runs by status (none: no event yet, or skipped).", "status")
	descAttempts     = metricDesc("wend_activity_attempts", "Activity tries recorded in the stored runs by outcome and activity.", "outcome", "activity")
	descActivities   = metricDesc("wend_activities", "Activity executions of the stored runs by status and activity.", "status", "activity")
	descFailures     = metricDesc("wend_failures_total", "Failures recorded in the stored histories by category and workflow name.", "category", "workflow")
	descNonRetryable = metricDesc("wend_failures_non_retryable_total", "Failures recorded as non-retryable, by workflow name.", "workflow")
	descRetryBacklog = metricDesc("wend_retry_backlog", "Activity executions of open runs waiting out a retry backoff.")
	descPendingActs  = metricDesc("wend_activities_pending", "Activity executions of open runs not finished (scheduled, running or retrying).")
	descTimers       = metricDesc("wend_timers_pending", "Durable timers of open runs not fired or cancelled yet.")
	descSignals      = metricDesc("wend_signals_pending", "Signals received by open runs and not yet taken by a wait.")
	descStepLatency  = metricDesc("wend_step_duration_seconds", "Finished leaf steps: time from their first to their last event, by step kind.", "kind")
	descStale        = metricDesc("wend_stale_outcomes_total", "Activity outcomes dropped because their attempt was superseded (since this process began).")
	descDamagedTasks = metricDesc("wend_damaged_tasks_total", "Damaged task records the engine set aside to rebuild from history (since this process began); wend check names them.")
	descCallsMax     = metricDesc("wend_activity_calls_max", "Activity calls the engine makes at once at most (wend serve --max-activities).")
	descCallsRunning = metricDesc("wend_activity_calls_running", "Activity tries in progress now, each holding one of the engine's call slots.")
	descCallsWaiting = metricDesc("wend_activity_calls_waiting", "Activity tries due now that wait for a free call slot; their try has not started.", "limit")
	descLimitRunning = metricDesc("wend_activity_limit_running", "Tries of an activity a workflow's limits: bound, admitted and not ended yet.", "activity")
	descLimitWaiting = metricDesc("wend_activity_limit_waiting", "Tries of an activity a workflow's limits: bound, waiting for the limit; their try has not started.", "activity")
	descRunsQueued   = metricDesc("wend_runs_queued", "Runs waiting, queued, for a place under their workflow's concurrency key; they have not started.")
	descEngineUp     = metricDesc("wend_engine_up", "1 while the engine drives runs, 0 after it stopped (or when none runs here).")
	descPlugProcs    = metricDesc("wend_plugin_processes", "Plugin processes alive.")
	descPlugStarts   = metricDesc("wend_plugin_starts_total", "Plugin processes started since this process began.")
	descPlugRestarts = metricDesc("wend_plugin_restarts_total", "Plugin processes started again after the previous one died or was killed.")
)

// runSummary is what one run contributes to the metrics. Activity counts are keyed by
// activity name (plugin.activity) first, then status or outcome.
type runSummary struct {
	name, status string // the run's workflow name and status
	lastSeq      uint64
	steps        map[string]int
	attempts     map[string]map[string]int
	activities   map[string]map[string]int
	failures     map[string]int
	nonRetryable int
	backlog      runview.Backlog
	signals      int
	latency      map[string]*stepHist // by step kind
}

func newRunSummary() *runSummary {
	return &runSummary{steps: map[string]int{}, attempts: map[string]map[string]int{}, activities: map[string]map[string]int{},
		failures: map[string]int{}, latency: map[string]*stepHist{}}
}

// hist is a histogram's cumulative state, summed over runs into a const histogram.
type stepHist struct {
	count   uint64
	sum     float64
	buckets []uint64 // per upper bound, non-cumulative
}

func (h *stepHist) observe(v float64) {
	if h.buckets == nil {
		h.buckets = make([]uint64, len(stepBuckets))
	}
	h.count++
	h.sum += v
	for i, b := range stepBuckets {
		if v <= b {
			h.buckets[i]++
			return
		}
	}
}

// add adds o's observations to h, or takes them away with sign -1.
func (h *stepHist) add(o *stepHist, sign int) {
	if h.buckets == nil {
		h.buckets = make([]uint64, len(stepBuckets))
	}
	h.count += uint64(sign) * o.count // unsigned wrap-around subtracts
	h.sum += float64(sign) * o.sum
	for i, n := range o.buckets {
		h.buckets[i] += uint64(sign) * n
	}
}

func (h *stepHist) cumulative() map[float64]uint64 {
	out := make(map[float64]uint64, len(stepBuckets))
	var acc uint64
	for i, b := range stepBuckets {
		if h.buckets != nil {
			acc += h.buckets[i]
		}
		out[b] = acc
	}
	return out
}

// summarize reads one run's history into its contribution.
func summarize(r history.Run, events []history.Event, specs *runview.Specs) (*runSummary, error) {
	doc, err := runview.Fold(r, events)
	if err != nil {
		return nil, err
	}
	doc.UseSpecs(specs)
	s := newRunSummary()
	s.name, s.status, s.lastSeq = r.Name, r.Status, r.LastSeq
	for _, a := range doc.Activities {
		name := a.Plugin + "." + a.Activity
		count(s.activities, name, a.Status, 1)
		for _, at := range a.Attempts {
			count(s.attempts, name, at.Outcome, 1)
		}
	}
	for _, f := range doc.Failures {
		s.failures[f.FailureCategory]++
		if f.NonRetryable {
			s.nonRetryable++
		}
	}
	if r.Open() {
		s.backlog = doc.Metrics.Backlog
		s.signals = doc.Metrics.Signals.Pending
	}
	for _, row := range doc.Steps() {
		if !row.Leaf() {
			continue
		}
		s.steps[row.Status]++
		if d := row.Duration(); d > 0 || runview.StepDone(row.Status) && !row.End.IsZero() {
			h := s.latency[row.Kind]
			if h == nil {
				h = &stepHist{}
				s.latency[row.Kind] = h
			}
			h.observe(d.Seconds())
		}
	}
	return s, nil
}

// count adds n to m[outer][inner].
func count(m map[string]map[string]int, outer, inner string, n int) {
	if m[outer] == nil {
		m[outer] = map[string]int{}
	}
	m[outer][inner] += n
}

// collector reads the store's run counts and the summaries of the runs changed since the
// previous scrape (sums.go) at each scrape.
type collector struct {
	m     *Metrics
	store history.Store
	eng   *engine.Engine // nil: no engine drives the store here
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRuns, descSteps, descAttempts, descActivities, descFailures, descNonRetryable,
		descRetryBacklog, descPendingActs, descTimers, descSignals, descStepLatency, descStale, descDamagedTasks, descEngineUp,
		descPlugProcs, descPlugStarts, descPlugRestarts, descTraceDrops, descCatchingUp} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	c.engine(gauge, counter)
	c.plugins(gauge, counter)
	c.traceDrops(ch)
	c.m.mu.Lock()
	k := c.m.counters
	c.m.mu.Unlock()
	if k.catchingUp() {
		gauge(descCatchingUp, 1)
		c.runsWhileCatchingUp(gauge)
		return
	}
	gauge(descCatchingUp, 0)
	t, err := c.m.sums.totals(c.store, k.active())
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descRuns, err)
		return
	}
	// Every status, outcome and category of a name that has any is present, at zero if need
	// be, so rate() and ratios work from the first event on.
	for wf, byStatus := range t.runs {
		for _, st := range server.RunStatuses {
			gauge(descRuns, byStatus[st], st, wf)
		}
	}
	for _, st := range []string{runview.StepNone, runview.StepRunning, runview.StepRetrying, runview.StepWaiting, runview.StepCompleted, runview.StepFailed, runview.StepCancelled, runview.StepCaught} {
		gauge(descSteps, t.steps[st], st)
	}
	for act, byOutcome := range t.attempts {
		for _, o := range []string{runview.AttemptScheduled, runview.AttemptRunning, runview.AttemptCompleted, runview.AttemptFailed, runview.AttemptTimedOut, runview.AttemptCancelled} {
			gauge(descAttempts, byOutcome[o], o, act)
		}
	}
	for act, byStatus := range t.activities {
		for _, st := range []string{runview.ActivityScheduled, runview.ActivityRunning, runview.ActivityRetrying, runview.ActivityCompleted, runview.ActivityFailed, runview.ActivityCancelled} {
			gauge(descActivities, byStatus[st], st, act)
		}
	}
	for wf, byCategory := range t.failures {
		for _, cat := range knownCategories {
			if _, seen := byCategory[cat]; !seen {
				byCategory[cat] = 0
			}
		}
		for cat, n := range byCategory {
			counter(descFailures, int64(n), cat, wf)
		}
		counter(descNonRetryable, int64(t.nonRetryable[wf]), wf)
	}
	gauge(descRetryBacklog, t.backlog.RetryingActivities)
	gauge(descPendingActs, t.backlog.PendingActivities)
	gauge(descTimers, t.backlog.PendingTimers)
	gauge(descSignals, t.signals)
	for kind, h := range t.latency {
		ch <- prometheus.MustNewConstHistogram(descStepLatency, h.count, h.sum, h.cumulative(), kind)
	}
}

func (c *collector) engine(gauge func(*prometheus.Desc, int, ...string), counter func(*prometheus.Desc, int64, ...string)) {
	up := 0
	if e := c.eng; e != nil {
		counter(descStale, e.StaleOutcomes())
		counter(descDamagedTasks, e.DamagedTasks())
		cs := e.CallStats()
		gauge(descCallsMax, cs.Max)
		gauge(descCallsRunning, cs.Running)
		gauge(descCallsWaiting, cs.WaitingSlot, "max_activities")
		for name, ls := range e.LimitStats() { // bounded: only names a limits: declares
			gauge(descLimitRunning, ls.Running, name)
			gauge(descLimitWaiting, ls.Waiting, name)
		}
		gauge(descRunsQueued, int(e.QueuedRuns()))
		if e.Err() == nil {
			up = 1
		}
	}
	gauge(descEngineUp, up)
}

func (c *collector) plugins(gauge func(*prometheus.Desc, int, ...string), counter func(*prometheus.Desc, int64, ...string)) {
	c.m.mu.Lock()
	f := c.m.plugins
	c.m.mu.Unlock()
	if f == nil {
		return
	}
	p := f()
	gauge(descPlugProcs, p.Processes)
	counter(descPlugStarts, int64(p.Starts))
	counter(descPlugRestarts, int64(p.Restarts))
}

// knownCategories are the failure categories history defines; each is exported even at zero.
var knownCategories = []string{history.CategoryActivity, history.CategoryTimeout, history.CategoryCancelled,
	history.CategoryTerminated, history.CategoryChildWorkflow, history.CategoryExpression,
	history.CategoryStructuralLimit, history.CategoryInternal, history.CategoryPluginStart, runview.Unclassified}

// runsWhileCatchingUp serves the runs gauge from the store's kept counts, which read no run,
// while the counters' first read of every run is under way.
func (c *collector) runsWhileCatchingUp(gauge func(*prometheus.Desc, int, ...string)) {
	rc, ok := c.store.(runCounter)
	if !ok {
		return
	}
	runs, err := rc.RunCounts()
	if err != nil {
		return // the next scrape tries again; the catching-up gauge says why the rest is absent
	}
	names := make(map[string]bool, len(runs))
	for wf := range runs {
		names[wf] = true
	}
	bound := boundNames(names)
	byLabel := map[string]map[string]int{}
	for wf, byStatus := range runs {
		for st, n := range byStatus {
			count(byLabel, bound.label(wf), st, n)
		}
	}
	for wf, byStatus := range byLabel {
		for _, st := range server.RunStatuses {
			gauge(descRuns, byStatus[st], st, wf)
		}
	}
}
