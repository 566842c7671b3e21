package engine

import (
	"container/heap"
	"sync"
	"time"

	"github.com/wendflow/wend/history"
)

// scheduler holds tasks that are due later (timers, retry backoff) and hands each to the
// engine when its time comes, using one clock timer for the earliest.
type scheduler struct {
	clock Clock
	run   func(history.Task)

	mu      sync.Mutex
	h       taskHeap
	byID    map[string]*item
	stopT   func() bool
	armedAt time.Time
	stopped bool
}

type item struct {
	t     history.Task
	index int
}

func newScheduler(c Clock, run func(history.Task)) *scheduler {
	return &scheduler{clock: c, run: run, byID: map[string]*item{}}
}

// add schedules t at t.AvailableAt (at once when that has passed).
func (s *scheduler) add(t history.Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	if old, ok := s.byID[t.ID]; ok {
		heap.Remove(&s.h, old.index)
	}
	it := &item{t: t}
	heap.Push(&s.h, it)
	s.byID[t.ID] = it
	s.arm()
}

// addAll schedules ts as add does each, in one pass: a start arms every stored timer at once
// (100,000 waiting runs hold as many), so the heap is built whole (heap.Init, linear) and its
// clock timer set once.
func (s *scheduler) addAll(ts []*history.Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || len(ts) == 0 {
		return
	}
	for _, t := range ts {
		if old, ok := s.byID[t.ID]; ok {
			old.t = *t // its place is found again by heap.Init
			continue
		}
		it := &item{t: *t, index: len(s.h)}
		s.h = append(s.h, it)
		s.byID[t.ID] = it
	}
	heap.Init(&s.h)
	s.arm()
}

func (s *scheduler) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if it, ok := s.byID[id]; ok {
		heap.Remove(&s.h, it.index)
		delete(s.byID, id)
	}
}

func (s *scheduler) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	if s.stopT != nil {
		s.stopT()
	}
}

// arm sets the clock timer for the earliest task; s.mu is held.
func (s *scheduler) arm() {
	if len(s.h) == 0 || s.stopped {
		return
	}
	at := s.h[0].t.AvailableAt
	if s.stopT != nil && !s.armedAt.After(at) {
		return // already armed for an earlier or equal time
	}
	if s.stopT != nil {
		s.stopT()
	}
	s.armedAt = at
	s.stopT = s.clock.AfterFunc(at.Sub(s.clock.Now()), s.fire)
}

// fire hands every due task to the engine and re-arms for the next.
func (s *scheduler) fire() {
	s.mu.Lock()
	s.stopT = nil
	now := s.clock.Now()
	var due []history.Task
	for len(s.h) > 0 && !s.h[0].t.AvailableAt.After(now) {
		it := heap.Pop(&s.h).(*item)
		delete(s.byID, it.t.ID)
		due = append(due, it.t)
	}
	s.arm()
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		return
	}
	for _, t := range due {
		s.run(t)
	}
}

type taskHeap []*item

func (h taskHeap) Len() int { return len(h) }
func (h taskHeap) Less(i, j int) bool {
	if !h[i].t.AvailableAt.Equal(h[j].t.AvailableAt) {
		return h[i].t.AvailableAt.Before(h[j].t.AvailableAt)
	}
	return h[i].t.ID < h[j].t.ID
}
func (h taskHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *taskHeap) Push(x any)   { it := x.(*item); it.index = len(*h); *h = append(*h, it) }
func (h *taskHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
