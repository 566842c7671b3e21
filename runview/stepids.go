package runview

import (
	"crypto/sha256"
	"sync"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// startedIDs caches StartedStepIDs by spec file and text: the runs of one workflow share
// their spec, so a busy engine parses each text once, not once a run.
var startedIDs struct {
	sync.Mutex
	m map[[sha256.Size]byte]map[string]string
}

// maxStartedIDs bounds the cache; past it the cache starts afresh (distinct spec texts are
// few: one per version of each workflow file).
const maxStartedIDs = 256

// StartedStepIDs maps the static step paths of the spec a run started with (its
// WorkflowStarted payload) to their ids; empty when the text does not load. Safe for
// concurrent use. The map is shared: read it, never change it.
func StartedStepIDs(st history.Started) map[string]string {
	key := sha256.Sum256([]byte(st.SpecFile + "\x00" + st.SpecSource))
	startedIDs.Lock()
	ids, ok := startedIDs.m[key]
	startedIDs.Unlock()
	if ok {
		return ids
	}
	w, ds := (&spec.Loader{SkipChildren: true}).Load(st.SpecFile, []byte(st.SpecSource))
	if ds.HasErrors() {
		w = nil
	}
	ids = w.StepIDs()
	startedIDs.Lock()
	if startedIDs.m == nil || len(startedIDs.m) >= maxStartedIDs {
		startedIDs.m = map[[sha256.Size]byte]map[string]string{}
	}
	startedIDs.m[key] = ids
	startedIDs.Unlock()
	return ids
}
