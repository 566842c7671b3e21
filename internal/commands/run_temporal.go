package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/spec"
)

// runOnTemporal is `wend run --temporal`: it checks what would run differently on a cluster
// (as 'wend validate --target temporal' does), starts the run there (idempotent by --id)
// and follows it as a local run is followed, with the same output and exit codes.
func runOnTemporal(e *env, file string, req engine.StartRequest, detach bool) int {
	w, _ := spec.Load(file, []byte(req.Source)) // valid: runRun checked it
	ds := spec.CheckTarget(w, spec.TargetTemporal)
	for _, d := range ds {
		fmt.Fprintln(e.stderr, d.String())
	}
	if ds.HasErrors() {
		fmt.Fprintf(e.stderr, "wend run: %s cannot run on Temporal as it is (see above)\n", file)
		return exitFailed
	}
	b, err := openBackend(e, "", steerRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend run: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	st, err := b.Start(context.Background(), req)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend run: %v\n", err)
		noInputHint(e, err, req.Input)
		var se *api.Error
		if errors.Is(err, engine.ErrInvalidInput) || (errors.As(err, &se) && (se.Code == api.CodeInternal || se.Code == api.CodeStopped)) {
			return exitUsage
		}
		return exitFailed
	}
	verb := "started"
	if !st.Started {
		verb = "already exists; following it"
	}
	fmt.Fprintf(e.stderr, "wend: run %s of %s %s on Temporal %s (namespace %s, task queue %s)\n",
		st.Run.RunID, st.Run.WorkflowID, verb, e.temporal.Address, e.temporal.Namespace, e.temporal.TaskQueue)
	if detach {
		fmt.Fprintf(e.stdout, "%s %s\n", st.Run.WorkflowID, st.Run.RunID)
		return exitOK
	}
	return followElsewhere(e, b, st.Run.WorkflowID, "on Temporal",
		"it goes on when a worker of task queue "+e.temporal.TaskQueue+" drives it (wend worker --temporal ADDR)")
}
