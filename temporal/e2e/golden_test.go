//go:build unix

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/temporal/driver"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"
)

// golden names the examples whose Temporal histories are recorded (with -update) in
// testdata/golden: together they cover activities, retries with backoff timers, for_each,
// parallel with a delay, signals (one resent), child workflows, wait_for_workflow,
// compensation and a workflow timeout.
var golden = []string{
	"hello.wend.yaml",
	"approval.wend.yaml",
	"order.wend.yaml",
	"nightly-report.wend.yaml",
	"failures/retry-then-fail.wend.yaml",
	"failures/saga.wend.yaml",
	"failures/workflow-timeout.wend.yaml",
}

func goldenPath(file string) string {
	return filepath.Join("testdata", "golden", strings.NewReplacer("/", "-", ".wend.yaml", ".json").Replace(file))
}

// execution is the recorded run's ids, kept beside its history (NAME.execution.json): the
// driver derives child workflow and activity ids from them, so a replay must run under the
// same ones.
type execution struct {
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
}

func executionPath(file string) string {
	return strings.TrimSuffix(goldenPath(file), ".json") + ".execution.json"
}

// recordGolden writes workflow id's Temporal history as JSON (the format of `temporal
// workflow show --output json`, which the SDK's replayer reads).
func recordGolden(t *testing.T, id, file string) {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: env.addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := json.MarshalIndent(execution{WorkflowID: id, RunID: d.WorkflowExecutionInfo.Execution.RunId}, "", " ")
	it := c.GetWorkflowHistory(context.Background(), id, d.WorkflowExecutionInfo.Execution.RunId, false, 0)
	var h historypb.History
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, e)
	}
	b, err := protojson.MarshalOptions{Indent: " "}.Marshal(&h)
	if err != nil {
		t.Fatal(err)
	}
	p := goldenPath(file)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(executionPath(file), append(ids, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s (%d events)", p, len(h.Events))
}

// TestGoldenReplays replays every recorded history through today's driver: a change to the
// interpreter or the driver that would decide differently for a run already open on a
// cluster fails here (nondeterminism) instead of blocking that run in production.
// `go test -run TestParityExamples -update` records them again (only when the change is
// meant to break open runs, which then needs a new workflow type).
func TestGoldenReplays(t *testing.T) {
	for _, f := range golden {
		t.Run(f, func(t *testing.T) {
			p := goldenPath(f)
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatalf("no recorded history (record with go test -run TestParityExamples -update): %v", err)
			}
			h, err := client.HistoryFromJSON(bytes.NewReader(raw), client.HistoryJSONOptions{})
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			var ex execution
			b, err := os.ReadFile(executionPath(f))
			if err == nil {
				err = json.Unmarshal(b, &ex)
			}
			if err != nil || ex.WorkflowID == "" {
				t.Fatalf("%s: the recorded run's ids: %v", executionPath(f), err)
			}
			r := worker.NewWorkflowReplayer()
			driver.Register(r)
			err = r.ReplayWorkflowHistoryWithOptions(nil, h, worker.ReplayWorkflowHistoryOptions{
				OriginalExecution: workflow.Execution{ID: ex.WorkflowID, RunID: ex.RunID}})
			if err != nil {
				t.Fatalf("replay %s: %v", p, err)
			}
		})
	}
}
