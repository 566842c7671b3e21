package engine

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// specCache holds the parsed specs runs are replayed with, by file and text: runs of one
// workflow share one *spec.Workflow (the interpreter only reads it, and compiled expressions
// run concurrently), so a restart over many open runs, or the rebuild of an evicted run
// (idle.go), parses and checks each spec text once instead of once a run.
type specCache struct {
	mu sync.Mutex
	m  map[string]*spec.Workflow
}

// maxCachedSpecs bounds the cache; past it the cache starts afresh (distinct spec texts
// are few: one per version of each workflow file with open runs).
const maxCachedSpecs = 1024

func (c *specCache) load(st history.Started) (*spec.Workflow, error) {
	key := st.SpecFile + "\x00" + sha([]byte(st.SpecSource))
	c.mu.Lock()
	w := c.m[key]
	c.mu.Unlock()
	if w != nil {
		return w, nil
	}
	w, ds := (&spec.Loader{SkipChildren: true}).Load(st.SpecFile, []byte(st.SpecSource))
	if ds.HasErrors() {
		return nil, fmt.Errorf("recorded spec no longer loads (was it written by a newer wend?):\n%s", ds.Error())
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedSpecs {
		c.m = map[string]*spec.Workflow{}
	}
	c.m[key] = w
	c.mu.Unlock()
	return w, nil
}

// cached returns the parsed spec of a run whose recorded file and text hash are given, if
// the cache holds it (as load would key it), without reading the run's history.
func (c *specCache) cached(file, sha256 string) *spec.Workflow {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[file+"\x00"+sha256]
}

// replayWith replays a run's events into a fresh state machine over w. decoded says st was
// decoded from evs[0] (the state machine then does not decode it again).
func replayWith(w *spec.Workflow, st history.Started, evs []history.Event, decoded bool) (*liveRun, error) {
	in := interpreter.New(w, st)
	replay := in.Replay
	if decoded {
		replay = in.ReplayDecoded
	}
	if err := replay(evs); err != nil {
		return nil, err
	}
	return &liveRun{dir: filepath.Dir(st.SpecFile), workflowID: st.WorkflowID, w: w, interp: in}, nil
}
