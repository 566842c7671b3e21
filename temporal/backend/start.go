package backend

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
	"github.com/wendflow/wend/temporal/wire"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
)

// Start validates the workflow and its input as a local start does, bundles the text of
// every run_workflow file it reaches, and starts the run on the task queue. A given id is
// idempotent as locally: when the id has a run (open or closed), that run is returned and
// nothing starts.
func (b *Backend) Start(ctx context.Context, req api.StartRequest) (api.Started, error) {
	if req.Workflow != "" {
		return api.Started{}, api.NewError(api.CodeUnsupported, "start a registered workflow by name: not available on Temporal; give the file")
	}
	if req.SpecFile == "" || req.Source == "" {
		return api.Started{}, api.NewError(api.CodeBadRequest, "start: spec_file and source are required")
	}
	w, ds := spec.Load(req.SpecFile, []byte(req.Source))
	if ds.HasErrors() {
		return api.Started{}, api.NewError(api.CodeBadWorkflow, fmt.Sprintf("start %s: the workflow is invalid:\n%s", req.SpecFile, ds.Error()))
	}
	input, err := checkInput(w, req.Input)
	if err != nil {
		return api.Started{}, err
	}
	if err := checkTraceParent(req.TraceParent); err != nil {
		return api.Started{}, err
	}
	specs, err := Bundle(req.SpecFile, []byte(req.Source), spec.ReadWorkflowFile)
	if err != nil {
		return api.Started{}, api.NewError(api.CodeBadWorkflow, fmt.Sprintf("start %s: %v", req.SpecFile, err))
	}
	if req.WorkflowID != "" {
		if info, err := b.resolveWorkflow(ctx, req.WorkflowID); err == nil {
			return api.Started{Run: runOf(info)}, nil
		} else if !errors.Is(err, history.ErrNotFound) {
			return api.Started{}, err
		}
	} else {
		req.WorkflowID = w.Name + "-" + randomHex(4)
	}
	sum := sha256.Sum256([]byte(req.Source))
	in := wire.StartInput{Started: history.Started{WorkflowID: req.WorkflowID, Input: input, SpecFile: req.SpecFile,
		SpecSource: req.Source, SpecSHA256: hex.EncodeToString(sum[:]), Rules: history.RulesCurrent, TraceParent: req.TraceParent}, Specs: specs,
		SearchAttributes: b.searchAttributes(ctx, w, specs)}
	run, err := b.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: req.WorkflowID, TaskQueue: b.tq,
		// A second start of the same id (a retried command) joins the run instead of failing.
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		// As locally, an id names one workflow for good: a closed run is not started again.
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		Memo:                  map[string]any{memoName: w.Name, memoSpecFile: req.SpecFile, memoSpecSHA256: in.Started.SpecSHA256},
	}, wire.WorkflowType, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		info, rerr := b.resolveWorkflow(ctx, req.WorkflowID)
		if rerr != nil {
			return api.Started{}, rerr
		}
		return api.Started{Run: runOf(info)}, nil
	}
	if err != nil {
		return api.Started{}, clusterError(req.WorkflowID, err)
	}
	d, err := b.c.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
	if err != nil {
		return api.Started{}, clusterError(req.WorkflowID, err)
	}
	return api.Started{Run: runOf(d.GetWorkflowExecutionInfo()), Started: true}, nil
}

// resolveWorkflow finds the newest run of a workflow id only (never a run id).
func (b *Backend) resolveWorkflow(ctx context.Context, id string) (*workflowpb.WorkflowExecutionInfo, error) {
	d, err := b.c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return nil, clusterError(id, err)
	}
	return wendOnly(id, d.GetWorkflowExecutionInfo())
}

// checkInput is the local engine's input check: JSON (null when none) that the workflow's
// input schema accepts.
func checkInput(w *spec.Workflow, raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		raw = json.RawMessage("null")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, api.NewError(api.CodeInvalid, fmt.Sprintf("invalid input: not JSON: %v", err))
	}
	if w.InputSchema != nil {
		if err := spec.ValidateInput(w.InputSchema, v); err != nil {
			return nil, api.NewError(api.CodeInvalid, fmt.Sprintf("invalid input: %v", err))
		}
	}
	return raw, nil
}

// Bundle reads the text of every run_workflow file a workflow reaches, children of children
// included, keyed by the path the interpreter names each by (spec.ChildPath from its
// parent): the driver starts children from these texts, so editing a file never changes an
// open run. A file that cannot be read or does not load is an error naming it.
func Bundle(file string, source []byte, read func(string) ([]byte, error)) (map[string]string, error) {
	specs := map[string]string{}
	var walk func(file string, src []byte) error
	walk = func(file string, src []byte) error {
		w, ds := (&spec.Loader{SkipChildren: true}).Load(file, src)
		if w == nil || ds.HasErrors() {
			return fmt.Errorf("workflow %s is invalid:\n%s", file, ds.Error())
		}
		var err error
		w.Walk(func(s *spec.Step) {
			if err != nil || s.RunWorkflow == "" {
				return
			}
			path := spec.ChildPath(file, s.RunWorkflow)
			if _, done := specs[path]; done {
				return
			}
			b, rerr := read(path)
			if rerr != nil {
				err = fmt.Errorf("run_workflow %s (at %s of %s): %w", s.RunWorkflow, s.Path, file, rerr)
				return
			}
			specs[path] = string(b)
			err = walk(path, b)
		})
		return err
	}
	if err := walk(file, source); err != nil {
		return nil, err
	}
	if len(specs) == 0 {
		return nil, nil
	}
	return specs, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
