package commands

import (
	"crypto/sha256"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/spec"
)

// specsSeen keeps the specs of the runs progress saw start, by file and text, so `wend
// serve` loads a workflow's text once, not at every run of it (loading a long spec is a large
// part of a short run; docs/performance.md). The specs are only read. Its owner's lock guards it.
type specsSeen map[[sha256.Size]byte]*specNames

// specNames is what names the steps of the runs of one spec text, shared by them: a server
// with thousands of runs of a workflow keeps its ids once, not once a run.
type specNames struct {
	w   *spec.Workflow // nil: the text did not load, or the run's start was not seen
	ids map[string]string
	// catches are the paths of the steps with a catch: a failure they handle says caught.
	catches map[string]bool
	loops   bool // the spec has a for_each: its runs keep their input for the loops' totals
}

// noSpec names the steps of a run whose spec is unknown: by place.
var noSpec = namesOf(nil)

func namesOf(w *spec.Workflow) *specNames {
	sn := &specNames{w: w, ids: w.StepIDs(), catches: runview.CatchPaths(w)}
	if w != nil {
		w.Walk(func(s *spec.Step) { sn.loops = sn.loops || s.Kind == spec.KindForEach })
	}
	return sn
}

// maxSeenSpecs bounds specsSeen; past it the map starts afresh (distinct texts are few).
const maxSeenSpecs = 256

// of is what names the steps of a run from its Started: its workflow without children (nil
// when the text does not load), its step ids and catches.
func (m *specsSeen) of(st history.Started) *specNames {
	h := sha256.New()
	h.Write([]byte(st.SpecFile))
	h.Write([]byte{0})
	h.Write([]byte(st.SpecSource))
	var key [sha256.Size]byte
	h.Sum(key[:0])
	if w, ok := (*m)[key]; ok {
		return w
	}
	w, ds := (&spec.Loader{SkipChildren: true}).Load(st.SpecFile, []byte(st.SpecSource))
	if ds.HasErrors() {
		w = nil
	}
	if *m == nil || len(*m) >= maxSeenSpecs {
		*m = specsSeen{}
	}
	sn := namesOf(w)
	(*m)[key] = sn
	return sn
}

// startedOf reads a run's WorkflowStarted payload from the store: the first event of its
// history, which the engine replays whole when it resumes the run anyway.
func startedOf(st history.Store, runID string) (history.Started, bool) {
	evs, err := st.Events(runID, 0)
	if err != nil || len(evs) == 0 || evs[0].Type != history.WorkflowStarted {
		return history.Started{}, false
	}
	s, err := history.DataOf[history.Started](evs[0])
	return s, err == nil
}
