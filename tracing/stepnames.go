package tracing

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/wendflow/wend/history"
)

// NameSteps gives the provider a way to read a run's step ids from its WorkflowStarted
// payload (the spec text it runs): the static path of each step that has an id, to that id.
// Spans of such a step are then named by the id ("step charge", not "step steps[0]") and carry
// it as wend.step.id beside the path (wend.step.path, which every step and try span has). The caller parses the spec; this
// package does not. Call it before NewObserver and RunSpans.
func (p *Provider) NameSteps(stepIDs func(history.Started) map[string]string) {
	if p != nil {
		p.stepIDs = stepIDs
	}
}

// stepName is what a span calls the step at path: its id when the spec gives it one, else
// the path.
func (rt *runTrace) stepName(path string) string {
	if rt.ids == nil {
		return path
	}
	if id := rt.ids[history.StaticStepPath(path)]; id != "" {
		return id
	}
	return path
}

// stepIDAttr is a step span's wend.step.id, when the step has one. (Every step and try span
// has wend.step.path, whose for_each item numbers tell items apart; a try span's step id is
// its parent's: a try exported by a Temporal worker knows no spec.)
func (rt *runTrace) stepIDAttr(path string) (attribute.KeyValue, bool) {
	if rt.ids == nil {
		return attribute.KeyValue{}, false
	}
	if id := rt.ids[history.StaticStepPath(path)]; id != "" {
		return attribute.String("wend.step.id", id), true
	}
	return attribute.KeyValue{}, false
}
