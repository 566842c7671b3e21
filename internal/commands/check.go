package commands

import (
	"encoding/json"
	"flag"
	"fmt"
)

var checkCmd = &command{
	summary: "verify the database and every run's history",
	usage: `Usage: wend check [--json] [--db PATH]
       wend check --acknowledge-log-loss [--json] [--db PATH]
       wend check --export FILE [--json]

Verifies the database: bbolt's page structure, then every event of every run (checksums,
sequence numbers contiguous from 1, exactly one WorkflowStarted and it first, at most one
terminal event and nothing after it, the run record agreeing with its history), the
workflow index and the tasks (each record's checksum, and the tasks against what the open
runs' histories need). Problems are printed on stdout, one per line, naming the run and
event; a sound database prints "ok: N runs, M events checked". When another wend process
holds the database, that process runs the check.

With --export FILE it checks a saved history export (wend history ID --output FILE) instead,
without a database: the schema, the integrity checksum over its events, their seqs
contiguous from 1 and the history's own rules, and a replay through the interpreter with the
spec source the export holds. A sound export prints "ok: export of run R: N events verified".

A database that went on without its write-ahead log (opened with WEND_ACCEPT_LOG_LOSS=1) is
behind what was acknowledged, and check reports that as a problem until an operator runs
check once with --acknowledge-log-loss: that records who (user@host) and when in the
database, and from then on check prints the loss as a "note:" line and exits 0. It writes,
so no other wend process may hold the database meanwhile.

Flags:
  --acknowledge-log-loss
              record that you know the database went on without its log, then check
  --json      print {"runs": N, "events": M, "problems": [...], "notes": [...]} instead (with --export:
              {"problems": [...], "run_id": R, "events": N, "replayed": true|false})
  --export F  check the saved history export in file F
  --db PATH   database file (default $WEND_DB, else .wend/wend.db)

Exit codes: 0 no problem, 1 problems found, 2 usage or I/O error (no database, or it
cannot be opened).
`,
	run: runCheck,
}

func runCheck(e *env, args []string) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	exportFile := fs.String("export", "", "")
	ackLoss := fs.Bool("acknowledge-log-loss", false, "")
	db := dbFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "check", "%s", flagError(err))
	}
	if len(pos) > 0 {
		return usageError(e, "check", "unexpected argument %q", pos[0])
	}
	if *ackLoss && (*exportFile != "" || e.temporal != nil) {
		return usageError(e, "check", "--acknowledge-log-loss is for a wend database, not with --export or --temporal")
	}
	if *exportFile != "" {
		return runCheckExport(e, *exportFile, *asJSON)
	}
	path := dbPath(e, *db)
	if *ackLoss {
		if err := acknowledgeLogLoss(e, path); err != nil {
			fmt.Fprintf(e.stderr, "wend check: %v\n", err)
			return exitUsage
		}
	}
	b, err := openBackend(e, path, checkDB)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend check: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	rep, err := b.Check()
	if err != nil {
		fmt.Fprintf(e.stderr, "wend check: %v\n", err)
		return exitUsage
	}
	code := exitOK
	if len(rep.Problems) > 0 {
		code = exitFailed
	}
	if *asJSON {
		out, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
		return code
	}
	for _, p := range rep.Problems {
		fmt.Fprintln(e.stdout, p)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(e.stdout, "note: %s\n", n)
	}
	if code != exitOK {
		where := path
		if e.temporal != nil {
			where = "Temporal " + e.temporal.Address
		}
		fmt.Fprintf(e.stderr, "wend check: %d problem(s) in %s (%d runs, %d events)\n", len(rep.Problems), where, rep.Runs, rep.Events)
		return code
	}
	if e.temporal != nil {
		fmt.Fprintf(e.stdout, "ok: workers poll task queue %s of namespace %s; %d wend runs there\n", e.temporal.TaskQueue, e.temporal.Namespace, rep.Runs)
		return code
	}
	fmt.Fprintf(e.stdout, "ok: %d runs, %d events checked\n", rep.Runs, rep.Events)
	return code
}

func runCheckExport(e *env, path string, asJSON bool) int {
	v, err := checkExport(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend check: %v\n", err)
		return exitUsage
	}
	code := exitOK
	if len(v.Problems) > 0 {
		code = exitFailed
	}
	if asJSON {
		out, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
		return code
	}
	for _, p := range v.Problems {
		fmt.Fprintln(e.stdout, p)
	}
	if code != exitOK {
		fmt.Fprintf(e.stderr, "wend check: %d problem(s) in export %s\n", len(v.Problems), path)
		return code
	}
	how := "checksum, schema, seqs"
	if v.Replayed {
		how += ", replay"
	}
	fmt.Fprintf(e.stdout, "ok: export of run %s: %d events verified (%s)\n", v.RunID, v.Events, how)
	return code
}
