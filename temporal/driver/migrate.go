package driver

import (
	"fmt"
	"maps"
	"slices"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
	"github.com/wendflow/wend/temporal/wire"
	"go.temporal.io/sdk/workflow"
)

// A migration reaches a Temporal-hosted run as the signal wire.MigrateSignalName. It joins
// the run's inputs when the workflow receives it, so the check runs on exactly the history
// recorded before it, in the main loop as every input is: the same check as the local engine's
// (interpreter.Diverge on the whole history), and when it holds the same record
// (WorkflowMigrated) and the same rebuild (the state machine replayed whole on the new
// text). A replay of the execution meets the signal at the same point of the history and
// decides the same, so moving a run is deterministic on replay.

// maxVerdicts bounds the verdicts kept for QueryMigration: the newest are kept.
const maxVerdicts = 64

// migrateInput marks a migration among the inputs of the main loop (never recorded as is).
const migrateInput history.EventType = "wend.migrate"

// listenMigrations turns migrate signals into inputs and answers the verdict query.
func (d *driver) listenMigrations() error {
	ch := workflow.GetSignalChannel(d.root, wire.MigrateSignalName)
	workflow.Go(d.ctx, func(gctx workflow.Context) {
		for {
			var m wire.Migrate
			ch.Receive(gctx, &m)
			d.inbox.Send(gctx, history.Event{Type: migrateInput, Data: history.MustData(m)})
		}
	})
	return workflow.SetQueryHandler(d.root, wire.QueryMigration, func(id string) (wire.MigrateVerdict, error) {
		for i := len(d.verdicts) - 1; i >= 0; i-- {
			if d.verdicts[i].id == id {
				return d.verdicts[i].v, nil
			}
		}
		return wire.MigrateVerdict{}, nil
	})
}

type keptVerdict struct {
	id string
	v  wire.MigrateVerdict
}

// migrate applies one migrate signal: the run moves to m.Source when its whole history
// replays on it; otherwise it stays as it is and the verdict says why.
func (d *driver) migrate(ev history.Event) {
	m, err := history.DataOf[wire.Migrate](ev)
	v := wire.MigrateVerdict{Seen: true, FromSHA256: d.st.SpecSHA256, ToSHA256: history.SpecSHA256([]byte(m.Source))}
	switch {
	case err != nil:
		v.Error = fmt.Sprintf("unreadable migration: %v", err)
	case v.FromSHA256 == v.ToSHA256:
		v.Already = true
	default:
		v = d.move(m, v)
	}
	d.verdicts = append(d.verdicts, keptVerdict{id: m.ID, v: v})
	if len(d.verdicts) > maxVerdicts {
		d.verdicts = d.verdicts[len(d.verdicts)-maxVerdicts:]
	}
}

func (d *driver) move(m wire.Migrate, v wire.MigrateVerdict) wire.MigrateVerdict {
	nw, ds := (&spec.Loader{SkipChildren: true}).Load(d.st.SpecFile, []byte(m.Source))
	switch {
	case nw == nil || ds.HasErrors():
		v.Error = "the workflow file is invalid: " + ds.Error()
		return v
	case nw.Name != d.w.Name:
		v.Error = fmt.Sprintf("the run runs workflow %q, and the text is workflow %q", d.w.Name, nw.Name)
		return v
	case d.st.Shard != nil:
		v.Error = "the run is a shard of a for_each and follows its parent's text"
		return v
	}
	dv, err := interpreter.Diverge(nw, d.events)
	if err != nil {
		v.Error = err.Error()
		return v
	}
	if dv != nil {
		v.Divergence = &wire.Divergence{Seq: dv.Seq, Recorded: string(dv.Recorded), Step: dv.Step, Decided: string(dv.Decided), At: dv.At, Reason: dv.Reason}
		return v
	}
	st := d.st
	st.SpecSource, st.SpecSHA256 = m.Source, v.ToSHA256
	r := interpreter.New(nw, st)
	// WorkflowMigrated is recorded by the old state machine (it decides nothing on it), then
	// the new one is built from the whole history, the record included, as a restart would.
	d.record(history.Event{Type: history.WorkflowMigrated, Data: history.MustData(history.Migration{
		FromSHA256: v.FromSHA256, ToSHA256: v.ToSHA256, SpecSource: m.Source, File: m.File, By: m.By})})
	if err := r.Replay(d.events); err != nil {
		// Diverge just replayed the same history on the same text: a bug. Failing the task
		// keeps the run blocked rather than deciding on a state machine it cannot rebuild.
		panic(fmt.Sprintf("wend: run %s: moved, but does not rebuild on its new text: %v", d.st.RunID, err))
	}
	d.w, d.r, d.st = nw, r, st
	// The memo names the text a run is on (wend list, show); it follows the move.
	if err := workflow.UpsertMemo(d.ctx, map[string]any{wire.MemoSpecSHA256: v.ToSHA256}); err != nil {
		panic(fmt.Sprintf("wend: run %s: moved, but its memo is not updated: %v", d.st.RunID, err))
	}
	if len(m.Specs) > 0 {
		specs := make(map[string]string, len(d.in.Specs)+len(m.Specs))
		maps.Copy(specs, d.in.Specs)
		maps.Copy(specs, m.Specs)
		for _, k := range slices.Sorted(maps.Keys(m.Specs)) {
			delete(d.specs, k) // checked again from the new text when a child starts
		}
		d.in.Specs = specs
	}
	v.Moved = true
	return v
}
