package commands

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/wendflow/wend/app"
	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/schedule"
	"github.com/wendflow/wend/schedule/runner"
	"github.com/wendflow/wend/server"
)

// scheduleOps is what `wend schedule` does (server.ScheduleOps), over the serve holding the
// database (its socket) or, when none does, over the database itself: state changes are
// recorded there, and fires a trigger or backfill records start when wend serve next runs.
type scheduleOps = server.ScheduleOps

// ScheduleOps and ScheduleSync are server's: a Backend that also keeps schedules (Temporal's)
// offers them with a method ScheduleOps() ScheduleOps, and `sync` with a method Sync.
type (
	ScheduleOps  = server.ScheduleOps
	ScheduleSync = server.ScheduleSync
)

// scheduleSyncer makes a cluster's schedules what the entries declare (prune: delete wend's
// schedules no entry declares).
type scheduleSyncer interface {
	Sync(entries []runner.Entry, prune bool) (ScheduleSync, error)
}

// clusterSchedules opens the schedule operations of the cluster the command line names.
func clusterSchedules(e *env) (scheduleOps, error) {
	b, err := e.openTemporal()
	if err != nil {
		return nil, err
	}
	sb, ok := b.(interface{ ScheduleOps() ScheduleOps })
	if !ok {
		b.Close()
		return nil, fmt.Errorf("this build's Temporal backend keeps no schedules")
	}
	return closeBoth{sb.ScheduleOps(), b}, nil
}

// closeBoth closes the backend the schedule operations came from with them.
type closeBoth struct {
	scheduleOps
	b Backend
}

func (c closeBoth) Close() error {
	c.scheduleOps.Close()
	return c.b.Close()
}

// openScheduleOps finds the holder's socket, else opens the database.
func openScheduleOps(path string) (scheduleOps, error) {
	if c := liveHolder(path); c != nil {
		return remoteSchedules{c}, nil
	}
	st, err := openStore(path)
	var inUse *boltstore.InUseError
	if errors.As(err, &inUse) {
		c, cerr := dialControl(path, inUse.PID)
		if cerr != nil {
			return nil, fmt.Errorf("%w, and its control socket does not answer (%v)", err, cerr)
		}
		return remoteSchedules{c}, nil
	}
	if err != nil {
		return nil, err
	}
	rn, err := runner.New(runner.Options{Store: st, Runs: st})
	if err != nil {
		st.Close()
		return nil, err
	}
	return localSchedules{rn, st}, nil
}

type localSchedules struct {
	*runner.Runner
	st *boltstore.Store
}

func (l localSchedules) List() ([]runner.View, error) { return l.Runner.List(), nil }
func (l localSchedules) Close() error                 { return l.st.Close() }

type remoteSchedules struct{ c *client }

func schedulePath(id, suffix string) string { return "/v1/schedules/" + url.PathEscape(id) + suffix }

func (r remoteSchedules) Close() error { return r.c.Close() }

func (r remoteSchedules) List() ([]runner.View, error) {
	var out struct{ Schedules []runner.View }
	err := r.c.call(context.Background(), "GET", "/v1/schedules", nil, &out)
	return out.Schedules, err
}

func (r remoteSchedules) Show(id string) (runner.View, error) {
	var out struct{ Schedule runner.View }
	err := r.c.call(context.Background(), "GET", schedulePath(id, ""), nil, &out)
	return out.Schedule, err
}

func (r remoteSchedules) note(id, verb, note string) (runner.View, error) {
	var out struct{ Schedule runner.View }
	err := r.c.call(context.Background(), "POST", schedulePath(id, "/"+verb), server.ScheduleNoteRequest{Note: note}, &out)
	return out.Schedule, err
}

func (r remoteSchedules) Pause(id, note string) (runner.View, error) {
	return r.note(id, "pause", note)
}
func (r remoteSchedules) Resume(id, note string) (runner.View, error) {
	return r.note(id, "resume", note)
}

func (r remoteSchedules) Trigger(id string, o schedule.Overlap) (schedule.Fire, error) {
	var out struct{ Fire schedule.Fire }
	err := r.c.call(context.Background(), "POST", schedulePath(id, "/trigger"), server.TriggerRequest{Overlap: string(o)}, &out)
	return out.Fire, err
}

func (r remoteSchedules) Backfill(id string, from, to time.Time, o schedule.Overlap) (int, error) {
	var out struct{ Fires int }
	err := r.c.call(context.Background(), "POST", schedulePath(id, "/backfill"),
		server.BackfillRequest{From: from, To: to, Overlap: string(o)}, &out)
	return out.Fires, err
}

func (r remoteSchedules) Delete(id string) error {
	return r.c.call(context.Background(), "DELETE", schedulePath(id, ""), nil, nil)
}

// syncSchedules is `wend schedule sync DIR... --temporal`: the schedules the workflow files
// below the folders declare, made so on the cluster.
func syncSchedules(e *env, ops scheduleOps, dirs []string, prune bool) int {
	cb, _ := ops.(closeBoth)
	syncer, ok := cb.scheduleOps.(scheduleSyncer)
	if !ok {
		fmt.Fprintf(e.stderr, "wend schedule: this build's Temporal backend cannot sync schedules\n")
		return exitUsage
	}
	workflows, err := server.LoadWorkflows(dirs...)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend schedule: sync: %v\n", err)
		return exitUsage
	}
	entries, err := app.ScheduleEntries(workflows)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend schedule: sync: %v\n", err)
		return exitUsage
	}
	rep, err := syncer.Sync(entries, prune)
	for _, l := range []struct {
		what string
		ids  []string
	}{{"created", rep.Created}, {"updated", rep.Updated}, {"unchanged", rep.Unchanged}, {"deleted (no file declares it)", rep.Deleted},
		{"not declared by these files (still firing; --prune deletes it)", rep.Undeclared}} {
		for _, id := range l.ids {
			fmt.Fprintf(e.stdout, "schedule %s %s\n", id, l.what)
		}
	}
	if err != nil {
		return scheduleError(e, err)
	}
	if len(entries) == 0 {
		fmt.Fprintf(e.stdout, "no schedules declared below %s\n", strings.Join(dirs, ", "))
	}
	return exitOK
}
