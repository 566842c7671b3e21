package runner

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/schedule"
)

// TestListSummarisesTheBuffer: a buffer_all schedule holding many fires is listed with its
// first ListedBuffered fires and their count, so the list stays small; Show gives them all.
func TestListSummarisesTheBuffer(t *testing.T) {
	states, runs := &MemStore{}, history.NewMemStore()
	now := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	rn, _ := newRunner(t, states, runs, func() time.Time { return now })
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if _, err := rn.Backfill("minutely", from, from.Add(schedule.MaxBuffered*time.Minute), schedule.BufferAll); err != nil {
		t.Fatal(err)
	}
	full, err := rn.Show("minutely")
	if err != nil {
		t.Fatal(err)
	}
	held := len(full.State.Buffered)
	if held <= ListedBuffered || full.BufferedCount != held {
		t.Fatalf("show: %d buffered, count %d; want more than %d, all counted", held, full.BufferedCount, ListedBuffered)
	}
	list := rn.List()
	if len(list) != 1 {
		t.Fatalf("list: %d schedules", len(list))
	}
	v := list[0]
	if len(v.State.Buffered) != ListedBuffered || v.BufferedCount != held || v.State.Buffered[0] != full.State.Buffered[0] {
		t.Fatalf("list: %d buffered fires, count %d; want the first %d of %d", len(v.State.Buffered), v.BufferedCount, ListedBuffered, held)
	}
	b, _ := json.Marshal(list)
	if len(b) > 8<<10 {
		t.Fatalf("the list is %d bytes with %d fires buffered", len(b), held)
	}
	if again, _ := rn.Show("minutely"); len(again.State.Buffered) != held {
		t.Fatalf("listing changed the buffer: %d fires, want %d", len(again.State.Buffered), held)
	}
}
