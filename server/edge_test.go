package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/engine"
)

// startBody is a POST /v1/runs body for waitSpec.
func (f *fixture) startBody(id, input string) string {
	b, _ := json.Marshal(engine.StartRequest{WorkflowID: id, SpecFile: f.dir + "/approval.wend.yaml", Source: waitSpec, Input: json.RawMessage(input)})
	return string(b)
}

// Ids, signal names and signal ids are checked where they enter: a 32,000-byte id is a 400,
// and the next start on the same server succeeds (it used to stop the engine).
func TestLongIDThenNormalStart(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	for _, tc := range []struct{ id, want string }{
		{strings.Repeat("x", 32_000), "start: the workflow id is 32000 bytes, over the limit of 255"},
		{"order\x1b[2J", `start: the workflow id "order\x1b[2J" has a control character (U+001B at byte 5); ids are printable text`},
		{"a\nb", `(U+000A at byte 1)`},
	} {
		code, b := f.do("POST", "/v1/runs", f.startBody(tc.id, `{"who":"ann"}`), nil)
		wantError(t, code, b, http.StatusBadRequest, api.CodeBadID, tc.want)
	}
	st := f.start("order-1", `{"who":"ann"}`)
	if !st.Started || f.eng.Err() != nil {
		t.Fatalf("start after the refusals: %+v, engine %v", st, f.eng.Err())
	}
	f.waitFor("order-1", waitingForSignal)
	for _, tc := range []struct{ body, want string }{
		{`{"name":"` + strings.Repeat("n", 256) + `"}`, "signal: the signal name is 256 bytes, over the limit of 255"},
		{`{"name":"go\u0007"}`, `signal: the signal name "go\a" has a control character`},
		{`{"name":"approve","id":"` + strings.Repeat("i", 300) + `"}`, "signal approve: the signal id is 300 bytes, over the limit of 255"},
	} {
		code, b := f.do("POST", "/v1/runs/order-1/signals", tc.body, nil)
		wantError(t, code, b, http.StatusBadRequest, api.CodeBadID, tc.want)
	}
	if code, b := f.do("POST", "/v1/runs/order-1/signals", `{"name":"approve","data":{"by":"bo"}}`, nil); code != 200 {
		t.Fatalf("signal: %d %s", code, b)
	}
	if r := f.closed("order-1"); r.Status != history.StatusCompleted {
		t.Fatalf("order-1 %s", r.Status)
	}
}

// Run input and signal data over 2 MiB are a 413 naming the limit, and nothing is recorded.
func TestPayloadLimit(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	big := `"` + strings.Repeat("x", 3<<20) + `"`
	code, b := f.do("POST", "/v1/runs", f.startBody("big", big), nil)
	wantError(t, code, b, http.StatusRequestEntityTooLarge, api.CodeTooLarge, "start: the input is 3145730 bytes, over the limit of 2097152 (2 MiB)")
	st := f.start("order-1", `{"who":"ann"}`)
	f.waitFor("order-1", waitingForSignal)
	code, b = f.do("POST", "/v1/runs/order-1/signals", `{"name":"approve","data":`+big+`}`, nil)
	wantError(t, code, b, http.StatusRequestEntityTooLarge, api.CodeTooLarge, "signal approve: the signal data is 3145730 bytes, over the limit of 2097152 (2 MiB)")
	d, err := f.srv.Show("order-1")
	if err != nil || d.Run.RunID != st.Run.RunID || d.Run.Status != history.StatusRunning {
		t.Fatalf("after the refusal: %+v %v", d.Run, err)
	}
	for _, ev := range d.Events {
		if ev.Type == history.SignalReceived {
			t.Fatalf("the refused signal was recorded: %+v", ev)
		}
	}
}

// The signal over the limit of unconsumed signals is a 429 naming the limit; the run keeps
// running and takes the signal it waits for.
func TestSignalLimit(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	st := f.start("order-1", `{"who":"ann"}`)
	f.waitFor("order-1", waitingForSignal)
	ctx := context.Background()
	for i := range interpreter.MaxSignals {
		if _, err := f.srv.Signal(ctx, "order-1", fmt.Sprintf("extra-%d", i%3), nil); err != nil {
			t.Fatalf("signal %d: %v", i, err)
		}
	}
	code, b := f.do("POST", "/v1/runs/order-1/signals", `{"name":"extra-0"}`, nil)
	wantError(t, code, b, http.StatusTooManyRequests, api.CodeLimit,
		`signal "extra-0" to run `+st.Run.RunID+": the run holds 5000 signals no step has taken yet, the limit; this one was not recorded and the run goes on")
	if code, b := f.do("POST", "/v1/runs/order-1/signals", `{"name":"approve","data":{"by":"bo"}}`, nil); code != 200 {
		t.Fatalf("the awaited signal: %d %s", code, b)
	}
	if r := f.closed("order-1"); r.Status != history.StatusCompleted {
		t.Fatalf("order-1 %s", r.Status)
	}
}

// A resend with a signal id the run recorded is acknowledged after the run finished; a new
// signal to the finished run is still refused.
func TestSignalResendAfterFinish(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	f.start("order-1", `{"who":"ann"}`)
	f.waitFor("order-1", waitingForSignal)
	send := `{"name":"approve","id":"s-1","data":{"by":"bo"}}`
	if code, b := f.do("POST", "/v1/runs/order-1/signals", send, nil); code != 200 {
		t.Fatalf("signal: %d %s", code, b)
	}
	f.closed("order-1")
	var got struct{ Run history.Run }
	if code, b := f.do("POST", "/v1/runs/order-1/signals", send, &got); code != 200 || got.Run.Status != history.StatusCompleted {
		t.Fatalf("resend after the run finished: %d %s", code, b)
	}
	code, b := f.do("POST", "/v1/runs/order-1/signals", `{"name":"approve","id":"s-2"}`, nil)
	wantError(t, code, b, http.StatusConflict, api.CodeRunClosed, "is completed: signals to a finished run are rejected")
}

// A start with a taken id and other input is a 409 naming the run; the same input is a 200.
func TestStartTakenIDOtherInput(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	st := f.start("order-1", `{"who":"ann"}`)
	code, b := f.do("POST", "/v1/runs", f.startBody("order-1", `{"who":"bob"}`), nil)
	wantError(t, code, b, http.StatusConflict, api.CodeIDTaken,
		`start: workflow id "order-1" is taken by run `+st.Run.RunID+" (running), which started with other input; wait for that run with 'wend wait order-1', or start with another id")
	var again api.Started
	if code, b := f.do("POST", "/v1/runs", f.startBody("order-1", `{"who":"ann"}`), &again); code != 200 || again.Run.RunID != st.Run.RunID {
		t.Fatalf("same input: %d %s", code, b)
	}
}

// A signal refused because the run is closing (its end not yet recorded) says so, not that
// the run has finished: its record still says running.
func TestSignalToClosingRunMessage(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	st := f.start("order-1", `{"who":"ann"}`)
	_, err := f.srv.control("order-1", "signals to a finished run are rejected", func(string) error {
		return fmt.Errorf("run %s is closing: %w", st.Run.RunID, engine.ErrRunClosed)
	})
	want := "run " + st.Run.RunID + " of order-1 is finishing (its end is being recorded): signals to a finishing run are rejected"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %q", err, want)
	}
}
