package boltstore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// A commit whose content bbolt cannot hold (a 32,000-byte workflow id: over half the key
// limit) is refused with history.ErrRefused, which engines take as "fail this request", and
// leaves the store writing: nothing of it is kept or queued, the next commit goes through.
func TestRefusedContent(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	long := strings.Repeat("x", 32_000)
	err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{storetest.Started(long, "r1", t0)}})
	if !errors.Is(err, history.ErrRefused) || !strings.Contains(err.Error(), "workflow id of 32000 bytes is too long") {
		t.Fatalf("long workflow id: %v", err)
	}
	if err := s.Err(); err != nil {
		t.Fatalf("store failed after a refusal: %v", err)
	}
	must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{storetest.Started("wf", "r2", t0)}}))
	if _, err := s.Run("r1"); !errors.Is(err, history.ErrNotFound) {
		t.Fatalf("refused run: %v", err)
	}
	if runs, err := s.Runs(history.RunFilter{}); err != nil || len(runs) != 1 || runs[0].RunID != "r2" {
		t.Fatalf("runs %+v %v", runs, err)
	}
}
