package backend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/schedule"
	"github.com/wendflow/wend/schedule/runner"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/spec"
	"github.com/wendflow/wend/temporal/wire"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// memoSchedule is the memo field of a Temporal Schedule that wend made: the runner.Record of its
// declaration (no state) as JSON, which says what list and show print and marks the schedule as
// wend's, so a sync never touches a schedule someone else made.
const memoSchedule = "wend_schedule"

// Schedules are wend's schedules on a cluster: each declared schedule is a Temporal Schedule
// of the same id, whose action starts wend.v1 with the workflow's text and the schedule's input.
// Temporal names a fire's workflow ID-TIME (TIME the nominal time to the second, RFC 3339,
// UTC), as the local runner does, so a calendar fire's run has the same workflow id on both.
type Schedules struct{ b *Backend }

// ScheduleOps returns the schedule operations on b's cluster (wend schedule --temporal).
func (b *Backend) ScheduleOps() server.ScheduleOps { return &Schedules{b} }

// Close leaves the backend open: its owner closes it.
func (s *Schedules) Close() error { return nil }

// overlaps maps wend's overlap policies to Temporal's (the same six, by the same names).
var overlaps = map[schedule.Overlap]enumspb.ScheduleOverlapPolicy{
	schedule.Skip:           enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
	schedule.BufferOne:      enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE,
	schedule.BufferAll:      enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ALL,
	schedule.AllowAll:       enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL,
	schedule.CancelOther:    enumspb.SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER,
	schedule.TerminateOther: enumspb.SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER,
}

// Sync makes the cluster's schedules what the entries declare: a missing one is created, one
// whose declaration or workflow text changed is updated (its pause state, an operator's, is
// kept), and a schedule wend made that no entry declares is reported, or deleted with prune.
// A schedule of the same id that wend did not make is refused, never changed.
func (s *Schedules) Sync(entries []runner.Entry, prune bool) (server.ScheduleSync, error) {
	ctx, cancel := s.b.ctx()
	defer cancel()
	var rep server.ScheduleSync
	declared := map[string]bool{}
	for _, e := range entries {
		declared[e.Schedule.ID] = true
		opts, err := s.options(ctx, e)
		if err != nil {
			return rep, err
		}
		h := s.b.c.ScheduleClient().GetHandle(ctx, e.Schedule.ID)
		d, err := h.Describe(ctx)
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			if _, err := s.b.c.ScheduleClient().Create(ctx, opts); err != nil {
				return rep, clusterError(e.Schedule.ID, err)
			}
			rep.Created = append(rep.Created, e.Schedule.ID)
			continue
		}
		if err != nil {
			return rep, clusterError(e.Schedule.ID, err)
		}
		old := memoString(d.Memo, memoSchedule)
		if old == "" {
			return rep, api.NewError(api.CodeIDTaken, fmt.Sprintf(
				"schedule %s (%s): a Temporal Schedule of that id exists that wend did not make; rename the schedule or delete that one", e.Schedule.ID, e.File))
		}
		if old == opts.Memo[memoSchedule] {
			rep.Unchanged = append(rep.Unchanged, e.Schedule.ID)
			continue
		}
		// The memo is set at create only: a changed declaration is a new schedule, so replace it
		// and carry the operator's pause over.
		paused, note := d.Schedule.State.Paused, d.Schedule.State.Note
		if err := h.Delete(ctx); err != nil {
			return rep, clusterError(e.Schedule.ID, err)
		}
		opts.Paused, opts.Note = paused, note
		if _, err := s.b.c.ScheduleClient().Create(ctx, opts); err != nil {
			return rep, clusterError(e.Schedule.ID, err)
		}
		rep.Updated = append(rep.Updated, e.Schedule.ID)
	}
	all, err := s.list(ctx)
	if err != nil {
		return rep, err
	}
	for _, v := range all {
		if declared[v.ID] {
			continue
		}
		if !prune {
			rep.Undeclared = append(rep.Undeclared, v.ID)
			continue
		}
		if err := s.b.c.ScheduleClient().GetHandle(ctx, v.ID).Delete(ctx); err != nil {
			return rep, clusterError(v.ID, err)
		}
		rep.Deleted = append(rep.Deleted, v.ID)
	}
	return rep, nil
}

// options is the Temporal Schedule an entry declares.
func (s *Schedules) options(ctx context.Context, e runner.Entry) (client.ScheduleOptions, error) {
	sc := e.Schedule
	w, ds := spec.Load(e.File, e.Source)
	if ds.HasErrors() {
		return client.ScheduleOptions{}, api.NewError(api.CodeBadWorkflow, fmt.Sprintf("%s is invalid:\n%s", e.File, ds.Error()))
	}
	input, err := checkInput(w, sc.Input)
	if err != nil {
		return client.ScheduleOptions{}, fmt.Errorf("schedule %s: %w", sc.ID, err)
	}
	specs, err := Bundle(e.File, e.Source, spec.ReadWorkflowFile)
	if err != nil {
		return client.ScheduleOptions{}, api.NewError(api.CodeBadWorkflow, fmt.Sprintf("schedule %s: %v", sc.ID, err))
	}
	sum := sha256.Sum256(e.Source)
	sha := hex.EncodeToString(sum[:])
	// The workflow id is left out: the driver takes the one Temporal gives each fire.
	in := wire.StartInput{Started: history.Started{Input: input, SpecFile: e.File, SpecSource: string(e.Source),
		SpecSHA256: sha, Rules: history.RulesCurrent}, Specs: specs,
		// The attributes the namespace has when the schedule is made: a schedule made before
		// they were registered starts runs that keep none until its declaration changes.
		SearchAttributes: s.b.searchAttributes(ctx, w, specs)}
	rec := runner.Record{ID: sc.ID, Workflow: e.Workflow, File: e.File, Cron: sc.Cron, Timezone: sc.Timezone,
		Overlap: string(sc.Overlap), Paused: sc.Paused, Input: sc.Input}
	ss := client.ScheduleSpec{TimeZoneName: sc.Timezone}
	if sc.Cron != "" {
		ss.CronExpressions = []string{sc.Cron}
	} else {
		ss.Intervals = []client.ScheduleIntervalSpec{{Every: sc.Every.D}}
		rec.Every = sc.Every.D.String()
	}
	if sc.Jitter.IsSet() {
		ss.Jitter, rec.Jitter = sc.Jitter.D, sc.Jitter.D.String()
	}
	var catchup time.Duration
	if sc.CatchupWindow.IsSet() {
		catchup, rec.CatchupWindow = sc.CatchupWindow.D, sc.CatchupWindow.D.String()
	}
	// The record names the text too, so an edit of the workflow file updates the schedule.
	declaration, _ := json.Marshal(struct {
		runner.Record
		SpecSHA256 string `json:"spec_sha256"`
	}{rec, sha})
	return client.ScheduleOptions{
		ID:   sc.ID,
		Spec: ss,
		Action: &client.ScheduleWorkflowAction{ID: sc.ID, Workflow: wire.WorkflowType, Args: []any{in}, TaskQueue: s.b.tq,
			Memo: map[string]any{memoName: w.Name, memoSpecFile: e.File, memoSpecSHA256: sha}},
		Overlap:       overlaps[sc.Overlap],
		CatchupWindow: catchup,
		Paused:        sc.Paused,
		Memo:          map[string]any{memoSchedule: string(declaration)},
	}, nil
}

// List returns wend's schedules on the cluster, by id.
func (s *Schedules) List() ([]runner.View, error) {
	ctx, cancel := s.b.ctx()
	defer cancel()
	return s.list(ctx)
}

func (s *Schedules) list(ctx context.Context) ([]runner.View, error) {
	it, err := s.b.c.ScheduleClient().List(ctx, client.ScheduleListOptions{PageSize: 1000})
	if err != nil {
		return nil, clusterError("", err)
	}
	out := []runner.View{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, clusterError("", err)
		}
		rec, ok := declarationOf(e.Memo)
		if !ok {
			continue // not wend's
		}
		v := runner.View{Record: rec, Declared: true, Paused: e.Paused}
		v.State.Note = e.Note
		if len(e.NextActionTimes) > 0 && !e.Paused {
			v.NextFire = e.NextActionTimes[0].UTC()
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// declarationOf reads the record wend put in a schedule's memo; ok is false for a schedule
// wend did not make.
func declarationOf(m *commonpb.Memo) (runner.Record, bool) {
	raw := memoString(m, memoSchedule)
	var rec runner.Record
	if raw == "" || json.Unmarshal([]byte(raw), &rec) != nil {
		return runner.Record{}, false
	}
	return rec, true
}

// Show returns one schedule with its counts and recent fires.
func (s *Schedules) Show(id string) (runner.View, error) {
	ctx, cancel := s.b.ctx()
	defer cancel()
	return s.show(ctx, id)
}

func (s *Schedules) show(ctx context.Context, id string) (runner.View, error) {
	d, err := s.b.c.ScheduleClient().GetHandle(ctx, id).Describe(ctx)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return runner.View{}, fmt.Errorf("schedule %q: %w on Temporal (wend schedule list --temporal shows them)", id, runner.ErrNotFound)
	}
	if err != nil {
		return runner.View{}, clusterError(id, err)
	}
	rec, ok := declarationOf(d.Memo)
	if !ok {
		return runner.View{}, fmt.Errorf("schedule %q: %w among wend's (a Temporal Schedule of that id exists, but wend did not make it)", id, runner.ErrNotFound)
	}
	v := runner.View{Record: rec, Declared: true}
	if st := d.Schedule.State; st != nil {
		v.Paused, v.State.Note = st.Paused, st.Note
		v.State.Paused = &v.Paused
	}
	in := d.Info
	v.State.Counts = schedule.Counts{Started: uint64(in.NumActions), Skipped: uint64(in.NumActionsSkippedOverlap),
		Missed: uint64(in.NumActionsMissedCatchupWindow)}
	for _, a := range in.RecentActions {
		o := schedule.Outcome{Fire: schedule.Fire{Nominal: a.ScheduleTime.UTC(), At: a.ActualTime.UTC()}, Result: schedule.Started, Time: a.ActualTime.UTC()}
		if a.StartWorkflowResult != nil {
			o.WorkflowID = a.StartWorkflowResult.WorkflowID
		}
		v.State.Recent = append(v.State.Recent, o)
	}
	for _, r := range in.RunningWorkflows {
		v.State.Open = append(v.State.Open, r.WorkflowID)
	}
	if len(in.NextActionTimes) > 0 && !v.Paused {
		v.NextFire = in.NextActionTimes[0].UTC()
	}
	return v, nil
}

// Pause stops the schedule firing; fires due while paused do not run later.
func (s *Schedules) Pause(id, note string) (runner.View, error) { return s.setPaused(id, note, true) }

// Resume lets it fire again from now.
func (s *Schedules) Resume(id, note string) (runner.View, error) { return s.setPaused(id, note, false) }

func (s *Schedules) setPaused(id, note string, pause bool) (runner.View, error) {
	ctx, cancel := s.b.ctx()
	defer cancel()
	if _, err := s.show(ctx, id); err != nil {
		return runner.View{}, err
	}
	h := s.b.c.ScheduleClient().GetHandle(ctx, id)
	var err error
	if pause {
		err = h.Pause(ctx, client.SchedulePauseOptions{Note: noteOr(note, "paused with wend schedule pause")})
	} else {
		err = h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: noteOr(note, "resumed with wend schedule resume")})
	}
	if err != nil {
		return runner.View{}, clusterError(id, err)
	}
	return s.show(ctx, id)
}

func noteOr(note, def string) string {
	if note == "" {
		return def
	}
	return note
}

// Trigger fires the schedule now, under its overlap policy or o. Temporal decides the fire
// on its side; the fire returned names the run once the schedule's recent actions show it
// (WorkflowID is "" when they did not within a few seconds).
func (s *Schedules) Trigger(id string, o schedule.Overlap) (schedule.Fire, error) {
	ctx, cancel := s.b.ctx()
	defer cancel()
	before, err := s.show(ctx, id)
	if err != nil {
		return schedule.Fire{}, err
	}
	asked := time.Now().UTC()
	if err := s.b.c.ScheduleClient().GetHandle(ctx, id).Trigger(ctx, client.ScheduleTriggerOptions{Overlap: overlaps[o]}); err != nil {
		return schedule.Fire{}, clusterError(id, err)
	}
	f := schedule.Fire{Nominal: asked, At: asked, Kind: "trigger", Overlap: o}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		now, err := s.show(ctx, id)
		if err != nil {
			break
		}
		if now.State.Counts != before.State.Counts && len(now.State.Recent) > 0 {
			last := now.State.Recent[len(now.State.Recent)-1]
			f.Nominal, f.WorkflowID = last.Nominal, last.WorkflowID
			break
		}
	}
	return f, nil
}

// Backfill fires every calendar time in [from, to), oldest first, under o or the schedule's
// policy; it counts and bounds the fires as the local runner does (schedule.Backfill), so a
// range the runner refuses is refused here too. Temporal's range is inclusive at both ends,
// hence the millisecond off its end.
func (s *Schedules) Backfill(id string, from, to time.Time, o schedule.Overlap) (int, error) {
	ctx, cancel := s.b.ctx()
	defer cancel()
	v, err := s.show(ctx, id)
	if err != nil {
		return 0, err
	}
	every, _ := time.ParseDuration(v.Every)
	timing, err := schedule.NewTiming(v.Cron, every, v.Timezone)
	if err != nil {
		return 0, fmt.Errorf("schedule %s: %w", id, err)
	}
	var scratch schedule.State
	n, err := schedule.Backfill(schedule.Def{ID: id, Timing: timing, Overlap: schedule.Overlap(v.Overlap)}, &scratch, from, to, time.Now(), o)
	if err != nil || n == 0 {
		return n, err
	}
	err = s.b.c.ScheduleClient().GetHandle(ctx, id).Backfill(ctx, client.ScheduleBackfillOptions{Backfill: []client.ScheduleBackfill{
		{Start: from, End: to.Add(-time.Millisecond), Overlap: overlaps[o]}}})
	if err != nil {
		return 0, clusterError(id, err)
	}
	return n, nil
}

// Delete deletes the schedule (its runs stay); a sync of a file declaring it makes it again.
func (s *Schedules) Delete(id string) error {
	ctx, cancel := s.b.ctx()
	defer cancel()
	if _, err := s.show(ctx, id); err != nil {
		return err
	}
	if err := s.b.c.ScheduleClient().GetHandle(ctx, id).Delete(ctx); err != nil {
		return clusterError(id, err)
	}
	return nil
}
