package tracing

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/testkit/otlptest"
)

// recorded keeps the calls the engine hands its plugins, as a remote worker gets them.
type recorded struct {
	acts
	mu    sync.Mutex
	calls []history.ActivityCall
}

func (r *recorded) Execute(ctx context.Context, c history.ActivityCall, hb func(history.Heartbeat)) (json.RawMessage, error) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
	return r.acts.Execute(ctx, c, hb)
}

// TestEmitTryMatchesTheEngine: a try exported by EmitTry from the call a worker got is the
// span the local engine exports for that try from its history: same trace, span id, parent
// (the step's span), name and attributes. So tries run on Temporal join the run's tree.
func TestEmitTryMatchesTheEngine(t *testing.T) {
	for _, tc := range []struct{ name, traceparent string }{
		{"started with a traceparent", accepted},
		{"trace derived from the run id", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local := otlptest.Start(t)
			exportTo(t, local)
			plugins := &recorded{}
			te := open(t, history.NewMemStore(), plugins)
			start(t, te.e, workflow, tc.traceparent)
			waitClosed(t, te.e)
			te.close(t)

			remote := otlptest.Start(t)
			exportTo(t, remote)
			p, err := FromEnv(context.Background(), os.Getenv, io.Discard)
			if err != nil || p == nil {
				t.Fatalf("FromEnv = %v, %v", p, err)
			}
			outcomes := map[string]*history.Failure{"p.echo #1": nil, "p.flaky #1": {Category: "activity", Type: "Busy", Message: "try later"},
				"p.flaky #2": nil, "p.boom #1": {Category: "activity", Type: "Refused", Message: "card declined"}}
			for _, c := range plugins.calls {
				if c.TraceParent == "" {
					t.Fatalf("call %s #%d has no traceparent", c.StepPath, c.Attempt)
				}
				failure := outcomes[tryName(c.Plugin, c.Activity, c.Attempt)[4:]]
				outcome := "completed"
				if failure != nil {
					outcome = "failed"
				}
				now := time.Now()
				p.EmitTry(Try{Workflow: "order", Call: c, Start: now, End: now, Outcome: outcome, Failure: failure})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := p.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}

			want := byName(t, local.Spans())
			got := byName(t, remote.Spans())
			if len(got) != 4 {
				t.Fatalf("EmitTry exported %d spans, want 4 tries", len(got))
			}
			for name, g := range got {
				w := want[name]
				if w == nil {
					t.Errorf("EmitTry exported %q, which the engine did not", name)
					continue
				}
				if hexID(g.TraceId) != hexID(w.TraceId) || hexID(g.SpanId) != hexID(w.SpanId) || hexID(g.ParentSpanId) != hexID(w.ParentSpanId) {
					t.Errorf("%s: ids %s/%s parent %s, the engine's %s/%s parent %s", name, hexID(g.TraceId), hexID(g.SpanId),
						hexID(g.ParentSpanId), hexID(w.TraceId), hexID(w.SpanId), hexID(w.ParentSpanId))
				}
				if ga, wa := attrMap(g.Attributes), attrMap(w.Attributes); !equalAttrs(ga, wa) {
					t.Errorf("%s: attributes\n%v\nthe engine's\n%v", name, ga, wa)
				}
				if g.GetStatus().GetCode() != w.GetStatus().GetCode() {
					t.Errorf("%s: status %v, the engine's %v", name, g.GetStatus(), w.GetStatus())
				}
			}
		})
	}
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.Key] = otlptest.Text(kv.Value)
	}
	return m
}

func equalAttrs(a, b map[string]string) bool {
	keys := func(m map[string]string) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	if !slices.Equal(keys(a), keys(b)) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
