package engine

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// addAll hands each task over once, at its time and in time order, as add one by one does: a
// task given again (already held, or twice in the batch) is held once, at its last time, and
// one added later still fires in order among them.
func TestSchedulerAddAllFiresEachOnceInOrder(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := NewFakeClock(t0)
	var mu sync.Mutex
	var got []string
	s := newScheduler(clock, func(task history.Task) {
		mu.Lock()
		got = append(got, task.ID)
		mu.Unlock()
	})
	at := func(id string, d time.Duration) *history.Task {
		return &history.Task{ID: id, RunID: "r", Kind: history.TaskTimer, AvailableAt: t0.Add(d)}
	}
	s.add(*at("held", time.Hour))
	s.addAll([]*history.Task{at("c", 3*time.Hour), at("a", time.Hour), at("held", 4*time.Hour), at("b", 2*time.Hour), at("a", 90*time.Minute)})
	s.add(*at("later", 150*time.Minute))
	s.addAll(nil)

	clock.Advance(time.Hour)
	mu.Lock()
	if len(got) != 0 {
		t.Fatalf("fired at 1 h: %v, want nothing (held and a moved later)", got)
	}
	mu.Unlock()
	clock.Advance(4 * time.Hour)
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"a", "b", "later", "c", "held"}; !slices.Equal(got, want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
}

// A stopped scheduler takes nothing, in one batch or one by one.
func TestSchedulerAddAllAfterStop(t *testing.T) {
	clock := NewFakeClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	fired := 0
	s := newScheduler(clock, func(history.Task) { fired++ })
	s.stop()
	s.addAll([]*history.Task{{ID: "a", RunID: "r", Kind: history.TaskTimer, AvailableAt: clock.Now()}})
	clock.Advance(time.Hour)
	if fired != 0 || len(s.byID) != 0 {
		t.Fatalf("a stopped scheduler fired %d and holds %d", fired, len(s.byID))
	}
}
