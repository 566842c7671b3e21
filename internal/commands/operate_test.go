package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/wendflow/wend/app/apptest"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/schemas"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/testkit/enginetest"
)

// holder is an in-process wend that holds a database with an engine over fake activities
// and serves its control socket, so the CLI's commands go through the same remote path as
// against 'wend serve', with activities the test controls.
type holder struct {
	t    *testing.T
	path string
	eng  *engine.Engine
	st   history.Store
	acts *enginetest.Outage
	dir  string
}

func newHolder(t *testing.T) *holder {
	t.Helper()
	dir := t.TempDir()
	h := &holder{t: t, dir: dir, path: filepath.Join(dir, "wend.db"), acts: &enginetest.Outage{}}
	a := apptest.Open(t, apptest.Options{Dir: dir, Activities: h.acts})
	h.st, h.eng = a.Store, a.Engine
	u := serveControl(&env{stdout: io.Discard, stderr: io.Discard, getenv: os.Getenv}, h.path, server.New(h.eng, h.st))
	if u == nil {
		t.Fatal("no control socket")
	}
	t.Cleanup(func() { u.Close() }) // before the app closes: no request may reach a closing engine
	return h
}

// start starts a run of src under id and waits until it closes or only waits.
func (h *holder) start(id, src string) history.Run {
	h.t.Helper()
	file := filepath.Join(h.dir, id+".wend.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		h.t.Fatal(err)
	}
	rec, _, err := h.eng.Start(context.Background(), engine.StartRequest{WorkflowID: id, SpecFile: file, Source: src})
	if err != nil {
		h.t.Fatal(err)
	}
	return rec
}

func (h *holder) closed(id string) history.Run {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := h.eng.WaitClosed(ctx, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// wend runs the command line against the holder's database and returns its exit code,
// stdout and stderr.
func (h *holder) wend(args ...string) (int, string, string) {
	h.t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, getenv: func(k string) string {
		if k == "WEND_DB" {
			return h.path
		}
		return ""
	}}
	code := run(e, args)
	return code, out.String(), errb.String()
}

const paySpec = `wend: v1
name: pay
plugins: {p: ./p}
steps:
  - {id: reserve, activity: p.reserve, with: 1}
  - {id: charge, activity: p.charge, with: 2, retry: {tries: 2, backoff: [10ms]}}
output: "${{ [steps.reserve.output, steps.charge.output] }}"
`

// wend retry --follow resumes a run that failed in an activity from that activity, in the
// process that holds the database, and follows it to its output like wend run.
func TestRetryFollowResumesTheFailedActivity(t *testing.T) {
	h := newHolder(t)
	h.acts.Down.Store(true)
	h.start("pay", paySpec)
	failed := h.closed("pay")
	if failed.Status != history.StatusFailed {
		t.Fatalf("first run: %s", failed.Status)
	}

	h.acts.Down.Store(false)
	code, out, errOut := h.wend("retry", "pay", "--follow")
	if code != exitOK || out != "[1,2]\n" {
		t.Fatalf("retry --follow: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "resumes failed run "+failed.RunID) {
		t.Errorf("stderr does not name the failed run:\n%s", errOut)
	}

	// The export of the new run shows one activity execution for charge, with the tries of
	// both runs: 1 and 2 failed in the first, 3 completed in the retry.
	doc, err := server.New(h.eng, h.st).Export("pay")
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, a := range doc.Activities {
		if a.Activity == "charge" {
			for _, at := range a.Attempts {
				outcomes = append(outcomes, at.Outcome)
			}
		}
	}
	if got := strings.Join(outcomes, ","); got != "failed,failed,completed" {
		t.Errorf("charge attempts %s, want failed,failed,completed", got)
	}

	// A completed run is refused: exit 1 with the engine's reason.
	code, out, errOut = h.wend("retry", "pay")
	if code != exitFailed || out != "" || !strings.Contains(errOut, "only failed runs can be retried") {
		t.Fatalf("retry of a completed run: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// wend retry without --follow prints the new run id; the holder drives it.
func TestRetryPrintsTheNewRunID(t *testing.T) {
	h := newHolder(t)
	h.acts.Down.Store(true)
	h.start("pay", paySpec)
	failed := h.closed("pay")
	h.acts.Down.Store(false)
	code, out, errOut := h.wend("retry", "pay")
	newID := strings.TrimSpace(out)
	if code != exitOK || len(newID) != 16 || newID == failed.RunID {
		t.Fatalf("retry: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if done := h.closed("pay"); done.RunID != newID || done.Status != history.StatusCompleted {
		t.Fatalf("retried run: %+v", done)
	}
}

// exportSchema compiles schemas/history-export.schema.json with every remote load refused.
func exportSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.LoadURL = func(url string) (io.ReadCloser, error) {
		return nil, errors.New("remote schema loading is disabled: " + url)
	}
	if err := c.AddResource(schemas.HistoryExportID, bytes.NewReader(schemas.HistoryExport)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schemas.HistoryExportID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// wend history --json is a valid wend.history-export/v1 document, --output writes the same
// bytes, and the local and remote backends build the same export.
func TestHistoryJSONMatchesTheSchema(t *testing.T) {
	h := newHolder(t)
	h.acts.Down.Store(true)
	h.start("pay", paySpec)
	h.closed("pay") // failed, after a retry: attempts, a retry schedule and failures to export

	code, out, errOut := h.wend("history", "pay", "--json")
	if code != exitOK || errOut != "" {
		t.Fatalf("history --json: exit %d, stderr %q", code, errOut)
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("history --json is not JSON: %v\n%s", err, out)
	}
	if err := exportSchema(t).Validate(v); err != nil {
		t.Fatalf("history --json does not match the schema: %#v", err)
	}
	for _, want := range []string{`"schema": "wend.history-export/v1"`, `"failure_category": "activity"`, `"retry_backoff_seconds": 0.01`} {
		if !strings.Contains(out, want) {
			t.Errorf("export lacks %s", want)
		}
	}

	file := filepath.Join(h.dir, "export.json")
	if err := os.WriteFile(file, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, o, e := h.wend("history", "pay", "--output", file); code != exitOK || o != "" || e != "" {
		t.Fatalf("history --output: exit %d, stdout %q, stderr %q", code, o, e)
	}
	// Two exports differ in exported_at only.
	if b, _ := os.ReadFile(file); sansExportedAt(t, string(b)) != sansExportedAt(t, out) {
		t.Errorf("--output wrote another export than --json printed")
	}
	entries, _ := os.ReadDir(h.dir)
	for _, en := range entries {
		if strings.Contains(en.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", en.Name())
		}
	}

	// The same document from the server in process (local) and over the socket (remote).
	loc, err := server.New(h.eng, h.st).Export("pay")
	if err != nil {
		t.Fatal(err)
	}
	locJS, _ := json.MarshalIndent(loc, "", "  ")
	if sansExportedAt(t, string(locJS)) != sansExportedAt(t, out) {
		t.Errorf("local and remote exports differ")
	}
}

// sansExportedAt is an export's JSON without its exported_at, re-encoded.
func sansExportedAt(t *testing.T, js string) string {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatalf("export: %v", err)
	}
	if _, ok := d["exported_at"]; !ok {
		t.Errorf("export without exported_at")
	}
	delete(d, "exported_at")
	b, _ := json.Marshal(d)
	return string(b)
}

// wend repair rebuilds a task the store lost and says so; then there is nothing to repair.
func TestRepairRebuildsALostTask(t *testing.T) {
	h := newHolder(t)
	rec := h.start("r", "wend: v1\nname: r\nsteps: [{delay: 1h}]\n")
	code, out, _ := h.wend("repair", "r")
	if code != exitOK || out != "nothing to repair (1 open run examined)\n" {
		t.Fatalf("repair of a healthy run: exit %d, stdout %q", code, out)
	}
	tasks, err := h.st.Tasks()
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks %+v %v", tasks, err)
	}
	now, _ := h.st.Run(rec.RunID)
	if err := h.st.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{{Run: now}}, DeleteTasks: []string{tasks[0].ID}}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := h.wend("repair")
	if code != exitOK || out != rec.RunID+": "+tasks[0].ID+"\n" {
		t.Fatalf("repair: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if after, _ := h.st.Tasks(); len(after) != 1 || after[0].ID != tasks[0].ID {
		t.Fatalf("tasks after repair: %+v", after)
	}
	code, out, _ = h.wend("repair", "--json")
	if code != exitOK || !strings.Contains(out, `"rebuilt": []`) || !strings.Contains(out, `"runs": 1`) {
		t.Fatalf("repair --json after repair: exit %d, stdout %q", code, out)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	for _, content := range []string{"first", "second"} {
		if err := writeFileAtomic(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != content {
			t.Fatalf("content %q, want %q", b, content)
		}
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	if err := writeFileAtomic(filepath.Join(dir, "missing", "f.json"), []byte("x")); err == nil {
		t.Fatal("write into a missing folder succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("folder holds %d entries, want only f.json", len(entries))
	}
}
