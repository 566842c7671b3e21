//go:build linux

package plugins

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/testkit/proctest"
)

func TestGoExampleGreet(t *testing.T) {
	h, _ := newHost(t, Options{}, Config{Name: "demo", Command: []string{bins.goExample}})
	out, err := h.Execute(context.Background(), call("demo", "greet", map[string]string{"name": "ada"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"greeting":"hello, ada"}` {
		t.Fatalf("greet = %s", out)
	}
	pid := pidOf(t, h, "demo")
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	waitGroupGone(t, pid, 3*time.Second)
}

func TestSharedProcessConcurrentCalls(t *testing.T) {
	h, _ := newHost(t, Options{}, Config{Name: "demo", Command: []string{bins.goExample}})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.Execute(context.Background(), call("demo", "echo", map[string]int{"i": i}), nil)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	_ = pidOf(t, h, "demo")
	// One process served every call: its group holds it and the guard's members alone.
	if n := len(proctest.Group(pidOf(t, h, "demo"))); n != 1+guardMembers {
		t.Fatalf("plugin group has %d processes, want %d", n, 1+guardMembers)
	}
}

func TestHeartbeats(t *testing.T) {
	h, _ := newHost(t, Options{}, Config{Name: "demo", Command: []string{bins.goExample}})
	var beats []history.Heartbeat
	out, err := h.Execute(context.Background(), call("demo", "sleep", map[string]int{"ms": 350}), func(hb history.Heartbeat) {
		beats = append(beats, hb)
	})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		SleptMS int `json:"slept_ms"`
	}
	if err := json.Unmarshal(out, &got); err != nil || got.SleptMS < 350 {
		t.Fatalf("sleep = %s (%v)", out, err)
	}
	if len(beats) < 1 || !strings.Contains(string(beats[0].Progress), "slept_ms") {
		t.Fatalf("heartbeats = %v, want some with progress", beats)
	}
}
