package web

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

var graphKeyRe = regexp.MustCompile(`id="graph" data-key="([0-9a-f]+)"`)

// A poll of a run's live part names the version it shows (If-None-Match) and the drawing it
// has (X-Wend-Graph): an unchanged run answers 304 with nothing, a changed one its live part,
// without the drawing when every step is drawn as before. Whatever the headers hold, the
// answer is the full one or nothing, never a drawing left out that the page lacks.
func TestRunPollSendsOnlyWhatChanged(t *testing.T) {
	run, evs := genRun(3, []string{itemCompleted, itemRunning})
	store := history.NewMemStore()
	if err := store.Commit(t.Context(), history.Commit{Runs: []history.RunUpdate{{Run: run, Events: evs}}}); err != nil {
		t.Fatal(err)
	}
	u := New(server.New(nil, store))
	live := "/ui/runs/" + run.RunID + "?partial=live"
	first := pageOver(t, u, live, nil)
	etag := first.Header().Get("ETag")
	m := graphKeyRe.FindStringSubmatch(first.Body.String())
	if first.Code != 200 || etag != `"`+runVersion(run)+`"` || m == nil || !strings.Contains(first.Body.String(), `class="graph"`) {
		t.Fatalf("the first poll: %d, ETag %q, graph key %v", first.Code, etag, m)
	}
	key := m[1]

	// A heartbeat changes the run's version, not how any step is drawn.
	running := evs[len(evs)-1]
	beat := history.Event{Seq: run.LastSeq + 1, Time: running.Time.Add(time.Second), Type: history.ActivityHeartbeatRecorded,
		Step: running.Step, ActivityExecutionID: running.ActivityExecutionID, Attempt: 1, Data: json.RawMessage(`{"progress":{"done":1}}`)}
	commit := func(r history.Run, evs ...history.Event) history.Run {
		r.LastSeq = evs[len(evs)-1].Seq
		if err := store.Commit(t.Context(), history.Commit{Runs: []history.RunUpdate{{Run: r, Events: evs}}}); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range []struct {
		name   string
		page   string
		header http.Header
		code   int
		graph  bool // the drawing is in the answer
		kept   bool // the answer says the page keeps its drawing
	}{
		{"no version: the live part", live, nil, 200, true, false},
		{"the version shown: nothing", live, http.Header{"If-None-Match": {etag}}, 304, false, false},
		{"the version and drawing shown: nothing", live, http.Header{"If-None-Match": {etag}, graphKeyHeader: {key}}, 304, false, false},
		{"an older version: the live part", live, http.Header{"If-None-Match": {`"1-running"`}}, 200, true, false},
		{"an older version, this drawing: no drawing", live, http.Header{"If-None-Match": {`"1-running"`}, graphKeyHeader: {key}}, 200, false, true},
		{"another drawing: the drawing", live, http.Header{"If-None-Match": {`"1-running"`}, graphKeyHeader: {"0123"}}, 200, true, false},
		{"the whole page always draws", "/ui/runs/" + run.RunID, http.Header{"If-None-Match": {etag}, graphKeyHeader: {key}}, 200, true, false},
		{"hostile headers: the live part", live, http.Header{"If-None-Match": {`*`, `W/` + etag, strings.Repeat(`"x`, 10000)}, graphKeyHeader: {`"><script>`, key + " "}}, 200, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := pageOver(t, u, c.page, c.header)
			body := w.Body.String()
			if w.Code != c.code {
				t.Fatalf("%d, want %d: %.300s", w.Code, c.code, body)
			}
			if c.code == 304 && body != "" {
				t.Errorf("a 304 with a body: %.200s", body)
			}
			if got := strings.Contains(body, `class="graph"`); got != c.graph {
				t.Errorf("drawing in the answer: %v, want %v", got, c.graph)
			}
			if got := strings.Contains(body, `data-kept="true"`); got != c.kept {
				t.Errorf("drawing kept: %v, want %v", got, c.kept)
			}
			if strings.Contains(body, "<script>") {
				t.Error("a header's text reached the page")
			}
		})
	}

	// After the heartbeat: a new version, the same drawing, so a poll that has it gets none.
	run = commit(run, beat)
	w := pageOver(t, u, live, http.Header{"If-None-Match": {etag}, graphKeyHeader: {key}})
	if w.Code != 200 || w.Header().Get("ETag") == etag || !strings.Contains(w.Body.String(), `data-kept="true"`) || strings.Contains(w.Body.String(), `class="graph"`) {
		t.Errorf("after a heartbeat: %d, ETag %q (was %q), kept %v", w.Code, w.Header().Get("ETag"), etag, strings.Contains(w.Body.String(), `data-kept="true"`))
	}
	if m := graphKeyRe.FindStringSubmatch(w.Body.String()); m == nil || m[1] != key {
		t.Errorf("a heartbeat changed the drawing's key: %v, was %s", m, key)
	}

	// The running item completes its first step: its box changes, so the drawing is sent.
	done := running
	done.Seq, done.Type, done.Time, done.Data = run.LastSeq+1, history.ActivityCompleted, beat.Time.Add(time.Second), json.RawMessage(`{"output":{}}`)
	run = commit(run, done)
	w = pageOver(t, u, live, http.Header{"If-None-Match": {etag}, graphKeyHeader: {key}})
	m = graphKeyRe.FindStringSubmatch(w.Body.String())
	if w.Code != 200 || !strings.Contains(w.Body.String(), `class="graph"`) || m == nil || m[1] == key {
		t.Errorf("after a step's state changed: %d, drawing %v, key %v (was %s)", w.Code, strings.Contains(w.Body.String(), `class="graph"`), m, key)
	}
	if w.Header().Get("ETag") != `"`+runVersion(run)+`"` {
		t.Errorf("ETag %q, want the run's version %q", w.Header().Get("ETag"), runVersion(run))
	}
}
