package batch

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
)

// Limits where a batch's input enters, beside the wire's (api.MaxBatchRuns and the rest).
const (
	// maxReason caps a batch's reason, recorded in each run it cancels or terminates.
	maxReason = 4096
	// maxFailures caps the failures a batch keeps with their reasons; the count goes on.
	maxFailures = 100
)

// bad is a request refused: a 400 naming the field and what to write.
func bad(format string, args ...any) error {
	return api.NewError(api.CodeBadRequest, "batch: "+fmt.Sprintf(format, args...))
}

// checkRequest refuses a request the batch could not carry out, naming the field and what to
// write.
func checkRequest(r *api.BatchRequest) error {
	switch r.Operation {
	case api.BatchOpCancel, api.BatchOpTerminate, api.BatchOpSignal, api.BatchOpRetry, api.BatchOpPurge, api.BatchOpMigrate:
	case "":
		return bad("no operation given (want cancel, terminate, signal, retry, purge or migrate)")
	default:
		return bad("unknown operation %q (want cancel, terminate, signal, retry, purge or migrate)", r.Operation)
	}
	if err := engine.CheckID("batch id", r.ID); err != nil {
		return server.AsError(fmt.Errorf("batch: %w", err))
	}
	switch {
	case r.Where == "" && len(r.RunIDs) == 0:
		return bad("give where (a filter) or run_ids")
	case r.Where != "" && len(r.RunIDs) > 0:
		return bad("give where or run_ids, not both")
	case len(r.RunIDs) > api.MaxBatchIDs:
		return bad("%d run ids, at most %d in one batch: use where, or several batches", len(r.RunIDs), api.MaxBatchIDs)
	}
	for i, id := range r.RunIDs {
		if id == "" {
			return bad("run_ids[%d] is empty", i)
		}
		if err := engine.CheckID("run id", id); err != nil {
			return server.AsError(fmt.Errorf("batch: run_ids[%d]: %w", i, err))
		}
	}
	if r.Where != "" {
		if _, err := server.ParseWhere(r.Where); err != nil {
			return bad("where: %v", err)
		}
	}
	if len(r.Reason) > maxReason {
		return bad("the reason is %d bytes, at most %d", len(r.Reason), maxReason)
	}
	if r.RPS < 0 || r.RPS > api.MaxBatchRPS {
		return bad("rps %g is out of range (0 < rps <= %d; leave it out for %d)", r.RPS, api.MaxBatchRPS, api.DefaultBatchRPS)
	}
	if err := checkMigrate(r); err != nil {
		return err
	}
	return checkSignal(r)
}

// checkMigrate refuses a migrate batch without a valid workflow text (each run would fail
// alike) and a migrate field on another operation.
func checkMigrate(r *api.BatchRequest) error {
	if r.Operation != api.BatchOpMigrate {
		if r.Migrate != nil {
			return bad("migrate goes with operation migrate only")
		}
		return nil
	}
	if r.Migrate == nil || r.Migrate.Source == "" {
		return bad("operation migrate needs migrate.source, the workflow text to move the runs to")
	}
	if err := engine.CheckID("name of who asks", r.Migrate.By); err != nil {
		return server.AsError(fmt.Errorf("batch: %w", err))
	}
	if err := engine.CheckWorkflowText(r.Migrate.File, r.Migrate.Source); err != nil {
		return api.NewError(api.CodeBadWorkflow, "batch: migrate: "+err.Error())
	}
	return nil
}

func checkSignal(r *api.BatchRequest) error {
	if r.Operation != api.BatchOpSignal {
		if r.Signal != nil {
			return api.NewError(api.CodeBadRequest, "batch: signal goes with operation signal only")
		}
		return nil
	}
	if r.Signal == nil || r.Signal.Name == "" {
		return api.NewError(api.CodeBadRequest, "batch: operation signal needs signal.name")
	}
	if err := engine.CheckID("signal name", r.Signal.Name); err != nil {
		return server.AsError(fmt.Errorf("batch: %w", err))
	}
	if err := engine.CheckID("signal id", r.Signal.ID); err != nil {
		return server.AsError(fmt.Errorf("batch: %w", err))
	}
	if err := engine.CheckPayload("signal data", r.Signal.Data); err != nil {
		return server.AsError(fmt.Errorf("batch: %w", err))
	}
	if len(r.Signal.Data) > 0 && !json.Valid(r.Signal.Data) {
		return api.NewError(api.CodeBadRequest, "batch: signal.data is not JSON")
	}
	return nil
}

// sameAsk reports whether a resent request asks for what r did (its id aside).
func sameAsk(r, o api.BatchRequest) bool {
	a, _ := json.Marshal(r)
	b, _ := json.Marshal(o)
	return string(a) == string(b)
}

// checkSize refuses a batch of n runs over api.MaxBatchRuns, saying how to split it.
func checkSize(n int, op string) error {
	if n <= api.MaxBatchRuns {
		return nil
	}
	return api.NewError(api.CodeBadRequest, fmt.Sprintf(
		"batch: %d runs to %s, at most %d in one batch: narrow the filter (say, by started < TIME) and send several", n, op, api.MaxBatchRuns))
}

// skip counts a run the batch left alone, and why (finished, gone).
func skip(bt *api.Batch, why string) {
	bt.Skipped++
	if bt.SkippedBy == nil {
		bt.SkippedBy = map[string]int{}
	}
	bt.SkippedBy[why]++
}

// clone copies bt's maps and slices, so a copy handed out shares nothing with the runner's.
func clone(bt api.Batch) api.Batch {
	bt.SkippedBy = maps.Clone(bt.SkippedBy)
	bt.Failures = slices.Clone(bt.Failures)
	return bt
}
