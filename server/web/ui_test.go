package web

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/api/client"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/server"
)

// TestUIPages covers every UI route: the list with its filters and live fragment, the run
// page, the export download, static files, and the errors of each.
func TestUIPages(t *testing.T) {
	f := newWebFixture(t)
	w := f.start("w1", waitSpec)
	f.settle("w1", waitingForSignal)
	fl := f.start("f1", webFailSpec)
	f.settle("f1", closed)
	f.start("s1", "wend: v1\nname: searched\nsearch:\n  who: {type: string, value: \"${{ input.who }}\"}\nsteps: [{wait_for_signal: go}]\n")
	f.settle("s1", func(d api.RunDetail) bool { return d.Run.Search["who"] == "bo" })
	tests := []struct {
		name     string
		path     string
		status   int
		contains []string
		lacks    []string
	}{
		{"root redirects", "/", 303, nil, nil},
		{"list", "/ui/runs", 200, []string{`data-workflow-id="w1"`, `data-workflow-id="f1"`, "Content-Security-Policy"}, nil},
		{"list by status", "/ui/runs?status=failed", 200, []string{`data-workflow-id="f1"`}, []string{`data-workflow-id="w1"`}},
		{"list by workflow name", "/ui/runs?workflow=approval", 200, []string{`data-workflow-id="w1"`}, []string{`data-workflow-id="f1"`}},
		// By a run id's first 12 characters: "f1" alone is hex, and w1's random run id held it
		// one time in about eight, which listed w1 too.
		{"list by id text", "/ui/runs?q=" + fl.RunID[:12], 200, []string{`data-workflow-id="f1"`}, []string{`data-workflow-id="w1"`}},
		{"list search is escaped", "/ui/runs?q=%3Cscript%3E", 200, []string{`value="&lt;script&gt;"`, "match these filters"}, []string{"<script>"}},
		{"list bad status", "/ui/runs?status=bogus", 400, []string{"unknown status"}, nil},
		{"list by filter box", "/ui/runs?where=who+%3D+bo", 200, []string{`data-workflow-id="s1"`, `value="who = bo"`},
			[]string{`data-workflow-id="w1"`, `data-workflow-id="f1"`}},
		{"filter box with status", "/ui/runs?where=who+%3D+bo+and+status+%3D+failed", 200, []string{"match these filters"},
			[]string{`data-workflow-id="s1"`, `data-workflow-id="f1"`}},
		{"filter box paging keeps the filter", "/ui/runs?where=name+%3D+searched&partial=live", 200, []string{`data-live="/ui/runs?partial=live&amp;where=name&#43;%3D&#43;searched"`}, nil},
		{"run page shows search values", "/ui/runs/s1", 200, []string{`id="run-search"`, `<b>who</b> = <span class="mono">bo</span>`}, nil},
		{"filter box field typo", "/ui/runs?where=whoo+%3D+bo", 200, []string{`id="error"`, `filter: unknown search field &#34;whoo&#34; (did you mean &#34;who&#34;?); the runs&#39; search fields are who`}, []string{`data-workflow-id="s1"`}},
		{"filter box no match is no error", "/ui/runs?where=who+%3D+nobody", 200, []string{"match these filters"}, []string{`id="error"`}},
		{"filter box bad filter", "/ui/runs?where=who+~+bo", 200, []string{`id="error"`, `filter: search field who takes =, !=, &lt;, &lt;=, &gt;, &gt;=, not &#34;~&#34;`}, nil},
		{"list live fragment", "/ui/runs?partial=live", 200, []string{`id="runs-live"`, "data-version"}, []string{"<html"}},
		{"run by workflow id", "/ui/runs/w1", 200, []string{`id="run-status">running<`, `class="signal-name">approve<`, `data-status="waiting"`, `id="signal-form"`}, nil},
		{"run by run id", "/ui/runs/" + w.RunID, 200, []string{w.RunID}, nil},
		{"run live fragment", "/ui/runs/w1?partial=live", 200, []string{`id="run-live"`}, []string{"<html", "signal-form"}},
		{"failed run", "/ui/runs/f1", 200, []string{`data-category="activity"`, `badge nonretryable`, "card &lt;b&gt;declined&lt;/b&gt;", "CardDeclined"}, []string{"<b>declined</b>"}},
		{"unknown run", "/ui/runs/nope", 404, []string{"no workflow or run"}, nil},
		{"stylesheet", "/ui/static/style.css", 200, []string{".badge"}, nil},
		{"script", "/ui/static/app.js", 200, []string{"DOMParser"}, nil},
		{"unknown static", "/ui/static/nope.js", 404, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, h, body := f.send(req{Method: "GET", Path: tt.path, Session: true})
			if code != tt.status {
				t.Fatalf("status %d, want %d: %.300s", code, tt.status, body)
			}
			all := body + "\n" + strings.Join(h.Values("Content-Security-Policy"), " ")
			for _, c := range tt.contains {
				if c == "Content-Security-Policy" {
					if h.Get(c) == "" {
						t.Errorf("no %s header", c)
					}
					continue
				}
				if !strings.Contains(all, c) {
					t.Errorf("lacks %q", c)
				}
			}
			for _, c := range tt.lacks {
				if strings.Contains(body, c) {
					t.Errorf("contains %q", c)
				}
			}
		})
	}
	t.Run("export download", func(t *testing.T) {
		code, h, body := f.send(req{Method: "GET", Path: "/ui/runs/" + fl.RunID + "/export", ReadSession: true})
		if code != 200 || !strings.Contains(h.Get("Content-Disposition"), "attachment") {
			t.Fatalf("%d %v", code, h)
		}
		var doc export.Document
		if err := json.Unmarshal([]byte(body), &doc); err != nil || doc.Schema != export.SchemaName || doc.Workflow.RunID != fl.RunID {
			t.Fatalf("export: %v %q %q", err, doc.Schema, doc.Workflow.RunID)
		}
		if code, _, _ := f.send(req{Method: "GET", Path: "/ui/runs/nope/export", ReadSession: true}); code != 404 {
			t.Errorf("unknown run's export: %d", code)
		}
	})
}

// TestUIEscapesRunData: what an activity returns is text on the page, never markup.
func TestUIEscapesRunData(t *testing.T) {
	f := newWebFixture(t)
	f.start("x1", webEchoSpec)
	f.settle("x1", closed)
	_, _, body := f.send(req{Method: "GET", Path: "/ui/runs/x1", ReadSession: true})
	if n := strings.Count(body, "<script"); n != 1 {
		t.Errorf("%d <script elements, want only the page's own", n)
	}
	if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the activity's output is not shown escaped")
	}
}

// TestUIActions posts each operator action with a session and checks its effect, then the
// refusals: bad signal data, a finished run, a retry of a run that did not fail.
func TestUIActions(t *testing.T) {
	f := newWebFixture(t)
	post := func(id, action string, v url.Values) (int, http.Header, string) {
		body, h := form(f, v, f.base)
		return f.send(req{Method: "POST", Path: "/ui/runs/" + id + "/" + action, Body: body, Header: h, Session: true})
	}
	f.start("c1", waitSpec)
	f.settle("c1", waitingForSignal)
	f.start("t1", waitSpec)
	f.settle("t1", waitingForSignal)
	f.start("f1", webFailSpec)
	f.settle("f1", closed)

	if code, h, body := post("c1", "signal", url.Values{"name": {"approve"}, "data": {"{not json"}}); code != 400 || !strings.Contains(body, "data is not JSON") {
		t.Errorf("bad signal data: %d %v %.200s", code, h, body)
	}
	if code, _, body := post("c1", "signal", url.Values{"name": {""}}); code != 400 || !strings.Contains(body, "no signal name") {
		t.Errorf("no signal name: %d %.200s", code, body)
	}
	if code, h, _ := post("c1", "repair", url.Values{}); code != 303 || !strings.Contains(h.Get("Location"), "done=repair") {
		t.Errorf("repair: %d %v", code, h)
	}
	if code, h, _ := post("c1", "cancel", url.Values{"reason": {"<b>stop</b>"}}); code != 303 || !strings.HasSuffix(h.Get("Location"), "/ui/runs/c1?done=cancel") {
		t.Errorf("cancel: %d %v", code, h)
	}
	if d := f.settle("c1", closed); d.Run.Status != history.StatusCancelled {
		t.Errorf("c1 %s", d.Run.Status)
	}
	if code, _, body := post("c1", "cancel", url.Values{}); code != 409 || !strings.Contains(body, "a finished run cannot be cancelled") {
		t.Errorf("cancel again: %d %.200s", code, body)
	}
	if code, _, body := post("c1", "repair", url.Values{}); code != 409 || !strings.Contains(body, "only open runs") {
		t.Errorf("repair closed: %d %.200s", code, body)
	}
	if code, _, _ := post("t1", "terminate", url.Values{"reason": {"now"}}); code != 303 {
		t.Errorf("terminate: %d", code)
	}
	if d := f.settle("t1", closed); d.Run.ClosedReason == history.ClosedCompleted {
		t.Errorf("t1 %s %s", d.Run.Status, d.Run.ClosedReason)
	}
	if code, _, body := post("t1", "retry", url.Values{}); code != 409 {
		t.Errorf("retry of a terminated run: %d %.200s", code, body)
	}
	code, h, body := post("f1", "retry", url.Values{})
	if code != 303 {
		t.Fatalf("retry: %d %.300s", code, body)
	}
	if loc := h.Get("Location"); !regexp.MustCompile(`^/ui/runs/[0-9a-f]+\?done=retry$`).MatchString(loc) || strings.Contains(loc, "/f1?") {
		t.Errorf("retry goes to %q, want the new run's page", loc)
	}
	runs, _ := f.srv.List(history.RunFilter{WorkflowID: "f1"})
	if len(runs) != 2 {
		t.Fatalf("f1 has %d runs after retry, want 2", len(runs))
	}
	f.settle(runs[0].RunID, closed)
	if code, _, body := post(runs[1].RunID, "retry", url.Values{}); code != 409 || !strings.Contains(body, "not the newest run") {
		t.Errorf("retry of an older run: %d %.300s", code, body)
	}
	if code, _, _ := post("f1", "explode", url.Values{}); code != 404 {
		t.Errorf("unknown action: %d", code)
	}
	if code, _, body := post("f1", "signal", url.Values{"name": {"x"}, "data": {strings.Repeat("x", server.MaxFormBody)}}); code != 400 && code != 403 {
		t.Errorf("oversized form: %d %.200s", code, body)
	}
}

// TestUIOverUnixSocketNeedsNoLogin: the socket's file permissions are its auth, so the page
// shows the actions and posts need no CSRF value.
func TestUIOverUnixSocketNeedsNoLogin(t *testing.T) {
	f := newWebFixture(t)
	f.start("w1", waitSpec)
	f.settle("w1", waitingForSignal)
	sock := filepath.Join(t.TempDir(), "wend.sock")
	u, err := server.ListenUnix(sock, New(f.srv))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return client.DialUnix(ctx, sock)
	}}}
	resp, err := hc.Get("http://wend/ui/runs/w1")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), `id="signal-form"`) {
		t.Fatalf("page: %d, signal form shown: %v", resp.StatusCode, strings.Contains(string(page), `id="signal-form"`))
	}
	resp, err = hc.PostForm("http://wend/ui/runs/w1/signal", url.Values{"name": {"approve"}, "data": {`{"by":"sock"}`}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if d := f.settle("w1", closed); d.Run.Status != history.StatusCompleted {
		t.Errorf("w1 %s", d.Run.Status)
	}
}

// The UI's Content-Security-Policy names only directives CSP defines (it said form-runAction
// where form-action was meant, so forms were not held to this origin).
func TestCSPHeader(t *testing.T) {
	f := newWebFixture(t)
	_, h, _ := f.send(req{Method: "GET", Path: "/ui/runs", Session: true})
	known := map[string]bool{"default-src": true, "script-src": true, "style-src": true, "img-src": true, "connect-src": true,
		"form-action": true, "frame-ancestors": true, "base-uri": true}
	got := map[string]string{}
	for _, d := range strings.Split(h.Get("Content-Security-Policy"), ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		if !known[name] {
			t.Errorf("unknown CSP directive %q", name)
		}
		got[name] = value
	}
	if got["form-action"] != "'self'" || got["default-src"] != "'none'" || got["frame-ancestors"] != "'none'" {
		t.Errorf("CSP %q: want form-action 'self', default-src 'none', frame-ancestors 'none'", h.Get("Content-Security-Policy"))
	}
}

// TestLoginLandsOnRuns: the guard sends a new session to the UI's home, the runs list.
func TestLoginLandsOnRuns(t *testing.T) {
	f := newWebFixture(t)
	code, h, _ := f.send(req{Method: "GET", Path: server.LoginPath + "?token=" + webToken})
	if code != http.StatusSeeOther || h.Get("Location") != uiRunsPath {
		t.Errorf("login: %d to %q, want 303 to %s", code, h.Get("Location"), uiRunsPath)
	}
}
