package web

import (
	"container/list"
	"encoding/json"
	"html/template"
	"maps"
	"sync"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/spec/graph"
)

// foldedRun is what a run's page derives from the run's record and whole history: the fold,
// the step tree, the waits, the drawing's loop counts, the timeline. It is worked out once per
// version of the run (its record, whose LastSeq moves with every commit) and only read after,
// so one foldedRun serves concurrent requests, and a long run costs a whole fold when first
// read, then at each commit the fold of its new events into a copy (extendRun).
type foldedRun struct {
	key    string          // the record it was folded with (recordKey)
	events []history.Event // the history it was folded from

	err      error // the fold failed: the page says why (DocErr)
	view     *runview.View
	doc      *export.Document // the sections, without the events (export.Sections)
	steps    []runview.Step
	waits    []runview.Wait
	state    json.RawMessage
	stateErr string
	names    []string // signalNames
	declared bool
	forms    []signalForm
	inst     loopInstances // the loops' step instances, for the next version's fold
	loops    map[string]itemCounts
	gantt    []ganttRow
	span     time.Duration
	groups   activityLayout

	mu     sync.Mutex
	graphs map[string]template.HTML // drawings by their marks (graphKey)
}

// foldRun folds a run for its pages.
func foldRun(run history.Run, events []history.Event) *foldedRun {
	view, err := runview.Fold(run, events)
	if err != nil {
		return &foldedRun{key: recordKey(run), events: events, err: err}
	}
	inst := loopInstances{}
	inst.fold(events, caughtSeqs(view))
	return pageFold(run, view, inst)
}

// caughtSeqs are the seqs of the failures a catch handled.
func caughtSeqs(view *runview.View) map[uint64]bool {
	caught := map[uint64]bool{}
	for _, fl := range view.Failures {
		if fl.Caught {
			caught[fl.Seq] = true
		}
	}
	return caught
}

// extendRun is the fold of a run's newer version from an older one's and the events since
// (runview.View.Extend); nil when they do not follow it, for a fold of the whole.
func extendRun(old *foldedRun, run history.Run, more []history.Event) *foldedRun {
	if old.err != nil {
		return nil
	}
	view, err := old.view.Extend(run, more)
	if err != nil {
		return nil
	}
	inst := maps.Clone(old.inst)
	inst.fold(more, caughtSeqs(view))
	f := pageFold(run, view, inst)
	// The same spec with the same marks is the same drawing: a commit that changes no box
	// (a heartbeat, a try's start) draws nothing.
	old.mu.Lock()
	maps.Copy(f.graphs, old.graphs)
	old.mu.Unlock()
	return f
}

// pageFold works out a page's parts from a run's view. Everything a runview.View works out
// lazily (the spec, the step ids, the replay) is asked for here, so the view is only read
// afterwards.
func pageFold(run history.Run, view *runview.View, inst loopInstances) *foldedRun {
	events := view.Events
	f := &foldedRun{key: recordKey(run), events: events, inst: inst, graphs: map[string]template.HTML{}}
	view.StepIDs()
	f.view, f.doc = view, export.Sections(view)
	f.steps, f.waits = view.Steps(), view.Waits()
	f.state, f.stateErr = view.Live().State, view.Live().Err
	f.names, f.declared = signalNames(view)
	f.forms = signalForms(view)
	f.loops = inst.counts(f.waits)
	var last time.Time
	if n := len(events); n > 0 {
		last = events[n-1].Time
	}
	f.gantt, f.span = gantt(run, f.steps, view.Activities, last)
	f.groups = layoutActivities(view.Activities)
	return f
}

// graph is the run drawn with marks, drawn once per distinct marks (key is graphKey's).
func (f *foldedRun) graph(key string, marks map[string]graph.Mark) template.HTML {
	f.mu.Lock()
	g, ok := f.graphs[key]
	f.mu.Unlock()
	if ok {
		return g
	}
	g = graphSVG(f.view.Spec(), marks)
	f.mu.Lock()
	if len(f.graphs) >= maxGraphsPerRun {
		clear(f.graphs) // the page's links vary with its query: keep a few, never every one
	}
	f.graphs[key] = g
	f.mu.Unlock()
	return g
}

// recordKey identifies a version of a run: its whole record, which every commit to the run
// changes (LastSeq, status, close, search fields).
func recordKey(run history.Run) string {
	b, err := json.Marshal(run)
	if err != nil {
		return "" // never cached (runCache.put refuses an empty key)
	}
	return string(b)
}

// The cache of folded runs is bounded by runs and by the events they hold, least recently
// used first out; a run longer than the whole budget is folded per page and never kept.
const (
	maxCachedRuns   = 8
	maxCachedEvents = 400_000
	maxGraphsPerRun = 8
)

// runCache keeps the folds of the runs whose pages were read last, by run id.
type runCache struct {
	mu     sync.Mutex
	order  *list.List // of *foldedRun's run ids, most recent first
	byID   map[string]*list.Element
	events int
}

type cachedRun struct {
	id string
	f  *foldedRun
}

func newRunCache() *runCache {
	return &runCache{order: list.New(), byID: map[string]*list.Element{}}
}

// get returns the fold of run if the cache holds it for this very record (f), else the fold
// it holds of an older version of the run, to extend (older).
func (c *runCache) get(run history.Run) (f, older *foldedRun) {
	key := recordKey(run)
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[run.RunID]
	if !ok || key == "" {
		return nil, nil
	}
	c.order.MoveToFront(e)
	held := e.Value.(*cachedRun).f
	if held.key == key {
		return held, nil
	}
	if n := len(held.events); n > 0 && held.events[n-1].Seq <= run.LastSeq {
		return nil, held
	}
	return nil, nil
}

// put keeps f as the fold of run id, replacing an older one, within the bounds.
func (c *runCache) put(id string, f *foldedRun) {
	if f.key == "" || len(f.events) > maxCachedEvents {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[id]; ok {
		c.events -= len(e.Value.(*cachedRun).f.events)
		c.order.Remove(e)
		delete(c.byID, id)
	}
	c.byID[id] = c.order.PushFront(&cachedRun{id: id, f: f})
	c.events += len(f.events)
	for c.order.Len() > maxCachedRuns || c.events > maxCachedEvents {
		e := c.order.Back()
		old := e.Value.(*cachedRun)
		c.events -= len(old.f.events)
		c.order.Remove(e)
		delete(c.byID, old.id)
	}
}
