package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// TestStartedFromCachedSpecText: a rebuild decodes WorkflowStarted through the spec cache,
// looking the text up as the payload holds it. The payload is the one history.DataOf gives,
// cached or not; another text of the same file gets its own spec; a bad payload is an error
// naming the event.
func TestStartedFromCachedSpecText(t *testing.T) {
	srcA := head + "steps:\n  - {id: a, activity: p.first, with: {q: \"say \\\"hi\\\" <&>\"}}\n"
	srcB := strings.Replace(srcA, "first", "second", 1)
	payload := func(src, run string) history.Event {
		st := history.Started{WorkflowID: "w-" + run, RunID: run, Input: json.RawMessage(`{"n":1}`), SpecFile: "/d/w.wend.yaml",
			SpecSource: src, SpecSHA256: sha([]byte(src)), ExecutionStarted: t0, RunStarted: t0.Add(time.Second), Rules: history.RulesCurrent}
		return history.Event{Seq: 1, Type: history.WorkflowStarted, Data: history.MustData(st)}
	}
	var c specCache
	for i, tc := range []struct {
		ev      history.Event
		src     string
		cachedA bool
	}{
		{payload(srcA, "r1"), srcA, false},
		{payload(srcA, "r2"), srcA, true},
		{payload(srcB, "r3"), srcB, false},
		{payload(srcA, "r4"), srcA, true},
	} {
		before := len(c.byText)
		st, w, err := c.started(tc.ev)
		if err != nil {
			t.Fatal(err)
		}
		want, err := history.DataOf[history.Started](tc.ev)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(st, want) {
			t.Fatalf("case %d: started %+v, DataOf %+v", i, st, want)
		}
		if string(w.Source) != tc.src {
			t.Fatalf("case %d: the spec of another text", i)
		}
		if tc.cachedA != (len(c.byText) == before) {
			t.Fatalf("case %d: texts %d -> %d, cached hit %v", i, before, len(c.byText), tc.cachedA)
		}
	}
	if _, _, err := c.started(history.Event{Seq: 1, Type: history.WorkflowStarted, Data: json.RawMessage(`{"spec_source":1}`)}); err == nil ||
		!strings.HasPrefix(err.Error(), "WorkflowStarted event 1: ") {
		t.Fatalf("bad payload: %v", err)
	}
}

// BenchmarkStartedOfRebuild prices finding a rebuilt run's Started payload and parsed spec
// (the spec cached): decoded whole and the text hashed, as before, against started.
func BenchmarkStartedOfRebuild(b *testing.B) {
	for _, steps := range []int{2, 20} {
		src := head + "steps:\n"
		for i := range steps {
			src += fmt.Sprintf("  - {id: a%d, activity: p.first, with: {order: \"${{ input.order }}\"}}\n", i)
		}
		st := history.Started{WorkflowID: "o-12345", RunID: "01JABCDEFGHJKMNPQRSTVWXYZ", Input: json.RawMessage(`{"order":1}`), SpecFile: "/d/w.wend.yaml",
			SpecSource: src, SpecSHA256: sha([]byte(src)), ExecutionStarted: t0, Rules: history.RulesCurrent}
		ev := history.Event{Seq: 1, Type: history.WorkflowStarted, Data: history.MustData(st)}
		var c specCache
		b.Run(fmt.Sprintf("%d steps/decoded and hashed", steps), func(b *testing.B) {
			for b.Loop() {
				st, err := history.DataOf[history.Started](ev)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.load(st); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%d steps/started", steps), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := c.started(ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
