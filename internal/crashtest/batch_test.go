//go:build unix

package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
)

// batchState is what GET /v1/batches/{id} answers, in the fields this test reads.
type batchState struct {
	Status                    string
	Total, Next, Done, Failed int
	Skipped                   int
	Failures                  []struct{ RunID, Error string }
}

// TestBatchAcrossKills: a cancel batch over 40 open runs, paced at 20 runs a second, while
// the wend serve running it is killed with SIGKILL at random moments and restarted. The
// batch must resume after each kill and complete, with every run cancelled and each run's
// history holding exactly one cancel request: no run acted on twice, none left out.
func TestBatchAcrossKills(t *testing.T) {
	t.Parallel() // the test waits on its own processes most of its time
	if testing.Short() {
		t.Skip("crash test builds and runs real processes")
	}
	wend, _ := bins(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "wend.db")
	wf := filepath.Join(dir, "wait.wend.yaml")
	if err := os.WriteFile(wf, []byte("wend: v1\nname: wait\nsteps: [{wait_for_signal: go}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 40
	start := time.Now()
	for i := range n {
		if out, err := exec.Command(wend, "run", "--detach", "--id", fmt.Sprintf("b-%02d", i), "--db", db, wf).CombinedOutput(); err != nil {
			t.Fatalf("start b-%02d: %v\n%s", i, err, out)
		}
	}
	t.Logf("%d runs started in %v", n, time.Since(start))
	seed := time.Now().UnixNano() % 100000
	rng := rand.New(rand.NewSource(seed))
	sock := db + ".sock"
	api := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	srv := startServe(t, wend, db, "")
	defer func() { _ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL); _ = srv.Wait() }()
	waitSocket(t, srv, sock)
	body := `{"id":"bulk","operation":"cancel","where":"id ^= b-","reason":"bulk","rps":20}`
	if code, out := batchCall(t, api, "POST", "/v1/batches", body); code != http.StatusCreated {
		t.Fatalf("post batch: %d %s", code, out)
	}
	kills := 0
	for ; kills < 4; kills++ {
		time.Sleep(time.Duration(50+rng.Intn(500)) * time.Millisecond)
		if bt := batchGet(t, api); bt.Status != "running" {
			break
		}
		_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
		_ = srv.Wait()
		srv = startServe(t, wend, db, "")
		waitSocket(t, srv, sock)
	}
	deadline := time.Now().Add(60 * time.Second)
	bt := batchGet(t, api)
	for bt.Status == "running" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		bt = batchGet(t, api)
	}
	// Let serve finish the cancels it recorded, then read the histories from the file.
	for time.Now().Before(deadline) {
		code, out := batchCall(t, api, "GET", "/v1/runs?status=running", "")
		if code == http.StatusOK && strings.Contains(out, `"runs":[]`) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
	_ = srv.Wait()
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var twice, none, open []string
	for i := range n {
		id := fmt.Sprintf("b-%02d", i)
		runs, err := st.Runs(history.RunFilter{WorkflowID: id})
		if err != nil || len(runs) != 1 {
			t.Fatalf("runs of %s: %v %v", id, runs, err)
		}
		evs, err := st.Events(runs[0].RunID, 0)
		if err != nil {
			t.Fatal(err)
		}
		switch count(evs, history.CancelRequested) {
		case 0:
			none = append(none, id)
		case 1:
		default:
			twice = append(twice, id)
		}
		if runs[0].Status != history.StatusCancelled {
			open = append(open, id+" "+runs[0].Status)
		}
	}
	fmt.Printf("RELIABILITY suite=batch runs=%d kills=%d done=%d failed=%d skipped=%d cancelled_twice=%d never=%d seed=%d\n",
		n, kills, bt.Done, bt.Failed, bt.Skipped, len(twice), len(none), seed)
	if bt.Status != "completed" || bt.Done != n || bt.Failed != 0 || bt.Skipped != 0 || bt.Next != n {
		t.Fatalf("batch %+v, want completed with %d done", bt, n)
	}
	if len(twice) > 0 || len(none) > 0 || len(open) > 0 {
		t.Fatalf("cancel requested twice: %v; never: %v; not cancelled: %v (seed %d)", twice, none, open, seed)
	}
	if kills == 0 {
		t.Fatalf("the batch completed before the first kill: the test crashed nothing (seed %d)", seed)
	}
}

func batchGet(t *testing.T, api *http.Client) batchState {
	t.Helper()
	code, out := batchCall(t, api, "GET", "/v1/batches/bulk", "")
	var bt batchState
	if code != http.StatusOK || json.Unmarshal([]byte(out), &bt) != nil {
		t.Fatalf("get batch: %d %s", code, out)
	}
	return bt
}

func batchCall(t *testing.T, api *http.Client, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://wend"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := api.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
