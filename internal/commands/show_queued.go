package commands

import (
	"fmt"
	"strings"
	"time"

	"github.com/wendflow/wend/internal/termtext"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
)

// unstartedText is show's text for a run with no history: queued under its workflow's
// concurrency key, or closed there before it started.
func unstartedText(d runview.Detail) string {
	r := printableRun(d.Run)
	var b strings.Builder
	fmt.Fprintf(&b, "workflow  %s\nrun       %s\nname      %s\nspec      %s\n", r.WorkflowID, r.RunID, r.Name, r.SpecFile)
	if r.Status == history.StatusQueued {
		fmt.Fprintf(&b, "status    queued since %s\n", r.StartedAt.UTC().Format(time.RFC3339))
		fmt.Fprintln(&b, "\nwaiting for")
		if d.Queue != nil {
			fmt.Fprintf(&b, "  %s\n", d.Queue)
		} else {
			fmt.Fprintln(&b, "  a place under its concurrency key")
		}
		return b.String()
	}
	fmt.Fprintf(&b, "status    %s (%s while queued, at %s: it never started, so it has no history)\n",
		r.Status, r.ClosedReason, r.ClosedAt.UTC().Format(time.RFC3339))
	return b.String()
}

// sayQueued tells on stderr that a run just started waits queued, and for what.
func sayQueued(e *env, eng *engine.Engine, rec history.Run) {
	if rec.Status != history.StatusQueued {
		return
	}
	what := "a place under its concurrency key"
	if qi, ok := eng.Queued(rec.WorkflowID); ok {
		what = runview.Queue(qi).String()
	}
	fmt.Fprintf(e.stderr, "wend: run %s of %s waits %s; it starts when a run of its key closes\n",
		rec.RunID, termtext.Escape(rec.WorkflowID, ""), what)
}
