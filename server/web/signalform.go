package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/spec"
)

// signalForm is the form that answers a signal the run waits for now, built from the
// signal's declared schema (schemaForm; a JSON box when it declares none).
type signalForm struct {
	Name        string
	Description string
	Form        schemaForm
}

// signalForms are the forms of the signals the run waits for now, in the order it began to
// wait; a signal the workflow does not declare gets none (the general form sends it).
func signalForms(view *runview.View) []signalForm {
	w := view.Spec()
	if w == nil || w.Signals == nil || !view.Open() {
		return nil
	}
	var out []signalForm
	var seen []string
	for _, wt := range view.Waits() {
		if wt.Kind != runview.WaitSignal || slices.Contains(seen, wt.Signal) {
			continue
		}
		seen = append(seen, wt.Signal)
		if d := w.Signals[wt.Signal]; d != nil {
			out = append(out, signalForm{Name: d.Name, Description: clip(d.Description), Form: buildForm(d.Schema)})
		}
	}
	return out
}

// WaitingSignals names the signals the run waits for now, for the script to see a change.
func (v *runView) WaitingSignals() string {
	var names []string
	for _, w := range v.Waits {
		if w.Kind == runview.WaitSignal && !slices.Contains(names, w.Signal) {
			names = append(names, w.Signal)
		}
	}
	return strings.Join(names, ",")
}

// postedSignal reads a signal form's fields back into the signal's data (schemaForm.value),
// with the schema the run's own spec declares.
func (u *UI) postedSignal(r *http.Request, id, name string) ([]byte, error) {
	p, err := u.s.Events(id, 0)
	if err != nil {
		return nil, err
	}
	var w *spec.Workflow
	if len(p.Events) > 0 {
		w = runview.SpecOf(p.Events[0])
	}
	if w == nil || w.Signals == nil || w.Signals[name] == nil {
		return nil, api.NewError(api.CodeBadRequest, "signal "+name+": the run's workflow declares no form for it")
	}
	return buildForm(w.Signals[name].Schema).value(r.PostForm)
}
