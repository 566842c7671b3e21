package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wendflow/wend/runview"
)

// After random sequences of starts, steps, completions, failures, cancels, retries, purges,
// restarts and scrapes, the counters (fed by the commits, a scrape reading no run) equal a
// whole read of every run's history, at every scrape; also when they hold one open run's
// state at most, or a few kilobytes of states, reading the others' histories again at their
// next commit.
func TestCountersEqualAWholeReadAfterRandomChanges(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			if seed%2 == 0 { // the states of all open runs but one go at each scrape
				defer func(n int) { heldMax = n }(heldMax)
				heldMax = 1
			}
			if seed == 3 { // the states go past a few kilobytes, at each scrape and aside
				defer func(n int) { heldBytesMax = n }(heldBytesMax)
				heldBytesMax = 4 << 10
			}
			rng := rand.New(rand.NewPCG(seed, seed))
			path := filepath.Join(t.TempDir(), "wend.db")
			s := serveAt(t, path)
			defer func() { s.close() }()
			var waiting, open, failed, closedRuns []string // workflow ids; run ids in closedRuns
			pick := func(from *[]string) (string, bool) {
				if len(*from) == 0 {
					return "", false
				}
				i := rng.IntN(len(*from))
				id := (*from)[i]
				*from = slices.Delete(*from, i, i+1)
				return id, true
			}
			closeRun := func(id string) {
				d, err := s.srv.Show(id)
				if err != nil {
					t.Fatal(err)
				}
				closedRuns = append(closedRuns, d.Run.RunID)
			}
			ctx := context.Background()
			for i := range 40 {
				id := fmt.Sprint("r", i)
				switch op := rng.IntN(11); op {
				case 0, 1:
					s.start(id, failSpec)
					s.settle(id, closed)
					closeRun(id)
					failed = append(failed, id) // in its activity: retried from there
				case 2, 3:
					s.start(id, waitSpec)
					s.settle(id, waitingFor(runview.WaitSignal, 0))
					waiting = append(waiting, id)
				case 4:
					s.start(id, flakySpec)
					s.settle(id, waitingFor(runview.WaitActivity, 2))
					open = append(open, id)
				case 5:
					s.start(id, delaySpec)
					s.settle(id, waitingFor(runview.WaitTimer, 0))
					open = append(open, id)
				case 6: // a step: the signal completes the run
					if w, ok := pick(&waiting); ok {
						if _, err := s.srv.Signal(ctx, w, "approve", json.RawMessage(`{"by":"ann"}`)); err != nil {
							t.Fatal(err)
						}
						s.settle(w, closed)
						closeRun(w)
					}
				case 7: // a cancel of any open run
					from := &open
					if rng.IntN(2) == 0 {
						from = &waiting
					}
					if o, ok := pick(from); ok {
						if _, err := s.srv.Cancel(ctx, o, "enough"); err != nil {
							t.Fatal(err)
						}
						s.settle(o, closed)
						closeRun(o)
					}
				case 8: // a retry of a failed run: a new run, which fails again
					if f, ok := pick(&failed); ok {
						r, err := s.srv.Retry(ctx, f)
						if err != nil {
							t.Fatal(err)
						}
						s.settle(r.Run.RunID, closed)
						closedRuns = append(closedRuns, r.Run.RunID) // retried once only
					}
				case 9: // a purge of some closed runs
					var ids []string
					for range 1 + rng.IntN(3) {
						if c, ok := pick(&closedRuns); ok {
							ids = append(ids, c)
						}
					}
					if len(ids) > 0 {
						if _, err := s.st.PurgeRuns(ctx, ids, nil); err != nil {
							t.Fatal(err)
						}
						failed = slices.DeleteFunc(failed, func(wf string) bool {
							d, err := s.srv.Show(wf)
							return err != nil || d.Run.Status != "failed"
						})
					}
				case 10:
					s.close()
					s = serveAt(t, path)
				}
				if rng.IntN(4) == 0 {
					s.compare(fmt.Sprintf("after step %d", i))
				}
			}
			s.compare("at the end")
			if n := s.m.counters.lost.Load(); n != 0 {
				t.Errorf("the tallies could not follow %d histories the engine wrote", n)
			}
		})
	}
}
