package web

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

// moveSpec waits for "one" at its first step and for "go" at its second.
const moveSpec = "wend: v1\nname: mv\nsteps:\n  - {id: first, wait_for_signal: one}\n  - {id: second, wait_for_signal: go}\n"

var (
	// moveAdds adds an output: every decision the run has made stays the same.
	moveAdds = moveSpec + "output: moved\n"
	// moveRemoves removes the step the run has passed.
	moveRemoves = strings.Replace(moveSpec, "  - {id: first, wait_for_signal: one}\n", "", 1)
)

// moveFixture is a web fixture with workflow mv registered from text and a run m1 of
// moveSpec past its first step, waiting for "go".
func moveFixture(t *testing.T, text string) *webFixture {
	t.Helper()
	f := newWebFixture(t)
	f.start("m1", moveSpec)
	f.settle("m1", waitingFor("one"))
	if _, err := f.srv.Signal(context.Background(), "m1", "one", nil); err != nil {
		t.Fatal(err)
	}
	f.settle("m1", waitingFor("go"))
	f.register(text)
	return f
}

// register writes mv's registered file and registers the folder, as wend serve --workflows.
func (f *webFixture) register(text string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Join(f.dir, "reg"), 0o755); err != nil {
		f.t.Fatal(err)
	}
	writeFile(f.t, filepath.Join(f.dir, "reg", "mv.wend.yaml"), text)
	ws, err := server.LoadWorkflows(filepath.Join(f.dir, "reg"))
	if err != nil {
		f.t.Fatal(err)
	}
	f.srv.SetWorkflows(ws)
}

func waitingFor(signal string) func(api.RunDetail) bool {
	return func(d api.RunDetail) bool {
		for _, w := range d.Waits {
			if w.Signal == signal {
				return true
			}
		}
		return false
	}
}

var moveBlock = regexp.MustCompile(`(?s)<div class="card" id="move".*?</div>`)

// moveOn is the run page's move block as the session sees it ("" when there is none), with
// the fixture's folder and the CSRF value replaced by fixed words.
func moveOn(f *webFixture, read bool) string {
	f.t.Helper()
	code, _, page := f.send(req{Method: "GET", Path: "/ui/runs/m1", Session: !read, ReadSession: read})
	if code != http.StatusOK {
		f.t.Fatalf("run page: %d\n%s", code, page)
	}
	block := moveBlock.FindString(page)
	block = strings.ReplaceAll(block, f.dir, "DIR")
	if r, err := f.srv.Resolve("m1"); err == nil {
		block = strings.ReplaceAll(block, r.RunID, "RUN")
	}
	return csrfInput.ReplaceAllString(block, `name="csrf" value="CSRF"`)
}

// TestRunPageOffersMove: with the run's workflow registered at another version, the run page
// shows both versions and the replay check's verdict; the act session gets a button when the
// check holds, the read session the verdict alone. Golden pages for each.
func TestRunPageOffersMove(t *testing.T) {
	cases := []struct {
		name, text string
		read       bool
		button     bool
		invalid    bool // the registered file changed into one that does not load
	}{
		{name: "holds", text: moveAdds, button: true},
		{name: "holds-read", text: moveAdds, read: true},
		{name: "parts", text: moveRemoves},
		{name: "parts-read", text: moveRemoves, read: true},
		{name: "invalid", text: moveSpec + "bogus: 1\n", invalid: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := moveFixture(t, moveAdds)
			if c.invalid {
				writeFile(t, filepath.Join(f.dir, "reg", "mv.wend.yaml"), c.text)
			} else {
				f.register(c.text)
			}
			block := moveOn(f, c.read)
			if block == "" {
				t.Fatal("no move offered")
			}
			if got := strings.Contains(block, `id="act-migrate"`); got != c.button {
				t.Fatalf("button shown: %v, want %v:\n%s", got, c.button, block)
			}
			golden(t, filepath.Join("testdata", "golden", "move-"+c.name+".html"), block)
		})
	}
	t.Run("same version", func(t *testing.T) {
		f := moveFixture(t, moveSpec)
		if block := moveOn(f, false); block != "" {
			t.Fatalf("move offered to the version the run is on:\n%s", block)
		}
	})
	t.Run("not registered", func(t *testing.T) {
		f := moveFixture(t, moveAdds)
		f.srv.SetWorkflows(nil)
		if block := moveOn(f, false); block != "" {
			t.Fatalf("move offered with nothing registered:\n%s", block)
		}
	})
}

// golden compares got with the file at path; WEND_GOLDEN=1 writes it.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if os.Getenv("WEND_GOLDEN") == "1" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (WEND_GOLDEN=1 writes it)", err)
	}
	if got != string(want) {
		t.Errorf("differs from %s:\n%s", path, got)
	}
}

// TestUIMoveRefusesAttackers: the move button's post needs the act session, its CSRF value
// and the version the page showed; it moves a run only to its own workflow's registered file
// whatever the form names, and a run the file would break stays where it is.
func TestUIMoveRefusesAttackers(t *testing.T) {
	f := moveFixture(t, moveAdds)
	to := history.SpecSHA256([]byte(moveAdds))
	from := history.SpecSHA256([]byte(moveSpec))
	other := filepath.Join(f.dir, "other.wend.yaml")
	writeFile(t, other, strings.Replace(moveSpec, "wait_for_signal: go", "wait_for_signal: other", 1))
	f.start("o1", waitSpec) // workflow approval: not registered

	body, hdr := form(f, url.Values{"to": {to}}, f.base)
	noCSRF, noCSRFHdr := form(f, url.Values{"to": {to}, "csrf": {"-"}}, f.base)
	away, awayHdr := form(f, url.Values{"to": {to}}, "http://evil.example")
	stale, staleHdr := form(f, url.Values{"to": {from}}, f.base)
	forged, forgedHdr := form(f, url.Values{"to": {history.SpecSHA256([]byte(mustRead(t, other)))}, "file": {other}, "source": {mustRead(t, other)}}, f.base)
	oBody, oHdr := form(f, url.Values{"to": {to}}, f.base)
	cases := []struct {
		name string
		r    req
		code int
		says string
	}{
		{"no token", req{Method: "POST", Path: "/ui/runs/m1/migrate", Body: body, Header: hdr}, 401, ""},
		{"read session", req{Method: "POST", Path: "/ui/runs/m1/migrate", Body: body, Header: hdr, ReadSession: true}, 403, ""},
		{"no CSRF value", req{Method: "POST", Path: "/ui/runs/m1/migrate", Body: noCSRF, Header: noCSRFHdr, Session: true}, 403, ""},
		{"another origin", req{Method: "POST", Path: "/ui/runs/m1/migrate", Body: away, Header: awayHdr, Session: true}, 403, ""},
		{"stale version", req{Method: "POST", Path: "/ui/runs/m1/migrate", Body: stale, Header: staleHdr, Session: true}, 409, "look at the check again"},
		{"forged file", req{Method: "POST", Path: "/ui/runs/m1/migrate", Body: forged, Header: forgedHdr, Session: true}, 409, "look at the check again"},
		{"another workflow's run", req{Method: "POST", Path: "/ui/runs/o1/migrate", Body: oBody, Header: oHdr, Session: true}, 404, "is not registered"},
	}
	for _, c := range cases {
		code, _, page := f.send(c.r)
		if code != c.code || !strings.Contains(page, c.says) {
			t.Errorf("%s: %d, want %d saying %q:\n%s", c.name, code, c.code, c.says, page)
		}
		if r, _ := f.srv.Resolve("m1"); r.SpecSHA256 != from {
			t.Fatalf("%s moved the run to %s", c.name, r.SpecSHA256)
		}
	}

	code, h, _ := f.send(req{Method: "POST", Path: "/ui/runs/m1/migrate", Body: body, Header: hdr, Session: true})
	if code != http.StatusSeeOther || !strings.HasSuffix(h.Get("Location"), "?done=migrate") {
		t.Fatalf("move: %d %v", code, h)
	}
	r, _ := f.srv.Resolve("m1")
	if r.SpecSHA256 != to {
		t.Fatalf("run on %s after the move, want %s", r.SpecSHA256, to)
	}
	p, err := f.srv.Events("m1", 0)
	if err != nil {
		t.Fatal(err)
	}
	last := p.Events[len(p.Events)-1]
	m, err := history.DataOf[history.Migration](last)
	if err != nil || last.Type != history.WorkflowMigrated || m.By != "act token" || m.File != filepath.Join(f.dir, "reg", "mv.wend.yaml") {
		t.Fatalf("last event %s %+v %v", last.Type, m, err)
	}
	if block := moveOn(f, false); block != "" {
		t.Fatalf("move still offered after it:\n%s", block)
	}
}

// TestUIMoveRefusesABreakingFile: a post naming the version of a file the run's history
// parts from leaves the run where it is and says where they part.
func TestUIMoveRefusesABreakingFile(t *testing.T) {
	f := moveFixture(t, moveRemoves)
	body, hdr := form(f, url.Values{"to": {history.SpecSHA256([]byte(moveRemoves))}}, f.base)
	code, _, page := f.send(req{Method: "POST", Path: "/ui/runs/m1/migrate", Body: body, Header: hdr, Session: true})
	if code != http.StatusConflict || !strings.Contains(page, "the run stays on its version") || !strings.Contains(page, "at event ") {
		t.Fatalf("breaking move: %d\n%s", code, page)
	}
	if r, _ := f.srv.Resolve("m1"); r.SpecSHA256 != history.SpecSHA256([]byte(moveSpec)) {
		t.Fatalf("a breaking move moved the run to %s", r.SpecSHA256)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
