package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
)

func TestCheckID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want string // "" accepted
	}{
		{"", ""},
		{"order-7", ""},
		{"commande/été-7", ""},
		{strings.Repeat("a", MaxIDBytes), ""},
		{strings.Repeat("a", MaxIDBytes+1), "the workflow id is 256 bytes, over the limit of 255"},
		{strings.Repeat("a", 32_000), "the workflow id is 32000 bytes, over the limit of 255"},
		{"a\nb", `the workflow id "a\nb" has a control character (U+000A at byte 1)`},
		{"\x1b[31mred", `the workflow id "\x1b[31mred" has a control character (U+001B at byte 0)`},
		{"a\x7f", `(U+007F at byte 1)`},
		{"a\u009b31m", `(U+009B at byte 1)`}, // the C1 form of an ANSI escape
		{"a\xff", `the workflow id "a\xff" is not UTF-8`},
	} {
		err := CheckID("workflow id", tc.id)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckID(%.40q) = %v, want nil", tc.id, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBadID)):
			t.Errorf("CheckID(%.40q) = %v, want ErrBadID with %q", tc.id, err, tc.want)
		}
	}
}

// refusingStore refuses, as boltstore does an over-long key, every commit that touches a
// workflow id starting with "refuse" or records a signal named "poison".
type refusingStore struct{ *history.MemStore }

func (s refusingStore) Commit(ctx context.Context, c history.Commit) error {
	for _, u := range c.Runs {
		if strings.HasPrefix(u.Run.WorkflowID, "refuse") {
			return fmt.Errorf("commit: %w: workflow id too long", history.ErrRefused)
		}
		for _, ev := range u.Events {
			if sig, _ := history.DataOf[history.Signal](ev); ev.Type == history.SignalReceived && sig.Name == "poison" {
				return fmt.Errorf("commit: %w: signal poison", history.ErrRefused)
			}
		}
	}
	return s.MemStore.Commit(ctx, c)
}

func newRefusingHarness(t *testing.T) (*harness, refusingStore) {
	h := &harness{t: t, clock: NewFakeClock(t0), dir: t.TempDir(), acts: &fakeActs{}}
	st := refusingStore{history.NewMemStore()}
	h.e = New(Options{Store: st, Activities: h.acts, Clock: h.clock, Logf: t.Logf})
	t.Cleanup(func() { h.e.Close() })
	return h, st
}

// A commit the store refuses for one run's content fails that start only: the engine goes
// on, nothing of the refused run is stored, and the next start commits.
func TestRefusedStartFailsOnlyItself(t *testing.T) {
	h, st := newRefusingHarness(t)
	f := h.write("w.wend.yaml", head+"steps: [{wait_for_signal: go}]\n")
	src := []byte(head + "steps: [{wait_for_signal: go}]\n")
	ctx := context.Background()
	_, _, err := h.e.Start(ctx, StartRequest{WorkflowID: "refuse-1", SpecFile: f, Source: string(src)})
	if !errors.Is(err, history.ErrRefused) {
		t.Fatalf("refused start: %v, want ErrRefused", err)
	}
	if err := h.e.Err(); err != nil {
		t.Fatalf("the engine stopped after a refused commit: %v", err)
	}
	r, isNew, err := h.e.Start(ctx, StartRequest{WorkflowID: "ok-1", SpecFile: f, Source: string(src)})
	if err != nil || !isNew || r.Status != history.StatusRunning {
		t.Fatalf("start after a refusal: %+v %v %v", r, isNew, err)
	}
	if runs, _ := st.Runs(history.RunFilter{WorkflowID: "refuse-1"}); len(runs) != 0 {
		t.Fatalf("refused run stored: %+v", runs)
	}
	// Input to the refused id finds no run; the good one takes its signal and completes.
	if err := h.e.Signal(ctx, "refuse-1", "go", nil); !errors.Is(err, history.ErrNotFound) {
		t.Fatalf("signal to the refused id: %v", err)
	}
	if err := h.e.Signal(ctx, "ok-1", "go", nil); err != nil {
		t.Fatal(err)
	}
	if r := h.wait("ok-1"); r.Status != history.StatusCompleted {
		t.Fatalf("ok-1 %s", r.Status)
	}
}

// A refused commit of a running run's input blocks that run (its interpreter is past what
// the store holds), never the engine: other runs go on.
func TestRefusedInputBlocksOnlyItsRun(t *testing.T) {
	h, _ := newRefusingHarness(t)
	f := h.write("w.wend.yaml", head+"steps: [{wait_for_signal: go}]\n")
	h.start(f, "a", "null")
	h.start(f, "b", "null")
	ctx := context.Background()
	if err := h.e.Signal(ctx, "a", "poison", nil); !errors.Is(err, history.ErrRefused) || !errors.Is(err, ErrBlocked) {
		t.Fatalf("refused signal: %v", err)
	}
	if err := h.e.Err(); err != nil {
		t.Fatalf("engine stopped: %v", err)
	}
	if err := h.e.Signal(ctx, "a", "go", nil); !errors.Is(err, ErrBlocked) {
		t.Fatalf("signal to the blocked run: %v", err)
	}
	if err := h.e.Signal(ctx, "b", "go", nil); err != nil {
		t.Fatal(err)
	}
	if r := h.wait("b"); r.Status != history.StatusCompleted {
		t.Fatalf("b %s", r.Status)
	}
}

func TestPayloadLimit(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"steps: [{wait_for_signal: go}]\n")
	src := []byte(head + "steps: [{wait_for_signal: go}]\n")
	big := json.RawMessage(`"` + strings.Repeat("x", MaxPayloadBytes) + `"`)
	ctx := context.Background()
	_, _, err := h.e.Start(ctx, StartRequest{WorkflowID: "w", SpecFile: f, Source: string(src), Input: big})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "the input is 2097154 bytes, over the limit of 2097152 (2 MiB)") {
		t.Fatalf("big input: %v", err)
	}
	r := h.start(f, "w", "null")
	_, err = h.e.SendSignal(ctx, SignalRequest{WorkflowID: "w", Name: "go", Data: big})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "signal go: the signal data is 2097154 bytes, over the limit") {
		t.Fatalf("big signal: %v", err)
	}
	if evs, _ := h.store.Events(r.RunID, 0); len(evs) != 1 {
		t.Fatalf("%d events after the refused signal, want 1 (WorkflowStarted)", len(evs))
	}
}

// The signal over MaxSignals is refused before it is recorded, and the run goes on: a signal
// a step waits for still reaches it.
func TestSignalLimitRefusedAtTheEdge(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"steps: [{wait_for_signal: go}]\n")
	r := h.start(f, "w", "null")
	ctx := context.Background()
	for i := range interpreter.MaxSignals {
		if err := h.e.Signal(ctx, "w", fmt.Sprintf("n%d", i%7), nil); err != nil {
			t.Fatalf("signal %d: %v", i, err)
		}
	}
	err := h.e.Signal(ctx, "w", "n0", nil)
	want := `signal "n0" to run ` + r.RunID + ": the run holds 5000 signals no step has taken yet, the limit; this one was not recorded and the run goes on"
	if !errors.Is(err, ErrSignalLimit) || !strings.Contains(err.Error(), want) {
		t.Fatalf("signal 5,001: %v\nwant %q", err, want)
	}
	if got, _ := h.store.Run(r.RunID); got.Status != history.StatusRunning || got.LastSeq != 1+uint64(interpreter.MaxSignals) {
		t.Fatalf("after the refusal: status %s, %d events", got.Status, got.LastSeq)
	}
	if err := h.e.Signal(ctx, "w", "go", json.RawMessage(`"ok"`)); err != nil { // a waiter takes it at once
		t.Fatal(err)
	}
	if got := h.output(h.wait("w")); got != "null" {
		t.Fatalf("output %s", got)
	}
}

// A resend of a signal the run took is acknowledged even after that signal finished it, and
// flagged as the duplicate it is, open run or closed: the caller must not say "sent" of it.
func TestSignalResendAfterRunFinished(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"steps: [{wait_for_signal: go}, {wait_for_signal: go}]\n")
	r := h.start(f, "w", "null")
	ctx := context.Background()
	send := func(id string) (bool, error) {
		return h.e.SendSignal(ctx, SignalRequest{WorkflowID: "w", Name: "go", ID: id})
	}
	for _, c := range []struct {
		id   string
		want bool
	}{{"s-1", false}, {"s-1", true}, {"", false}} { // an id-less send is never a duplicate
		dup, err := send(c.id)
		if err != nil || dup != c.want {
			t.Fatalf("send %q to the open run: duplicate %v, %v; want %v", c.id, dup, err, c.want)
		}
	}
	h.wait("w")
	if evs, _ := h.store.Events(r.RunID, 0); countType(evs, history.SignalReceived) != 2 {
		t.Fatalf("%d SignalReceived, want 2 (the resend is not recorded)", countType(evs, history.SignalReceived))
	}
	if dup, err := send("s-1"); err != nil || !dup {
		t.Fatalf("resend of a recorded signal to the finished run: duplicate %v, %v", dup, err)
	}
	if _, err := send("s-2"); !errors.Is(err, ErrRunClosed) {
		t.Fatalf("new signal to the finished run: %v, want ErrRunClosed", err)
	}
}

func countType(evs []history.Event, t history.EventType) (n int) {
	for _, ev := range evs {
		if ev.Type == t {
			n++
		}
	}
	return n
}

// A start with a taken id and the same input (as JSON values) names the same run; other
// input is refused, naming the run that holds the id.
func TestStartTakenIDOtherInput(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"steps: [{wait_for_signal: go}]\n")
	src := []byte(head + "steps: [{wait_for_signal: go}]\n")
	first := h.start(f, "w", `{"a":1,"b":[2]}`)
	ctx := context.Background()
	r, isNew, err := h.e.Start(ctx, StartRequest{WorkflowID: "w", SpecFile: f, Source: string(src), Input: json.RawMessage(`{ "b": [2], "a": 1 }`)})
	if err != nil || isNew || r.RunID != first.RunID {
		t.Fatalf("same input: %+v %v %v", r, isNew, err)
	}
	for _, in := range []string{`{"a":2,"b":[2]}`, ``, `null`} {
		_, isNew, err = h.e.Start(ctx, StartRequest{WorkflowID: "w", SpecFile: f, Source: string(src), Input: json.RawMessage(in)})
		want := `workflow id "w" is taken by run ` + first.RunID + " (running), which started with other input; wait for that run with 'wend wait w'"
		if isNew || !errors.Is(err, ErrIDTaken) || !strings.Contains(err.Error(), want) {
			t.Fatalf("other input %q: %v %v\nwant %q", in, isNew, err, want)
		}
	}
}
