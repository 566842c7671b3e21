package spec

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const approvalSpec = `wend: v1
name: approval
signals:
  approve:
    schema:
      type: object
      required: [by]
      additionalProperties: false
      properties:
        by: {type: string, minLength: 1}
        lines: {type: array, items: {type: object, properties: {sku: {type: string}}}}
        extra: {type: object, additionalProperties: {type: object, properties: {v: {type: number}}}}
        tags: {type: object, patternProperties: {"^t": {type: string}}}
  stop: {}
steps:
  - id: a
    wait_for_signal: approve
    set:
      %s
`

// TestSignalFieldRefsAccepted: reads the schema allows pass validate, however written.
func TestSignalFieldRefsAccepted(t *testing.T) {
	for _, set := range []string{
		`x: "${{ signal.by }}"`,
		`x: "${{ signal?.by ?? 'nobody' }}"`,
		`x: "${{ signal['by'] }}"`,
		`x: "${{ output.by }}"`,
		`x: "${{ signal.lines[0].sku }}"`,
		`x: "${{ signal.extra.anything.v }}"`,
		`x: "${{ signal.tags.tall }}"`,
		`x: "${{ signal[input.key] }}"`, // a computed key: not checked
		`x: "${{ map(signal.lines, #.sku) }}"`,
	} {
		_, ds := Load("w.wend.yaml", []byte(strings.Replace(approvalSpec, "%s", set, 1)))
		if ds.HasErrors() {
			t.Errorf("%s: %v", set, ds)
		}
	}
}

// TestSignalFieldRefsRefused: reads of fields the schema does not have are findings.
func TestSignalFieldRefsRefused(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{`x: "${{ signal.bye }}"`, `signal.bye: the data of signal "approve" has no field "bye" (did you mean "by"?)`},
		{`x: "${{ signal?.lines[0].skux }}"`, `signal.lines[0].skux: the data of signal "approve" has no field "skux"`},
		{`x: "${{ signal.extra.a.w }}"`, `signal.extra.a.w: the data of signal "approve" has no field "w"`},
		{`x: "${{ signal.by + output.nope }}"`, `output.nope: the data of signal "approve" has no field "nope"`},
	} {
		_, ds := Load("w.wend.yaml", []byte(strings.Replace(approvalSpec, "%s", c.set, 1)))
		if !ds.HasErrors() || !strings.Contains(ds.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.set, ds, c.want)
		}
	}
}

// TestWorkflowWithoutSignalsTakesAny: no `signals:` is the old behaviour: any wait, any send.
func TestWorkflowWithoutSignalsTakesAny(t *testing.T) {
	w, ds := Load("w.wend.yaml", []byte("wend: v1\nname: w\nsteps:\n  - wait_for_signal: anything\n    set: {x: \"${{ signal.whatever }}\"}\n"))
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if w.Signals != nil {
		t.Fatalf("Signals = %v, want nil", w.Signals)
	}
	if err := w.CheckSignal("other", json.RawMessage(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
}

func TestCheckSignal(t *testing.T) {
	w, ds := Load("w.wend.yaml", []byte(strings.Replace(approvalSpec, "%s", `x: "${{ signal.by }}"`, 1)))
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	for _, c := range []struct {
		name, data string
		err        error
		want       string
	}{
		{"approve", `{"by":"ann"}`, nil, ""},
		{"approve", ` {"by":"ann","lines":[{"sku":"a"}]} `, nil, ""},
		{"stop", `[1,2]`, nil, ""}, // declared without a schema: any data
		{"stop", ``, nil, ""},
		{"aprove", `{"by":"ann"}`, ErrUndeclaredSignal, `signal "aprove" is not declared by workflow approval (did you mean "approve"?); it declares: approve, stop`},
		{"approve", `{}`, ErrSignalData, `signal "approve": its data does not match the schema under signals.approve: data.by: missing required property`},
		{"approve", ``, ErrSignalData, `signal "approve": its data does not match the schema under signals.approve: data: expected object, got null`},
		{"approve", `{"by":""}`, ErrSignalData, `data.by: `},
		{"approve", `{"by":"ann","other":1}`, ErrSignalData, `data.other`},
		{"approve", `{"by":`, ErrSignalData, `signal "approve": data is not JSON`},
	} {
		err := w.CheckSignal(c.name, json.RawMessage(c.data))
		if c.err == nil {
			if err != nil {
				t.Errorf("%s %s: %v", c.name, c.data, err)
			}
			continue
		}
		if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %v containing %q", c.name, c.data, err, c.err, c.want)
		}
	}
}
