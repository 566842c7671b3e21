package metrics

import (
	"sync"

	"github.com/wendflow/wend/runview"
)

// shape is what the counters need of a run's spec: its leaf steps, the rows of runview's step
// tree the step metrics count, and whether it waits for signals. The runs of one spec text
// share it.
type shape struct {
	leaves  []runview.LeafStep
	signals bool // an open run's signal waits need a replay of its history (runview.Live)
	// file and source are the text's, which the held histories of its runs share (runState.compact).
	file, source string
}

// leafs is nil for a spec that does not load: such a run has no step rows.
func (s *shape) leafs() []runview.LeafStep {
	if s == nil {
		return nil
	}
	return s.leaves
}

// shapeCache loads each spec text once for the runs that record it.
type shapeCache struct {
	mu sync.Mutex
	m  map[string]*shape
	// specs are the texts loaded, each once: for the shapes, and for the runs whose summary
	// folds their history (a spec that waits for signals) at each settle.
	specs runview.Specs
}

// shapeCacheMax bounds the texts the cache keeps; past it, it starts over (the runs keep theirs).
const shapeCacheMax = 256

// of is the shape of the spec text a WorkflowStarted recorded (runview.SpecOf); nil when it
// does not load.
func (c *shapeCache) of(file, source string) *shape {
	key := file + "\x00" + source
	c.mu.Lock()
	sh, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return sh
	}
	if leaves, signals, ok := c.specs.Leaves(file, source); ok {
		sh = &shape{leaves: leaves, signals: signals, file: file, source: source}
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= shapeCacheMax {
		c.m = map[string]*shape{}
	}
	c.m[key] = sh
	c.mu.Unlock()
	return sh
}
