//go:build unix

package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/wendflow/wend/testkit/browsertest"
)

// TestServeOverTemporal: wend serve --temporal answers the HTTP API, the web UI and /metrics
// over a cluster's runs as it does over a database: a registered workflow started by name, its
// signals, its wait, its page, its export (naming Temporal), a cancel, and wend_runs from
// visibility.
func TestServeOverTemporal(t *testing.T) {
	const queue = "serve-e2e"
	w := startWorker(t, queue, filepath.Join(t.TempDir(), "worker"))
	defer w.stop(t)
	flows := t.TempDir()
	if err := os.WriteFile(filepath.Join(flows, "contract.wend.yaml"), []byte(contractFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	const token = "0123456789abcdef0123456789abcdef"
	addr := freeAddr(t)
	srv := startProcEnv(t, "wend: serving the runs of Temporal", []string{"WEND_TOKEN=" + token},
		env.wendTemporal, "serve", "--temporal", env.addr, "--task-queue", queue, "--http", addr, "--workflows", flows)
	defer srv.stop(t)
	base := "http://" + addr
	call := func(method, path, body string, want int) []byte {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s; want %d", method, path, resp.StatusCode, b, want)
		}
		return b
	}
	field := func(b []byte, path ...string) any {
		t.Helper()
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("not JSON: %s", b)
		}
		for _, k := range path {
			o, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("no %v in %s", path, b)
			}
			v = o[k]
		}
		return v
	}

	call("POST", "/v1/runs", `{"workflow": "contract", "id": "srv-e2e"}`, http.StatusCreated)
	if b := call("GET", "/v1/runs?workflow_id=srv-e2e", "", 200); !bytes.Contains(b, []byte(`"status":"running"`)) {
		t.Fatalf("GET /v1/runs: %s", b)
	}
	// The edge's checks hold over a cluster too: an undeclared signal is refused.
	call("POST", "/v1/runs/srv-e2e/signals", `{"name": "aprove"}`, http.StatusNotFound)
	// Both waits take one approve each; the first send may reach the run before its wait.
	call("POST", "/v1/runs/srv-e2e/signals", `{"name": "approve", "data": {"by": "ann"}, "id": "a1"}`, 200)
	call("POST", "/v1/runs/srv-e2e/signals", `{"name": "approve", "data": {"by": "bob"}, "id": "a2"}`, 200)
	o := call("GET", "/v1/runs/srv-e2e/wait?timeout=60s", "", 200)
	if field(o, "closed") != true || field(o, "output") != "ann" {
		t.Fatalf("wait: %s", o)
	}
	if st := field(call("GET", "/v1/runs/srv-e2e", "", 200), "run", "status"); st != "completed" {
		t.Fatalf("GET /v1/runs/srv-e2e: status %v", st)
	}
	if kind := field(call("GET", "/v1/runs/srv-e2e/export", "", 200), "workflow", "engine", "kind"); kind != "temporal" {
		t.Fatalf("export's engine kind %v; want temporal", kind)
	}
	if page := call("GET", "/ui/runs/srv-e2e", "", 200); !bytes.Contains(page, []byte("srv-e2e")) || !bytes.Contains(page, []byte("completed")) {
		t.Fatalf("the run's page does not show it completed:\n%s", page)
	}

	// In the browser: the waiting run's page offers the signal form; cancel it from there.
	call("POST", "/v1/runs", `{"workflow": "contract", "id": "srv-e2e-cancel"}`, http.StatusCreated)
	ctx, dialog := browsertest.Start(t)
	browsertest.Do(t, ctx, "log in",
		chromedp.Navigate(base+"/ui/login?token="+token), chromedp.WaitVisible(chromedp.CSS(`#runs`)))
	browsertest.Do(t, ctx, "open the waiting run",
		chromedp.Navigate(base+"/ui/runs/srv-e2e-cancel"), chromedp.WaitVisible(chromedp.CSS(`#signal-form`)))
	if v := browsertest.Get(t, ctx, "signal name", chromedp.Value(chromedp.CSS(`#signal-name`))); v != "approve" {
		t.Errorf("the signal form names %q, want approve", v)
	}
	browsertest.Do(t, ctx, "cancel from the page",
		chromedp.SendKeys(chromedp.CSS(`form[action$="/cancel"] input[name="reason"]`), "changed my mind"),
		chromedp.Click(chromedp.CSS(`#act-cancel`)),
		chromedp.WaitVisible(chromedp.CSS(`#flash`)))
	browsertest.Text(t, ctx, `#flash`, "Cancel requested.")
	o = call("GET", "/v1/runs/srv-e2e-cancel/wait?timeout=60s", "", 200)
	if field(o, "run", "status") != "cancelled" {
		t.Fatalf("wait after cancel: %s", o)
	}
	if dialog.Load() {
		t.Error("a dialog opened: script ran that the UI does not ship")
	}
	deadline := time.Now().Add(time.Minute) // visibility catches up with the close
	for {
		metrics := string(call("GET", "/metrics", "", 200))
		if strings.Contains(metrics, `wend_runs{status="completed",workflow="contract"} 1`) &&
			strings.Contains(metrics, `wend_runs{status="cancelled",workflow="contract"} 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics does not count the two runs:\n%s", metrics)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
