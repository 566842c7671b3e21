//go:build unix

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/temporal/e2e/parity"
)

// signal is one `wend signal` a case sends once its run exists.
type signal struct{ name, data, id string }

// example is one workflow of examples/ with the input and signals its comments call for.
type example struct {
	file    string
	input   string
	signals []signal
	before  []example // runs this one waits for (wait_for_workflow), run first
	id      string
	output  string // when set, the output both engines' runs must end with (compact JSON)
}

// examples lists every workflow in examples/ and examples/failures/; TestParityCoversEveryExample
// fails when a file is added without a case.
var examples = []example{
	{file: "hello.wend.yaml", input: `{"name":"ada"}`},
	{file: "approval.wend.yaml", input: `{"request_id":"r-1","amount":12.5,"approvers":["ann","bob"]}`,
		signals: []signal{{"decided", `{"approved":true,"by":"ann"}`, "d-1"}}},
	{file: "order.wend.yaml", input: `{"order_id":"o-7","customer":{"email":"ann@example.com"},"items":[{"sku":"A","qty":1},{"sku":"B","qty":2}]}`,
		signals: []signal{{"shipped", `{"tracking":"TRK-1"}`, "s-1"}}},
	{file: "nightly-report.wend.yaml", input: `{"night":"2026-01-01","regions":["eu","us"],"import_run":"IMPORT"}`,
		before: []example{{file: "hello.wend.yaml", input: `{"name":"import"}`, id: "IMPORT"}}},
	{file: "report-part.wend.yaml", input: `{"region":"eu","night":"2026-01-01"}`},
	{file: "provision-account.wend.yaml", input: `{"user_id":"u-1","plan":"pro"}`},
	// Its schedules are wend serve's (an info finding for --target temporal); run by hand,
	// the workflow is the same on both engines.
	{file: "scheduled-greeting.wend.yaml", input: `{"name":"ada"}`},
	// The built-in http plugin with a secret: the worker serves the builtin and reads API_TOKEN.
	{file: "fetch-order.wend.yaml", input: `{"api":"ORDER_API","order":"42"}`, output: `{"order":"42","status":"shipped"}`},
	{file: "failures/caught.wend.yaml"},
	{file: "failures/heartbeat-timeout.wend.yaml"},
	{file: "failures/listed-non-retryable.wend.yaml"},
	{file: "failures/non-retryable.wend.yaml"},
	{file: "failures/retry-then-fail.wend.yaml"},
	{file: "failures/saga.wend.yaml"},
	{file: "failures/step-timeout.wend.yaml"},
	{file: "failures/workflow-timeout.wend.yaml"},
}

func TestParityCoversEveryExample(t *testing.T) {
	var want []string
	for _, pat := range []string{"*.wend.yaml", "failures/*.wend.yaml"} {
		m, _ := filepath.Glob(filepath.Join("..", "..", "examples", pat))
		for _, f := range m {
			rel, _ := filepath.Rel(filepath.Join("..", "..", "examples"), f)
			want = append(want, filepath.ToSlash(rel))
		}
	}
	var have []string
	for _, e := range examples {
		have = append(have, e.file)
	}
	slices.Sort(want)
	slices.Sort(have)
	if !slices.Equal(want, have) {
		t.Fatalf("examples on disk %v, cases %v: add a case for each new file", want, have)
	}
}

// engine runs the CLI against one engine.
type engine struct {
	name string
	bin  string
	args []string // appended to every command: --db or --temporal
}

func local(db string) engine { return engine{"local", env.wend, []string{"--db", db}} }
func onTemporal() engine {
	return engine{"temporal", env.wendTemporal, []string{"--temporal", env.addr}}
}

// run starts e's file under id, sends its signals as soon as the run exists, and returns
// the exit code of `wend run` and the run's export.
func (en engine) run(t *testing.T, ex example, id string) (int, export.Document) {
	t.Helper()
	for _, b := range ex.before {
		if code, _ := en.run(t, b, b.id); code != 0 {
			t.Fatalf("%s: %s (run first) exited %d", en.name, b.file, code)
		}
	}
	args := append([]string{"run", ex.file, "--id", id}, en.args...)
	if ex.input != "" {
		input := ex.input
		for _, b := range ex.before {
			input = strings.ReplaceAll(input, `"IMPORT"`, `"`+b.id+`"`) // the id of the run waited for
		}
		input = strings.ReplaceAll(input, `"ORDER_API"`, `"`+env.orderAPI+`"`)
		args = append(args, "--input", input)
	}
	type ran struct {
		r   result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		r, err := runCLI(3*time.Minute, en.bin, args...)
		done <- ran{r, err}
	}()
	for _, s := range ex.signals {
		// `wend signal` exits 1 while the run does not exist yet; the run keeps early signals.
		deadline := time.Now().Add(time.Minute)
		for {
			r := cli(t, time.Minute, en.bin, append([]string{"signal", id, s.name, "--data", s.data, "--id", s.id}, en.args...)...)
			if r.code == 0 {
				break
			}
			if r.code != 1 || time.Now().After(deadline) {
				t.Fatalf("%s: wend signal %s exited %d: %s", en.name, s.name, r.code, r.stderr)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	res := <-done
	if res.err != nil {
		t.Fatalf("%s: %v", en.name, res.err)
	}
	r := res.r
	out := filepath.Join(t.TempDir(), en.name+".json")
	h := cli(t, time.Minute, en.bin, append([]string{"history", id, "--output", out}, en.args...)...)
	if h.code != 0 {
		t.Fatalf("%s: wend history %s exited %d: %s", en.name, id, h.code, h.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d export.Document
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: export of %s: %v", en.name, id, err)
	}
	if r.code != 0 && d.Workflow.Status == "completed" {
		t.Fatalf("%s: run exited %d but the run completed; stderr:\n%s", en.name, r.code, r.stderr)
	}
	return r.code, d
}

// TestParityExamples runs every example locally and on Temporal (one cacheless worker, so
// every workflow task replays the full history) and compares exit codes and normalised
// exports.
func TestParityExamples(t *testing.T) {
	w := startWorker(t, "wend", filepath.Join(t.TempDir(), "worker"))
	defer w.stop(t)
	db := filepath.Join(t.TempDir(), "local.db")
	for _, ex := range examples {
		t.Run(ex.file, func(t *testing.T) {
			id := "parity-" + strings.NewReplacer("/", "-", ".wend.yaml", "").Replace(ex.file)
			ex := ex
			ex.before = slices.Clone(ex.before)
			for i := range ex.before {
				ex.before[i].id = id + "-before"
			}
			lcode, ldoc := local(db).run(t, ex, id)
			tcode, tdoc := onTemporal().run(t, ex, id)
			if lcode != tcode {
				t.Errorf("wend run exit: local %d, temporal %d", lcode, tcode)
			}
			if lout, tout := compact(ldoc.Workflow.Output), compact(tdoc.Workflow.Output); ex.output != "" && (lout != ex.output || tout != ex.output) {
				t.Errorf("output: local %s, temporal %s; want %s", lout, tout, ex.output)
			}
			if tdoc.Workflow.Engine == nil || tdoc.Workflow.Engine.Kind != "temporal" {
				t.Errorf("the Temporal export does not name its engine: %+v", tdoc.Workflow.Engine)
			}
			for _, d := range parity.Diff(parity.Of(ldoc), parity.Of(tdoc)) {
				t.Error(d)
			}
			if *update && slices.Contains(golden, ex.file) {
				recordGolden(t, id, ex.file)
			}
		})
	}
}

// compact is raw JSON without its indentation.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
