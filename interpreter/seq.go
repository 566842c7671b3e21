package interpreter

import (
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// seq runs steps one after another; its output is the last step's output.
type seq struct {
	r       *Run
	steps   []*spec.Step
	sc      *scope
	done    func(out any, f *history.Failure)
	i       int
	last    any
	cur     *node
	stopped bool
}

func (q *seq) start() { q.step() }

func (q *seq) step() {
	if q.stopped {
		return
	}
	if q.i >= len(q.steps) {
		q.stopped = true
		q.done(q.last, nil)
		return
	}
	q.cur = q.r.newNode(q.steps[q.i], q.sc, func(out any, f *history.Failure) {
		if f != nil {
			q.stopped = true
			q.done(nil, f)
			return
		}
		q.last = out
		q.i++
		q.step()
	})
	q.cur.start()
}

func (q *seq) cancel() {
	if q.stopped {
		return
	}
	q.stopped = true
	if q.cur != nil {
		q.cur.cancel()
	}
}
