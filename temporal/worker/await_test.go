package worker

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/wire"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

// awaitClient answers GetWorkflow(...).Get with a fixed outcome and Describe with run "r-last".
type awaitClient struct {
	client.Client
	out json.RawMessage
	err error
}

func (c awaitClient) GetWorkflow(_ context.Context, id, _ string) client.WorkflowRun {
	return awaitRun{c}
}

func (c awaitClient) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
		Execution: &commonpb.WorkflowExecution{WorkflowId: "other", RunId: "r-last"}}}, nil
}

type awaitRun struct{ c awaitClient }

func (r awaitRun) GetID() string                  { return "other" }
func (r awaitRun) GetRunID() string               { return "r-first" }
func (r awaitRun) GetFirstExecutionRunID() string { return "r-first" }
func (r awaitRun) Get(_ context.Context, v any) error {
	if r.c.err != nil {
		return r.c.err
	}
	*(v.(*json.RawMessage)) = r.c.out
	return nil
}
func (r awaitRun) GetWithOptions(ctx context.Context, v any, _ client.WorkflowRunGetOptions) error {
	return r.Get(ctx, v)
}

// TestAwaitOutcomes: wait_for_workflow gets the awaited run's wend status and terminal
// payload (the last run of a continue-as-new chain); a workflow that does not exist fails
// the wait for good instead of being retried forever.
func TestAwaitOutcomes(t *testing.T) {
	failure := history.Closed{Failure: &history.Failure{Category: history.CategoryActivity, Message: "bank down"}}
	cases := []struct {
		name   string
		c      awaitClient
		status string
		output string
		errTyp string
	}{
		{"completed", awaitClient{out: json.RawMessage(`{"v":1}`)}, history.StatusCompleted, `{"v":1}`, ""},
		{"failed", awaitClient{err: temporal.NewNonRetryableApplicationError("bank down", string(history.WorkflowFailed), nil, failure)}, history.StatusFailed, "", ""},
		{"missing", awaitClient{err: serviceerror.NewNotFound("no such workflow")}, "", "", "WorkflowNotFound"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			a := &Activities{Client: c.c}
			env.RegisterActivityWithOptions(a.Await, activity.RegisterOptions{Name: wire.ActivityAwait})
			v, err := env.ExecuteActivity(wire.ActivityAwait, wire.AwaitInput{WorkflowID: "other"})
			if c.errTyp != "" {
				var ae *temporal.ApplicationError
				if !errors.As(err, &ae) || ae.Type() != c.errTyp || !ae.NonRetryable() {
					t.Fatalf("err = %v, want a non-retryable %s", err, c.errTyp)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var res wire.AwaitResult
			if err := v.Get(&res); err != nil {
				t.Fatal(err)
			}
			if res.RunID != "r-last" || res.Status != c.status || string(res.Closed.Output) != c.output {
				t.Fatalf("result %+v", res)
			}
			if c.status == history.StatusFailed && (res.Closed.Failure == nil || res.Closed.Failure.Message != "bank down") {
				t.Fatalf("failure %+v", res.Closed.Failure)
			}
		})
	}
}
