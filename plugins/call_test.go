package plugins

import (
	"context"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
)

func TestDescribeCommand(t *testing.T) {
	d, err := DescribeCommand(context.Background(), Config{Command: []string{bins.goExample}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Plugin != "plugin" || len(d.Activities) != 6 { // the conformance set
		t.Fatalf("got %+v", d)
	}
	sleep, ok := d.Find("sleep")
	if !ok || !strings.Contains(string(sleep.InputSchema), `"ms"`) || !strings.Contains(sleep.Description, "heartbeat") {
		t.Fatalf("sleep described as %+v", sleep)
	}
}

func TestCallOnce(t *testing.T) {
	var beats int
	out, err := CallOnce(context.Background(), Config{Name: "demo", Command: []string{bins.goExample}}, Options{},
		history.ActivityCall{Activity: "sleep", Input: []byte(`{"ms":250}`)}, func(history.Heartbeat) { beats++ })
	if err != nil || !strings.Contains(string(out), "slept_ms") || beats == 0 {
		t.Fatalf("got %s, %v, %d heartbeats", out, err, beats)
	}
	_, err = CallOnce(context.Background(), Config{Name: "demo", Command: []string{bins.goExample}}, Options{},
		history.ActivityCall{Activity: "fail", Input: []byte(`{"type":"Nope","message":"no","non_retryable":true}`)}, nil)
	if ae := activityError(t, err); ae.Type != "Nope" || !ae.NonRetryable {
		t.Fatalf("got %v", ae)
	}
}
