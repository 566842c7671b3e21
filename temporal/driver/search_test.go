package driver

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/temporal/wire"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

const searchSpec = sim.Head + `search:
  customer: {type: string, value: "${{ input.customer }}"}
  amount: {type: number, value: "${{ state.total }}"}
  vip: {type: bool, value: "${{ input.customer == 'ann' }}"}
  paid_at: {type: time, value: "${{ state.paid_at }}"}
  note: {type: string, value: "${{ input.customer }}"}
steps:
  - id: a
    activity: p.echo
    with: {total: 12.5, paid_at: "2026-05-01T10:00:00+02:00"}
    set: {total: "${{ output.total }}", paid_at: "${{ output.paid_at }}"}
  - wait_for_signal: more
    set: {total: null}
`

// upserts records every UpsertTypedSearchAttributes call of a run, as attribute name to value.
type upserts struct {
	mu    sync.Mutex
	calls []map[string]any
}

func (u *upserts) listen(e *testsuite.TestWorkflowEnvironment) {
	e.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		m := map[string]any{}
		for k, v := range sa.GetUntypedValues() {
			m[k.GetName()] = v
		}
		u.mu.Lock()
		u.calls = append(u.calls, m)
		u.mu.Unlock()
	}).Return(nil)
}

// TestSearchAttributesFollowState: the driver sets the registered attributes of the run's
// search fields at start and when they change, unsets one whose field lost its value, and
// leaves alone a field whose attribute the namespace lacks or has with another type.
func TestSearchAttributesFollowState(t *testing.T) {
	e, _ := newEnv(t)
	var u upserts
	u.listen(e)
	e.RegisterDelayedCallback(func() { e.SignalWorkflow(wire.SignalName, wire.Signal{Name: "more"}) }, time.Minute)
	in := startInput(searchSpec, map[string]any{"customer": "ann"}, nil)
	in.SearchAttributes = map[string]string{"wend_customer": "Keyword", "wend_amount": "Double",
		"wend_vip": "Bool", "wend_paid_at": "Datetime", "wend_note": "Text", "other": "Keyword"}
	run(t, e, in)

	paid := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	want := []map[string]any{
		{"wend_customer": "ann", "wend_vip": true},
		{"wend_amount": 12.5, "wend_paid_at": paid},
		{}, // wend_amount unset: the SearchAttributes the mock gets hold no value for an unset key
	}
	if len(u.calls) != len(want) {
		t.Fatalf("%d upserts %v, want %d %v", len(u.calls), u.calls, len(want), want)
	}
	for i := range want {
		if !reflect.DeepEqual(normalTimes(u.calls[i]), want[i]) {
			t.Errorf("upsert %d = %#v, want %#v", i, u.calls[i], want[i])
		}
	}
}

// normalTimes makes the time values of m comparable with DeepEqual.
func normalTimes(m map[string]any) map[string]any {
	for k, v := range m {
		if tm, ok := v.(time.Time); ok {
			m[k] = tm.UTC()
		}
	}
	return m
}

// TestSearchAttributesNoneRegistered: a run started without registered attributes (or before
// the driver kept them) sets none, so an unregistered attribute never fails a workflow task.
func TestSearchAttributesNoneRegistered(t *testing.T) {
	e, _ := newEnv(t)
	var u upserts
	u.listen(e)
	e.RegisterDelayedCallback(func() { e.SignalWorkflow(wire.SignalName, wire.Signal{Name: "more"}) }, time.Minute)
	run(t, e, startInput(searchSpec, map[string]any{"customer": "ann"}, nil))
	if len(u.calls) != 0 {
		t.Fatalf("upserts %v, want none", u.calls)
	}
}

// TestSearchAttributesBeforeTheMarker: a run whose history has no search-attributes marker
// (an older worker ran its first task) replays and goes on without upserts, so its history
// stays the one recorded.
func TestSearchAttributesBeforeTheMarker(t *testing.T) {
	e, _ := newEnv(t)
	var u upserts
	u.listen(e)
	e.OnGetVersion(searchVersion, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	e.RegisterDelayedCallback(func() { e.SignalWorkflow(wire.SignalName, wire.Signal{Name: "more"}) }, time.Minute)
	in := startInput(searchSpec, map[string]any{"customer": "ann"}, nil)
	in.SearchAttributes = map[string]string{"wend_customer": "Keyword", "wend_amount": "Double"}
	run(t, e, in)
	if len(u.calls) != 0 {
		t.Fatalf("upserts %v, want none before the marker", u.calls)
	}
}
