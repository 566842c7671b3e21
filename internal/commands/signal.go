package commands

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/wendflow/wend/internal/termtext"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

var signalCmd = &command{
	summary: "send a signal to a running workflow",
	usage: `Usage: wend signal ID NAME [--data JSON] [--id SIGNAL_ID] [--json] [--db PATH]
       wend signal --where FILTER NAME [--data JSON] [--id SIGNAL_ID] [--dry-run | --yes] [--rps N]

Sends signal NAME, with optional JSON data, to the open run of workflow id ID (or to the
run with run id ID, when it is open). The signal is durable when the command returns. A
wait_for_signal step waiting for NAME takes it (its data is the step's output, "signal" in
its set: expressions); a signal sent before the wait is kept and satisfies it later. When
another wend process holds the database, the signal goes through its control socket and
that process acts on it at once; otherwise the run takes it when it is next driven
(wend run --id ID FILE, wend resume, wend serve).

Flags:
  --data JSON       the signal's data (default null)
  --id SIGNAL_ID    make the send idempotent: a send with an id the run has already
                    received is acknowledged (exit 0) and not recorded again, even after
                    the run ended, so a script that did not see the answer (a timeout, a
                    crash) can simply send again; the command then says the signal "was
                    already delivered" instead of "sent"
  --json            print the run record after the signal as JSON (a duplicate is noted
                    on stderr)
  --db PATH         database file (default $WEND_DB, else .wend/wend.db)
  --where F         send NAME to every open run filter F matches, once each, newest first;
                    F is as for 'wend cancel --where' (see wend help cancel). With --id the
                    batch can simply be run again: runs that have the signal acknowledge it
  --dry-run         with --where: list the matching open runs (WORKFLOW_ID RUN_ID STATUS)
  --yes             with --where: send (without it, say how many runs match and exit 2)
  --rps N           with --where: at most N runs a second (as for wend cancel --where).
                    Through wend serve the signals are sent by a batch (wend help batch):
                    its id on stdout instead of a line per run

NAME and SIGNAL_ID are at most 255 bytes with no control character, and the data at most
2 MiB; a run holds at most 5,000 signals no step has taken yet, and refuses one more.

A workflow that declares its signals (signals: in the file) refuses another name, and data
that fails the signal's schema, before anything is recorded: the run is untouched.

Exit codes: 0 sent (or a resend of a signal already delivered, said so), 1 no such workflow, the run has
finished (signals to a finished run are rejected), cannot take input or holds 5,000 signals,
the workflow does not declare the signal or its schema refuses the data, 2 usage or I/O error
(a name, id or data over its limit included). With --where: 0 every matched run took the
signal (or none matched), 1 a send failed, 2 also when runs match and neither --yes nor
--dry-run was given.
`,
	run: runSignal,
}

func runSignal(e *env, args []string) int {
	fs := flag.NewFlagSet("signal", flag.ContinueOnError)
	data := fs.String("data", "", "")
	signalID := fs.String("id", "", "")
	asJSON := fs.Bool("json", false, "")
	db := dbFlag(fs)
	filter := fs.String("where", "", "")
	dryRun := fs.Bool("dry-run", false, "")
	yes := fs.Bool("yes", false, "")
	rps := rpsFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "signal", "%s", flagError(err))
	}
	bulkMode := *filter != "" || *dryRun || *yes
	if msg := checkRPS(*rps, bulkMode); msg != "" {
		return usageError(e, "signal", "%s", msg)
	}
	if bulkMode {
		if len(pos) != 1 {
			return usageError(e, "signal", "with --where, want one signal NAME, got %d arguments", len(pos))
		}
		if *asJSON {
			return usageError(e, "signal", "--json takes one ID, not --where")
		}
		pos = []string{"", pos[0]}
	} else if len(pos) != 2 {
		return usageError(e, "signal", "want a workflow ID and a signal NAME, got %d arguments", len(pos))
	}
	if err := engine.CheckID("signal name", pos[1]); err != nil {
		return usageError(e, "signal", "NAME: %v", err)
	}
	if err := engine.CheckID("signal id", *signalID); err != nil {
		return usageError(e, "signal", "--id: %v", err)
	}
	if err := engine.CheckPayload("signal data", []byte(*data)); err != nil {
		return usageError(e, "signal", "--data: %v", err)
	}
	var raw json.RawMessage
	if *data != "" {
		if !json.Valid([]byte(*data)) {
			return usageError(e, "signal", "--data is not valid JSON: %.60q", *data)
		}
		raw = json.RawMessage(*data)
	}
	var w where
	if bulkMode {
		var msg string
		if w, msg = whereArgs(nil, *filter, *dryRun, *yes); msg != "" {
			return usageError(e, "signal", "%s", msg)
		}
		w.rps = *rps
	}
	b, err := openBackend(e, dbPath(e, *db), steerRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend signal: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	req := api.SignalRequest{Name: pos[1], Data: raw, ID: *signalID}
	if bulkMode {
		return bulk(e, b, w, *dryRun, *yes, bulkOp{name: "signal", eligible: history.Run.Open, skipped: "finished",
			batch: api.BatchRequest{Operation: api.BatchOpSignal, Signal: &api.BatchSignal{Name: req.Name, Data: req.Data, ID: req.ID}},
			act: func(r history.Run) (string, error) {
				sent, err := b.SendSignal(context.Background(), r.RunID, req)
				if err != nil {
					return "", err
				}
				if sent.Duplicate {
					return fmt.Sprintf("signal %q already delivered to run %s of %s", req.Name, r.RunID, termtext.Escape(r.WorkflowID, "")), nil
				}
				return fmt.Sprintf("signal %q sent to run %s of %s", req.Name, r.RunID, termtext.Escape(r.WorkflowID, "")), nil
			}})
	}
	sent, err := b.SendSignal(context.Background(), pos[0], api.SignalRequest{Name: pos[1], Data: raw, ID: *signalID})
	if err != nil {
		return commandError(e, "signal", err)
	}
	run := sent.Run
	dup := fmt.Sprintf("signal %q with id %s was already delivered to %s; not sent again (run %s is %s)",
		pos[1], termtext.Escape(*signalID, ""), termtext.Escape(run.WorkflowID, ""), run.RunID, run.Status)
	if *asJSON {
		out, _ := json.MarshalIndent(run, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
		if sent.Duplicate {
			fmt.Fprintf(e.stderr, "wend signal: %s\n", dup)
		}
		return exitOK
	}
	if sent.Duplicate {
		fmt.Fprintln(e.stdout, dup)
		return exitOK
	}
	if run.Status == history.StatusQueued {
		fmt.Fprintf(e.stdout, "signal %q kept for run %s of %s, queued under its concurrency key: it takes it when it starts\n",
			pos[1], run.RunID, termtext.Escape(run.WorkflowID, ""))
		return exitOK
	}
	fmt.Fprintf(e.stdout, "signal %q sent to run %s of %s\n", pos[1], run.RunID, termtext.Escape(run.WorkflowID, ""))
	return exitOK
}
