package runview

import (
	"sync"

	"github.com/wendflow/wend/spec"
)

// Specs loads spec texts as SpecOf does, each text once, for the views of many runs of a text
// (View.UseSpecs): a server summing thousands of runs of one workflow loads it once, not once
// a run. The views and the interpreter only read a spec, so its runs share the load. Safe for
// concurrent use; the zero value is ready.
type Specs struct {
	mu sync.Mutex
	m  map[specText]*spec.Workflow
}

type specText struct{ file, source string }

// specsMax bounds the texts Specs keeps; past it, it starts over (distinct texts are few).
const specsMax = 256

// load is loadSpec of the text, loaded once; nil when it does not load.
func (c *Specs) load(file, source string) *spec.Workflow {
	key := specText{file, source}
	c.mu.Lock()
	w, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return w
	}
	w = loadSpec(file, source)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= specsMax {
		c.m = map[specText]*spec.Workflow{}
	}
	c.m[key] = w
	c.mu.Unlock()
	return w
}

// UseSpecs makes the view load its spec text (Spec, and Steps, StepIDs and Live through it)
// from c, before any of them is called.
func (v *View) UseSpecs(c *Specs) { v.specs = c }
