package cli

import (
	"context"
	"fmt"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/schedule/runner"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/metrics"
	"github.com/wendflow/wend/spec"
)

// scheduleEntries reads the schedules declared in the registered workflow files. The files
// passed validation in LoadWorkflows; each is read once here, and every fire's run records
// that text (restart serve to change a schedule or its workflow).
func scheduleEntries(workflows []api.Workflow) ([]runner.Entry, error) {
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

// startSchedules makes the schedule runner of wend serve, gives it to both servers (socket
// and TCP) and starts it; d.close stops it before the engine.
func (d *driver) startSchedules(workflows []api.Workflow) error {
	entries, err := scheduleEntries(workflows)
	if err != nil {
		return err
	}
	st, ok := d.store.(*boltstore.Store)
	if !ok {
		return fmt.Errorf("schedules need the database store")
	}
	d.schedMetrics = metrics.NewScheduleMetrics()
	rn, err := runner.New(runner.Options{Store: st, Runs: st, Engine: d.eng, Entries: entries,
		Logf:    func(format string, args ...any) { fmt.Fprintf(d.e.stderr, format+"\n", args...) },
		Observe: d.schedMetrics.Observe})
	if err != nil {
		return err
	}
	d.sched = rn
	d.schedMetrics.SetSource(rn.List)
	d.meter.SetSchedules(d.schedMetrics)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rn.Run(ctx)
	}()
	d.stopSchedules = func() {
		cancel()
		<-done
	}
	if len(entries) > 0 {
		fmt.Fprintf(d.e.stderr, "wend: %s running\n", plural(len(entries), "schedule"))
	}
	return nil
}

// serveSchedules gives a server (the socket's or TCP's) the schedules, before it listens.
func (d *driver) serveSchedules(s *server.Server) {
	if d.sched != nil {
		s.SetSchedules(d.sched)
	}
}
