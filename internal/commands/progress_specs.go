package commands

import (
	"crypto/sha256"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// specsSeen keeps the specs of the runs progress saw start, by file and text, so `wend
// serve` loads a workflow's text once, not at every run of it (loading a long spec is a large
// part of a short run; docs/performance.md). The specs are only read. Its owner's lock guards it.
type specsSeen map[[sha256.Size]byte]*spec.Workflow

// maxSeenSpecs bounds specsSeen; past it the map starts afresh (distinct texts are few).
const maxSeenSpecs = 256

// of is runview.SpecOf for a run's Started: its workflow without children, nil when the
// text does not load.
func (m *specsSeen) of(st history.Started) *spec.Workflow {
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
	(*m)[key] = w
	return w
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
