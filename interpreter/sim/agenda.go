package sim

import (
	"container/heap"
	"time"

	"github.com/wendflow/wend/history"
)

// item is an input, or a try, due at a virtual time. An item with a key counts only while it
// is the latest pushed under its key: pushing again supersedes it, withdraw drops it.
type item struct {
	at    time.Time
	order int
	key   string
	ev    history.Event
}

// agenda is what the world owes the run, earliest first, ties in the order they were pushed.
type agenda struct {
	q     queue
	live  map[string]int // key -> order of the item that counts
	order int
}

func (a *agenda) push(at time.Time, key string, ev history.Event) {
	a.order++
	if key != "" {
		if a.live == nil {
			a.live = map[string]int{}
		}
		a.live[key] = a.order
	}
	heap.Push(&a.q, &item{at: at, order: a.order, key: key, ev: ev})
}

func (a *agenda) withdraw(key string) { delete(a.live, key) }

func (a *agenda) counts(it *item) bool { return it.key == "" || a.live[it.key] == it.order }

// pop takes the earliest item that still counts.
func (a *agenda) pop() (*item, bool) {
	for a.q.Len() > 0 {
		it := heap.Pop(&a.q).(*item)
		if !a.counts(it) {
			continue
		}
		if it.key != "" {
			delete(a.live, it.key)
		}
		return it, true
	}
	return nil, false
}

// each calls fn with every item that still counts, in no particular order. It drops the
// items that no longer count when they are most of the queue, so a host whose user never pops
// (a Sim answers tries one by one) does not scan them again and again.
func (a *agenda) each(fn func(*item)) {
	kept := a.q[:0:0]
	for _, it := range a.q {
		if a.counts(it) {
			fn(it)
			kept = append(kept, it)
		}
	}
	if len(a.q) > 64 && len(kept) < len(a.q)/2 {
		a.q = kept
		heap.Init(&a.q)
	}
}

type queue []*item

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].order < q[j].order
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(*item)) }
func (q *queue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}
