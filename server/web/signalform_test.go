package web

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

// reviewSpec waits for a decision whose schema has a field of each kind, markup in its texts.
const reviewSpec = `wend: v1
name: review
plugins: {demo: ./demo}
signals:
  decide:
    description: "The reviewer's <b>decision</b>"
    schema:
      type: object
      required: [approved, reviewer]
      properties:
        approved: {type: boolean, description: "Approve the order?"}
        reviewer: {type: string, minLength: 2, title: "Reviewer <i>name</i>"}
        level: {enum: [low, high]}
        amount: {type: number, minimum: 0, maximum: 1000}
        tags: {type: array, items: {type: string}}
        address:
          type: object
          properties:
            city: {type: string}
            zip: {type: string, pattern: "^[0-9]{5}$"}
        extra: {type: array, items: {type: object}}
  note: {}
steps:
  - id: decide
    wait_for_signal: decide
output: {decision: "${{ steps.decide.output }}"}
`

var fieldKey = regexp.MustCompile(`(?s)<label class="field k-[a-z]+" data-name="([^"]*)">.*?name="(f\d+)"`)

// formKeys maps the fields of the page's first schema form to their form keys, as a browser
// would find them: by the field's name on the page.
func formKeys(t *testing.T, body string) map[string]string {
	t.Helper()
	i := strings.Index(body, `class="card schema-form`)
	if i < 0 {
		t.Fatalf("the page has no schema form:\n%.3000s", body)
	}
	form := body[i : i+strings.Index(body[i:], "</form>")]
	keys := map[string]string{}
	for _, m := range fieldKey.FindAllStringSubmatch(form, -1) {
		keys[m[1]] = m[2]
	}
	return keys
}

// A waiting signal with a contract is a form on the run page, its texts shown as text; the
// form's post is read back into the signal's data and sent with the session's rights: a read
// session may not, data the schema refuses is refused by the server (the page's own checks
// can be skipped by hand) with the values kept, and good data reaches the run.
func TestSignalFormEndToEnd(t *testing.T) {
	f := newWebFixture(t)
	f.start("r1", reviewSpec)
	f.settle("r1", waitingForSignal)
	code, _, page := f.send(req{Method: "GET", Path: "/ui/runs/r1", Session: true})
	if code != 200 {
		t.Fatalf("%d", code)
	}
	for _, want := range []string{`data-signal="decide"`, `The reviewer&#39;s &lt;b&gt;decision&lt;/b&gt;`, `Reviewer &lt;i&gt;name&lt;/i&gt;`,
		`minlength="2"`, `min="0" max="1000"`, `<option value="1">high</option>`, `placeholder="one string a line"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the form lacks %q", want)
		}
	}
	if strings.Contains(page, "<b>decision") || strings.Contains(page, "<i>name") {
		t.Error("the schema's markup reached the page as markup")
	}
	keys := formKeys(t, page)
	for _, n := range []string{"approved", "reviewer", "level", "amount", "tags", "city", "extra"} {
		if keys[n] == "" {
			t.Fatalf("no field %s in %v", n, keys)
		}
	}
	fields := func(kv map[string]string) url.Values {
		v := url.Values{"name": {"decide"}, "form": {"schema"}}
		for k, val := range kv {
			v.Set(keys[k], val)
		}
		return v
	}
	// A read session may look, not answer.
	body, h := form(f, fields(map[string]string{"approved": "true", "reviewer": "ann"}), f.base)
	if code, _, _ := f.send(req{Method: "POST", Path: "/ui/runs/r1/signal", Body: body, Header: h, ReadSession: true}); code != 403 {
		t.Errorf("a read session answered the signal: %d", code)
	}
	// What the page would have stopped: the server stops too, and keeps the values.
	body, h = form(f, fields(map[string]string{"approved": "true", "reviewer": "ann", "amount": "5000", "city": "Lyon"}), f.base)
	code, _, page = f.send(req{Method: "POST", Path: "/ui/runs/r1/signal", Body: body, Header: h, Session: true})
	if code != 400 || !strings.Contains(page, "data.amount") || !strings.Contains(page, `value="5000"`) || !strings.Contains(page, `value="Lyon"`) {
		t.Errorf("an amount over the maximum: %d\n%.4000s", code, page)
	}
	body, h = form(f, fields(map[string]string{"approved": "true", "reviewer": "ann", "amount": "12.5", "level": "1",
		"tags": "rush\ngift", "city": "Lyon", "extra": `[{"k": 1}]`}), f.base)
	if code, hdr, page := f.send(req{Method: "POST", Path: "/ui/runs/r1/signal", Body: body, Header: h, Session: true}); code != 303 || !strings.HasSuffix(hdr.Get("Location"), "?done=signal") {
		t.Fatalf("a good answer: %d %v %.2000s", code, hdr, page)
	}
	d := f.settle("r1", closed)
	if d.Run.Status != history.StatusCompleted {
		t.Fatalf("r1 ended %s", d.Run.Status)
	}
	var out struct{ Decision map[string]any }
	if err := json.Unmarshal(d.Output, &out); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(out.Decision)
	if want := `{"address":{"city":"Lyon"},"amount":12.5,"approved":true,"extra":[{"k":1}],"level":"high","reviewer":"ann","tags":["rush","gift"]}`; string(got) != want {
		t.Errorf("the run took\n%s\nwant\n%s", got, want)
	}
}

// A workflow's page shows its version (the file's sha256), its graph and a form from its
// input schema that starts a run; the schedules page links to the graph.
func TestWorkflowPage(t *testing.T) {
	f := newWebFixture(t)
	src := strings.Replace(typedSpec, "    order_id: {type: string}", "    order_id: {type: string, description: \"the <em>order</em>\"}\n    qty: {type: integer, minimum: 1}", 1)
	writeFile(t, filepath.Join(f.dir, "typed.wend.yaml"), src)
	ws, err := server.LoadWorkflows(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	f.srv.SetWorkflows(ws)
	code, _, list := f.send(req{Method: "GET", Path: "/ui/workflows", ReadSession: true})
	if code != 200 || !strings.Contains(list, `<a href="/ui/workflows/typed">typed</a>`) || !strings.Contains(list, `href="/ui/workflows/typed#graph-title">graph</a>`) {
		t.Fatalf("workflows list: %d %.2000s", code, list)
	}
	code, _, page := f.send(req{Method: "GET", Path: "/ui/workflows/typed", Session: true})
	data, _ := os.ReadFile(filepath.Join(f.dir, "typed.wend.yaml"))
	for _, want := range []string{sha256hex(data), `<svg xmlns="http://www.w3.org/2000/svg"`, `data-step="wait"`, `the &lt;em&gt;order&lt;/em&gt;`, `min="1"`, `id="wf-start"`} {
		if code != 200 || !strings.Contains(page, want) {
			t.Errorf("the workflow's page lacks %q (%d)", want, code)
		}
	}
	keys := formKeys(t, page)
	v := url.Values{"workflow": {"typed"}, "form": {"schema"}, "id": {"t-9"}}
	v.Set(keys["qty"], "x")
	body, h := form(f, v, f.base)
	if code, _, page := f.send(req{Method: "POST", Path: "/ui/runs", Body: body, Header: h, Session: true}); code != 400 || !strings.Contains(page, `qty: &#34;x&#34; is not a whole number`) {
		t.Errorf("a bad quantity: %d %.300s", code, page)
	}
	v.Set(keys["qty"], "2")
	body, h = form(f, v, f.base)
	if code, _, page := f.send(req{Method: "POST", Path: "/ui/runs", Body: body, Header: h, Session: true}); code != 400 || !strings.Contains(page, "order_id") || !strings.Contains(page, `value="2"`) {
		t.Errorf("no order id (the input schema requires one): %d %.3000s", code, page)
	}
	v.Set(keys["order_id"], "A-7")
	body, h = form(f, v, f.base)
	if code, hdr, _ := f.send(req{Method: "POST", Path: "/ui/runs", Body: body, Header: h, Session: true}); code != 303 || !strings.HasSuffix(hdr.Get("Location"), "?done=start") {
		t.Fatalf("a good input: %d %v", code, hdr)
	}
	d := f.settle("t-9", func(api.RunDetail) bool { return true })
	if string(d.Input) != `{"order_id":"A-7","qty":2}` {
		t.Errorf("the run's input is %s", d.Input)
	}
	if _, _, run := f.send(req{Method: "GET", Path: "/ui/runs/t-9", ReadSession: true}); !strings.Contains(run, `<a id="workflow-link" href="/ui/workflows/typed">`) {
		t.Error("the run's page does not link to its workflow's page")
	}
	code, hdr, svg := f.send(req{Method: "GET", Path: "/ui/workflows/typed/graph.svg", ReadSession: true})
	if code != 200 || hdr.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(svg, "<svg") {
		t.Errorf("graph.svg: %d %s %.100s", code, hdr.Get("Content-Type"), svg)
	}
	if code, _, _ := f.send(req{Method: "GET", Path: "/ui/workflows/nope", ReadSession: true}); code != 404 {
		t.Errorf("an unknown workflow: %d", code)
	}
}

func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
