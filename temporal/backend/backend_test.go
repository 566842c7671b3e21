package backend

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
	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/schemas"
	"github.com/wendflow/wend/spec"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"
)

var (
	t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Minute)
)

// info is a describe result as the cluster gives it, with the memo a start writes.
func info(status enumspb.WorkflowExecutionStatus, memo map[string]string) *workflowpb.WorkflowExecutionInfo {
	m := &commonpb.Memo{Fields: map[string]*commonpb.Payload{}}
	for k, v := range memo {
		p, err := converter.GetDefaultDataConverter().ToPayload(v)
		if err != nil {
			panic(err)
		}
		m.Fields[k] = p
	}
	i := &workflowpb.WorkflowExecutionInfo{Execution: &commonpb.WorkflowExecution{WorkflowId: "order-1", RunId: "run-1"},
		Type: &commonpb.WorkflowType{Name: "wend.v1"}, Status: status, Memo: m, TaskQueue: "wend",
		StartTime: timestamppb.New(t0)}
	if status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		i.CloseTime = timestamppb.New(t1)
	}
	return i
}

// TestStatusMapping: every Temporal status reads as the wend status and closed reason a
// local run would have; the memo's closed_reason refines a failure.
func TestStatusMapping(t *testing.T) {
	cases := []struct {
		s              enumspb.WorkflowExecutionStatus
		memoReason     string
		status, reason string
	}{
		{enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, "", history.StatusRunning, ""},
		{enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, "", history.StatusCompleted, history.ClosedCompleted},
		{enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, "", history.StatusFailed, history.ClosedFailed},
		{enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, history.ClosedCompensationFailed, history.StatusFailed, history.ClosedCompensationFailed},
		{enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, "", history.StatusCancelled, history.ClosedCancelled},
		{enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, "", history.StatusCancelled, history.ClosedTerminated},
		{enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW, "", history.StatusContinued, history.ClosedContinued},
		{enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, "", history.StatusFailed, history.ClosedTimedOut},
	}
	for _, c := range cases {
		memo := map[string]string{memoName: "order", memoSpecFile: "/w/order.wend.yaml", memoSpecSHA256: "abc"}
		if c.memoReason != "" {
			memo[memoReason] = c.memoReason
		}
		r := runOf(info(c.s, memo))
		if r.Status != c.status || r.ClosedReason != c.reason {
			t.Errorf("%s (memo %q) = %s (%s), want %s (%s)", c.s, c.memoReason, r.Status, r.ClosedReason, c.status, c.reason)
		}
		if r.Name != "order" || r.SpecFile != "/w/order.wend.yaml" || r.SpecSHA256 != "abc" || r.WorkflowID != "order-1" || r.RunID != "run-1" {
			t.Errorf("record %+v does not carry the ids and memo", r)
		}
		if r.Open() != r.ClosedAt.IsZero() {
			t.Errorf("%s: open %v but closed_at %v", c.s, r.Open(), r.ClosedAt)
		}
	}
}

const orderSpec = `wend: v1
name: order
steps:
  - id: wait
    delay: 1h
output: done
`

// opened is the wend history of a run that started and waits on a timer.
func opened(t *testing.T) []history.Event {
	t.Helper()
	w, ds := spec.Load("/w/order.wend.yaml", []byte(orderSpec))
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	st := history.Started{WorkflowID: "order-1", RunID: "run-1", Input: json.RawMessage("null"), SpecFile: "/w/order.wend.yaml",
		SpecSource: orderSpec, SpecSHA256: "abc", ExecutionStarted: t0}
	first := history.Event{Seq: 1, Type: history.WorkflowStarted, Time: t0, Data: history.MustData(st)}
	out, err := interpreter.New(w, st).Apply(first)
	if err != nil {
		t.Fatal(err)
	}
	evs := []history.Event{first}
	for _, ev := range out {
		ev.Seq, ev.Time = uint64(len(evs)+1), t0
		evs = append(evs, ev)
	}
	return evs
}

// TestTerminatedRunGetsItsTerminalEvent: terminate runs no workflow code, so the wend
// history stops mid-run; reading it adds WorkflowTerminated at Temporal's close time, and
// the record, the detail and the export agree with a locally terminated run.
func TestTerminatedRunGetsItsTerminalEvent(t *testing.T) {
	evs := opened(t)
	r, got := withEvents(runOf(info(enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, nil)), evs)
	last := got[len(got)-1]
	if last.Type != history.WorkflowTerminated || last.Seq != uint64(len(evs)+1) || !last.Time.Equal(t1) {
		t.Fatalf("last event %+v, want WorkflowTerminated seq %d at %s", last, len(evs)+1, t1)
	}
	if r.Status != history.StatusCancelled || r.ClosedReason != history.ClosedTerminated || r.LastSeq != last.Seq || r.Name != "order" {
		t.Fatalf("record %+v", r)
	}
	doc := validExport(t, r, got)
	if doc.Workflow.Status != history.StatusCancelled || doc.Workflow.ClosedReason != history.ClosedTerminated || doc.Workflow.Failure == nil {
		t.Fatalf("export workflow %+v", doc.Workflow)
	}
}

// TestWendTerminalEventDecides: when wend closed the run itself, its terminal event sets the
// status and reason (Temporal says only Failed for a wend timeout) and nothing is added.
func TestWendTerminalEventDecides(t *testing.T) {
	evs := opened(t)
	evs = append(evs, history.Event{Seq: uint64(len(evs) + 1), Type: history.WorkflowTimedOut, Time: t1,
		Data: history.MustData(history.Closed{TimeoutKind: "run_timeout", Failure: &history.Failure{Category: history.CategoryTimeout, Message: "late"}})})
	r, got := withEvents(runOf(info(enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, nil)), evs)
	if len(got) != len(evs) || r.Status != history.StatusFailed || r.ClosedReason != history.ClosedTimedOut || !r.ClosedAt.Equal(t1) || !r.StartedAt.Equal(t0) {
		t.Fatalf("record %+v with %d events (had %d)", r, len(got), len(evs))
	}
	// A running run is left as it is.
	r, got = withEvents(runOf(info(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil)), opened(t))
	if !r.Open() || got[len(got)-1].Type.Terminal() {
		t.Fatalf("open run read as %+v", r)
	}
}

// TestExportNamesTheEngine: the export is wend.history-export/v1 with workflow.engine set,
// valid against the published schema.
func TestExportNamesTheEngine(t *testing.T) {
	r, evs := withEvents(runOf(info(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil)), opened(t))
	doc := validExport(t, r, evs)
	if e := doc.Workflow.Engine; e == nil || e.Kind != "temporal" || e.Namespace != "prod" || e.TaskQueue != "wend" {
		t.Fatalf("engine = %+v", doc.Workflow.Engine)
	}
}

func validExport(t *testing.T, r history.Run, evs []history.Event) *export.Document {
	t.Helper()
	doc, err := exportOf(r, evs, "prod", "wend")
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(url string) (io.ReadCloser, error) { return nil, errors.New("no remote schemas: " + url) }
	if err := c.AddResource(schemas.HistoryExportID, bytes.NewReader(schemas.HistoryExport)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schemas.HistoryExportID)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(doc)
	var v any
	_ = json.Unmarshal(js, &v)
	if err := s.Validate(v); err != nil {
		t.Fatalf("export does not match the schema: %v", err)
	}
	return doc
}

// TestBundleClosure: the start input carries every run_workflow file the workflow reaches,
// children of children once each, keyed as the interpreter names them; a missing one is an
// error naming the step and file.
func TestBundleClosure(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	leaf := "wend: v1\nname: leaf\nsteps: [{delay: 1s}]\n"
	write("sub/mid.wend.yaml", "wend: v1\nname: mid\nsteps:\n  - run_workflow: ../leaf.wend.yaml\n  - run_workflow: ../leaf.wend.yaml\n")
	write("leaf.wend.yaml", leaf)
	parent := "wend: v1\nname: top\nsteps:\n  - run_workflow: ./sub/mid.wend.yaml\n  - run_workflow: leaf.wend.yaml\n"
	top := filepath.Join(dir, "top.wend.yaml")
	reads := 0
	read := func(p string) ([]byte, error) { reads++; return os.ReadFile(p) }
	specs, err := Bundle(top, []byte(parent), read)
	if err != nil {
		t.Fatal(err)
	}
	mid, lf := spec.ChildPath(top, "./sub/mid.wend.yaml"), spec.ChildPath(spec.ChildPath(top, "./sub/mid.wend.yaml"), "../leaf.wend.yaml")
	if len(specs) != 2 || specs[lf] != leaf || !strings.Contains(specs[mid], "name: mid") || reads != 2 {
		t.Fatalf("bundle %v (%d reads), want mid and leaf once each", specs, reads)
	}
	if specs, err := Bundle(top, []byte("wend: v1\nname: x\nsteps: [{delay: 1s}]\n"), read); err != nil || specs != nil {
		t.Fatalf("no children: %v, %v", specs, err)
	}
	_, err = Bundle(top, []byte("wend: v1\nname: x\nsteps:\n  - run_workflow: gone.wend.yaml\n"), read)
	if err == nil || !strings.Contains(err.Error(), "run_workflow gone.wend.yaml (at steps[0]") {
		t.Fatalf("missing child: %v", err)
	}
}

// TestListFilters: the cluster gets what it filters exactly; the rest is filtered and
// ordered here as the control API does.
func TestListFilters(t *testing.T) {
	if got := listQuery(api.ListQuery{WorkflowID: "order-1", Status: history.StatusRunning}); got != "WorkflowType = 'wend.v1' AND WorkflowId = 'order-1' AND ExecutionStatus = 'Running'" {
		t.Fatalf("query %q", got)
	}
	if got := listQuery(api.ListQuery{WorkflowID: "it's", Status: history.StatusFailed}); got != "WorkflowType = 'wend.v1'" {
		t.Fatalf("unquotable id and a client-side status: query %q", got)
	}
	runs := []history.Run{
		{WorkflowID: "a", RunID: "1", Status: history.StatusFailed, StartedAt: t0},
		{WorkflowID: "b", RunID: "2", Status: history.StatusCompleted, StartedAt: t1},
		{WorkflowID: "c", RunID: "3", Status: history.StatusFailed, StartedAt: t1},
	}
	got := filterRuns(runs, api.ListQuery{Status: history.StatusFailed}, 0)
	if len(got) != 2 || got[0].RunID != "3" || got[1].RunID != "1" {
		t.Fatalf("failed runs newest first: %+v", got)
	}
	if got := filterRuns(runs, api.ListQuery{}, 1); len(got) != 1 || got[0].RunID != "3" {
		t.Fatalf("limit 1: %+v", got)
	}
	if got := filterRuns(nil, api.ListQuery{}, 0); got == nil {
		t.Fatal("no runs must list as [], not null")
	}
}

// TestWaitPollDeadlineIsNotAFailure: a server that ends the long poll with DeadlineExceeded
// before the client's own deadline leaves an open run open, not a cluster error (wend run
// --temporal exited 1 on a live run when a killed worker slowed the cluster).
func TestWaitPollDeadlineIsNotAFailure(t *testing.T) {
	b, f := newFake(info(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil))
	for _, err := range []error{serviceerror.NewDeadlineExceeded("poll expired"), context.DeadlineExceeded} {
		f.getErr = err
		out, werr := b.Wait(context.Background(), "order-1", time.Hour)
		if werr != nil || out.Closed {
			t.Fatalf("%v: Wait = %+v, %v; want an open run and no error", err, out, werr)
		}
	}
	f.getErr = serviceerror.NewUnavailable("cluster down")
	if _, werr := b.Wait(context.Background(), "order-1", time.Hour); werr == nil {
		t.Fatal("an unavailable cluster must be an error")
	}
}
