package tracing

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
)

const sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// TestPayloadFields: the schedule's names, the result's build and the start's traceparent
// read from the store's form of a payload are the fields json.Unmarshal finds; any other
// form is decoded whole.
func TestPayloadFields(t *testing.T) {
	for _, tt := range []struct {
		name, data, plugin, activity, build string
	}{
		{"schedule", `{"plugin":"p","activity":"echo","input":{"i":1},"tries":0}`, "p", "echo", ""},
		{"schedule, names escaped", `{"plugin":"p\"q","activity":"\u00e9cho","input":null,"tries":0}`, `p"q`, "écho", ""},
		{"schedule, other order", `{"activity":"echo","plugin":"p","input":null}`, "p", "echo", ""},
		{"schedule, spaces", `{ "plugin": "p", "activity": "echo", "input": null }`, "p", "echo", ""},
		{"schedule, cut short after its names", `{"plugin":"p","activity":"echo","input":`, "p", "echo", ""},
		{"schedule, cut short in its names", `{"plugin":"p","activity":"ech`, "", "", ""},
		{"result with a build", `{"output":{"plugin_sha256":"x"},"plugin_sha256":"` + sha + `"}`, "", "", sha},
		{"result without", `{"output":{"a":"b"}}`, "", "", ""},
		{"result, the build's text in the output", `{"output":",\"plugin_sha256\":\"` + sha + `\"}"}`, "", "", ""},
		{"result, a short build", `{"output":1,"plugin_sha256":"abc"}`, "", "", "abc"},
		{"result, build first", `{"plugin_sha256":"` + sha + `","output":1}`, "", "", sha},
		{"result, not JSON", `{"output":1,"plugin_sha256":"` + sha + `"`, "", "", ""},
		{"empty", ``, "", "", ""},
		{"start with a traceparent", `{"workflow_id":"w","input":{"traceparent":"x"},"spec_source":"a: \"b\"","traceparent":"` + accepted + `"}`, "", "", accepted},
		{"start without", `{"workflow_id":"w","input":null,"rules":2}`, "", "", ""},
		{"start without, the key in its input", `{"workflow_id":"w","input":{"a":1,"traceparent":"x"},"rules":2}`, "", "", ""},
		{"start without, the key last in its input", `{"workflow_id":"w","run_id":"r","input":{"a":1,"traceparent":"x"}}`, "", "", ""},
		{"start, other order", `{"traceparent":"` + accepted + `","workflow_id":"w"}`, "", "", accepted},
		{"start, not JSON", `{"workflow_id":"w","traceparent":"` + accepted + `"}}"}`, "", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, a := scheduleNames([]byte(tt.data), nil)
			b := resultBuild([]byte(tt.data), nil)
			if strings.HasPrefix(tt.name, "schedule") && (p != tt.plugin || a != tt.activity) {
				t.Errorf("scheduleNames = %q, %q; want %q, %q", p, a, tt.plugin, tt.activity)
			}
			if strings.HasPrefix(tt.name, "result") && b != tt.build {
				t.Errorf("resultBuild = %q, want %q", b, tt.build)
			}
			if tp := startedTraceParent([]byte(tt.data)); strings.HasPrefix(tt.name, "start") && tp != tt.build {
				t.Errorf("startedTraceParent = %q, want %q", tp, tt.build)
			}
			checkPayloadFields(t, []byte(tt.data))
		})
	}
}

// FuzzPayloadFields: on any bytes the readers do not panic and read names only from bytes
// that are JSON or open as a schedule does, and on the store's form of any schedule and
// result they find what json.Unmarshal finds.
func FuzzPayloadFields(f *testing.F) {
	f.Add([]byte(`{"plugin":"p","activity":"echo","input":{"i":1},"tries":0}`), "p", "echo", []byte(`{"i":1}`), sha)
	f.Add([]byte(`{"output":1,"plugin_sha256":"`+sha+`"}`), "p\"", "é", []byte(`"plugin_sha256"`), "")
	f.Fuzz(func(t *testing.T, data []byte, plugin, activity string, value []byte, build string) {
		p, a := scheduleNames(data, nil)
		_ = resultBuild(data, nil)
		if !json.Valid(data) && !strings.HasPrefix(string(data), `{"plugin":"`+p+`","activity":"`+a+`",`) {
			var sc struct{ Plugin, Activity string }
			_ = json.Unmarshal(data, &sc)
			if p != sc.Plugin || a != sc.Activity {
				t.Fatalf("%q: names %q %q from data that is not JSON nor opens as a schedule", data, p, a)
			}
		}
		if !json.Valid(value) {
			value = nil
		}
		sched, err := json.Marshal(history.ActivitySchedule{Plugin: plugin, Activity: activity, Input: value})
		if err != nil {
			t.Fatal(err)
		}
		res, err := json.Marshal(history.ActivityResult{Output: value, PluginSHA256: build})
		if err != nil {
			t.Fatal(err)
		}
		start, err := json.Marshal(history.Started{WorkflowID: plugin, Input: value, SpecSource: activity, TraceParent: build})
		if err != nil {
			t.Fatal(err)
		}
		checkPayloadFields(t, sched)
		checkPayloadFields(t, res)
		checkPayloadFields(t, start)
		_ = startedTraceParent(data)
	})
}

// checkPayloadFields fails unless the readers agree with json.Unmarshal on data in the
// store's form.
func checkPayloadFields(t *testing.T, data []byte) {
	t.Helper()
	var sc history.ActivitySchedule
	if json.Unmarshal(data, &sc) == nil && strings.HasPrefix(string(data), `{"plugin":`) {
		if p, a := scheduleNames(data, nil); p != sc.Plugin || a != sc.Activity {
			t.Errorf("%s: scheduleNames = %q, %q; Unmarshal: %q, %q", data, p, a, sc.Plugin, sc.Activity)
		}
	}
	var st history.Started
	if json.Unmarshal(data, &st) == nil && strings.HasPrefix(string(data), `{"workflow_id":`) {
		if tp := startedTraceParent(data); tp != st.TraceParent {
			t.Errorf("%s: startedTraceParent = %q; Unmarshal: %q", data, tp, st.TraceParent)
		}
	}
	var r history.ActivityResult
	if json.Unmarshal(data, &r) == nil && strings.HasPrefix(string(data), `{"output":`) {
		if b := resultBuild(data, nil); b != r.PluginSHA256 {
			t.Errorf("%s: resultBuild = %q; Unmarshal: %q", data, b, r.PluginSHA256)
		}
	}
}
