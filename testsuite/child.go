package testsuite

import (
	"encoding/json"
	"fmt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// child answers a run_workflow or wait_for_workflow step: from the case's children, or for a
// run_workflow without one, by running the child's file with the same mocks.
func (d *driver) child(e history.Event) {
	var ch *Child
	for _, c := range d.c.Children {
		if d.lab.matches(c.Step, e.Step) {
			ch = c
			break
		}
	}
	wait := e.Type == history.WorkflowWaitScheduled
	done, failed := history.ChildWorkflowCompleted, history.ChildWorkflowFailed
	if wait {
		done, failed = history.WorkflowWaitCompleted, history.WorkflowWaitFailed
	}
	switch {
	case ch != nil && !ch.Run:
		res := ch.Result
		c := history.Closed{RunID: "mocked"}
		typ := done
		if res.Error != nil {
			typ = failed
			c.Failure = &history.Failure{Category: history.CategoryActivity, PropagationKind: "workflow",
				Type: res.Error.Type, Message: res.Error.Message, NonRetryable: res.Error.NonRetryable}
		} else {
			c.Output = mustJSON(res.Output)
		}
		d.h.Due(d.h.Now.Add(res.Takes), history.Event{Type: typ, Step: e.Step, Data: history.MustData(c)})
	case wait:
		if ch != nil {
			d.problem = &Problem{Pos: ch.Pos, Message: fmt.Sprintf("step %s waits for another workflow; mock its result (output or error), run: true is for run_workflow", d.lab.label(e.Step))}
		}
		// Not mocked: the awaited workflow never finishes; the step's timeout, if any, decides.
	default:
		d.runChild(e, done, failed)
	}
}

func (d *driver) runChild(e history.Event, done, failed history.EventType) {
	cs, _ := history.DataOf[history.ChildSchedule](e)
	label := d.lab.label(e.Step)
	if d.depth >= maxChildDepth {
		d.problem = &Problem{Pos: d.c.Pos, Message: fmt.Sprintf("step %s: children nest deeper than %d; mock one under children", label, maxChildDepth)}
		return
	}
	// A shard child runs this workflow's own text over its slice; another child, its file.
	w, ds, err := d.w, spec.Diagnostics(nil), error(nil)
	if cs.Shard == nil {
		w, ds, err = d.loader.LoadFile(cs.SpecFile)
	}
	switch {
	case err != nil:
		d.problem = &Problem{Pos: d.c.Pos, Message: fmt.Sprintf("step %s: %v; mock the child under children", label, err)}
		return
	case ds.HasErrors():
		d.problem = &Problem{Pos: d.c.Pos, Message: fmt.Sprintf("step %s: child workflow %s is invalid:\n%s", label, cs.SpecFile, ds.Error())}
		return
	}
	var in any
	_ = json.Unmarshal(cs.Input, &in)
	sub := newDriver(d.f, d.c, w, d.loader, d.used, d.depth+1, d.h.Now)
	sub.shard = cs.Shard
	o := sub.play(in, d.c.Pos)
	if o.Problem != nil {
		d.problem = &Problem{Pos: o.Problem.Pos, Message: fmt.Sprintf("in child %s of step %s: %s", cs.SpecFile, label, o.Problem.Message)}
		return
	}
	if cs.Shard != nil {
		// A shard child's calls are this for_each's items' own: the case's `calls:` lists them.
		for _, c := range o.Calls {
			c.At += sub.start.Sub(d.start)
			d.calls = append(d.calls, c)
		}
	}
	if o.Status == history.StatusRunning {
		return // the child waits for ever; the step's timeout, if any, decides
	}
	c := history.Closed{RunID: st(cs.WorkflowID)}
	typ := done
	last := o.Events[len(o.Events)-1]
	if last.Type == history.WorkflowCompleted {
		c.Output = mustJSON(o.Output)
	} else {
		typ = failed
		c.Failure = o.Failure
		if c.Failure == nil {
			c.Failure = &history.Failure{Category: history.CategoryInternal, Message: "child ended with " + string(last.Type)}
		}
	}
	d.h.Due(last.Time, history.Event{Type: typ, Step: e.Step, Data: history.MustData(c)})
}

func st(id string) string { return id + "/run1" }
