package app

import (
	"context"
	"fmt"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/schedule/runner"
	"github.com/wendflow/wend/server/metrics"
	"github.com/wendflow/wend/spec"
)

// ScheduleEntries reads the schedules declared in the registered workflow files. The files
// passed validation in LoadWorkflows; each is read once here, and every fire's run records
// that text (restart serve to change a schedule or its workflow).
func ScheduleEntries(workflows []api.Workflow) ([]runner.Entry, error) {
	var out []runner.Entry
	for _, w := range workflows {
		src, err := spec.ReadWorkflowFile(w.File)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", w.File, err)
		}
		wf, ds := (&spec.Loader{}).Load(w.File, src)
		if ds.HasErrors() {
			return nil, fmt.Errorf("%s is invalid:\n%s", w.File, ds.Error())
		}
		for _, s := range wf.Schedules {
			out = append(out, runner.Entry{Workflow: wf.Name, File: w.File, Source: src, Schedule: s})
		}
	}
	return out, nil
}

// StartSchedules makes the schedule runner of wend serve over the schedules the workflows
// declare and starts it; Configure gives it to a server, Stop stops it before the engine. It
// returns how many schedules run.
func (a *App) StartSchedules(workflows []api.Workflow) (int, error) {
	entries, err := ScheduleEntries(workflows)
	if err != nil {
		return 0, err
	}
	a.schedMetrics = metrics.NewScheduleMetrics()
	rn, err := runner.New(runner.Options{Store: a.Store, Runs: a.Store, Engine: a.Engine, Entries: entries,
		Logf: a.logf, Observe: a.schedMetrics.Observe})
	if err != nil {
		return 0, err
	}
	a.Schedules = rn
	a.schedMetrics.SetSource(rn.List)
	a.Meter.SetSchedules(a.schedMetrics)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rn.Run(ctx)
	}()
	a.stopSchedules = func() {
		cancel()
		<-done
	}
	return len(entries), nil
}
