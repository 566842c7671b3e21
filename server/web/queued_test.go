package web

import (
	"context"
	"strings"
	"testing"
)

const keyedWaitSpec = `wend: v1
name: keyed
concurrency: {key: "${{ input.who }}", limit: 1}
steps: [{wait_for_signal: go}]
`

// A queued run's page says what it waits for and offers cancel; once cancelled it says it
// never started.
func TestUIQueuedRun(t *testing.T) {
	f := newWebFixture(t)
	f.start("k1", keyedWaitSpec)
	f.settle("k1", waitingForSignal)
	f.start("k2", keyedWaitSpec)
	f.start("k3", keyedWaitSpec)
	code, _, body := f.send(req{Method: "GET", Path: "/ui/runs/k3", Session: true})
	if code != 200 {
		t.Fatalf("status %d: %.300s", code, body)
	}
	for _, want := range []string{`id="run-status">queued<`, "queued: 1 of 1 running for key bo (position 2)", `id="act-cancel"`} {
		if !strings.Contains(body, want) {
			t.Errorf("queued run page lacks %q", want)
		}
	}
	if strings.Contains(body, "could not be built") {
		t.Errorf("queued run page reports an error: %.500s", body)
	}
	if _, err := f.srv.Cancel(context.Background(), "k3", "not now"); err != nil {
		t.Fatal(err)
	}
	_, _, body = f.send(req{Method: "GET", Path: "/ui/runs/k3", Session: true})
	if !strings.Contains(body, "It was cancelled while queued and never started") {
		t.Errorf("cancelled queued run page: %.800s", body)
	}
}
