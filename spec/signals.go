package spec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/wendflow/wend/api"
	"go.yaml.in/yaml/v3"
)

// SignalDecl is one signal a workflow declares under `signals:`: its name and the JSON
// Schema its data must pass.
type SignalDecl struct {
	Name        string
	Description string
	Schema      any                // the `schema` as a JSON value; nil when absent (any data)
	DataSchema  *jsonschema.Schema // Schema compiled; nil when absent
	Pos         Pos
}

// signals decodes `signals: {NAME: {schema, description}}`. Shapes are the JSON Schema's to
// report; a name that is not a mapping is still declared, with no schema.
func (d *decoder) signals(w *Workflow, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return
	}
	w.Signals = map[string]*SignalDecl{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		sd := &SignalDecl{Name: k.Value, Pos: posOf(k)}
		path := "signals." + k.Value
		d.fields(v, path, []string{"schema", "description"}, func(key string, _, v2 *yaml.Node) {
			switch key {
			case "description":
				sd.Description = str(v2)
			case "schema":
				if jd, err := yamlToJSON(v2); err == nil {
					sd.Schema = jd.value
				}
				if d.signalSchemas == nil {
					d.signalSchemas = map[string]*yaml.Node{}
				}
				d.signalSchemas[k.Value] = v2
			}
		})
		if _, dup := w.Signals[sd.Name]; !dup {
			w.SignalOrder = append(w.SignalOrder, sd.Name)
		}
		w.Signals[sd.Name] = sd
	}
}

// Refusals of CheckSignal, for errors.Is.
var (
	// ErrUndeclaredSignal: the workflow declares its signals and not this one.
	ErrUndeclaredSignal = api.ErrUndeclaredSignal
	// ErrSignalData: the signal's data fails the schema its declaration gives.
	ErrSignalData = api.ErrSignalData
)

// SignalError is CheckSignal's refusal: Err is ErrUndeclaredSignal or ErrSignalData.
type SignalError struct {
	Err      error
	Message  string
	Problems []string // ErrSignalData: "data.PATH: message" lines, sorted
}

func (e *SignalError) Error() string { return e.Message }
func (e *SignalError) Unwrap() error { return e.Err }

// CheckSignal says whether the workflow takes signal name with data (JSON; empty is null),
// before anything is recorded: a workflow that declares signals refuses other names, and a
// declared signal with a schema refuses data that fails it. A workflow that declares no
// signals takes any.
func (w *Workflow) CheckSignal(name string, data json.RawMessage) error {
	return w.CheckSignalContext(context.Background(), name, data)
}

// CheckSignalContext is CheckSignal whose schema validation stops, returning ctx's error, when
// ctx is done.
func (w *Workflow) CheckSignalContext(ctx context.Context, name string, data json.RawMessage) error {
	if w == nil || w.Signals == nil {
		return nil
	}
	sd, ok := w.Signals[name]
	if !ok {
		msg := fmt.Sprintf("signal %q is not declared by workflow %s", name, oneLine(w.Name))
		if s := suggest(name, w.SignalOrder); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		msg += "; it declares: " + nameList(w.SignalOrder)
		if len(w.SignalOrder) == 0 {
			msg = fmt.Sprintf("signal %q is not declared by workflow %s, which declares no signals (signals: {})", name, oneLine(w.Name))
		}
		return &SignalError{Err: ErrUndeclaredSignal, Message: msg}
	}
	if sd.DataSchema == nil {
		return nil
	}
	var v any
	if len(bytes.TrimSpace(data)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return &SignalError{Err: ErrSignalData, Message: fmt.Sprintf("signal %q: data is not JSON: %v", name, err)}
		}
	}
	err := validateAt(ctx, sd.DataSchema, "data", v)
	if err == nil {
		return nil
	}
	var ie *InputError
	if !errors.As(err, &ie) {
		return &SignalError{Err: ErrSignalData, Message: fmt.Sprintf("signal %q: %v", name, err)}
	}
	return &SignalError{Err: ErrSignalData, Problems: ie.Problems,
		Message: fmt.Sprintf("signal %q: its data does not match the schema under signals.%s: %s", name, name, strings.Join(ie.Problems, "; "))}
}
