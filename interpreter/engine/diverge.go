package engine

import (
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// Divergence is where a run's history and another file part (wend validate --against).
type Divergence = interpreter.Divergence

// Diverge replays a run's recorded history on w, a file other than the one the run started
// with, and returns where w would decide otherwise, or nil when it takes the same decisions.
func Diverge(w *spec.Workflow, evs []history.Event) (*Divergence, error) {
	return interpreter.Diverge(w, evs)
}
