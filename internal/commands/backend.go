package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/app"
	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/web"
)

// backend is what the commands that read or steer runs use (server.Backend): a server.Server
// in process when this command holds the database (local), a client of the control socket of
// the wend process that holds it (remote), or another engine (Extensions.OpenTemporal).
// Either way the same code answers, so results and error texts match.
type backend = server.Backend

// access says what a command needs of a database it opens itself.
type access int

const (
	// readRuns lists and shows; a missing database reads as empty and is not created.
	readRuns access = iota
	// steerRuns signals and cancels: an engine replays the open runs to take the input.
	steerRuns
	// checkDB verifies the file; a missing database is an error.
	checkDB
	// purgeDB deletes runs: it writes; a missing database is an error.
	purgeDB
)

// connectWait bounds how long a command retries when the database is held but its holder's
// socket does not answer yet: a holder is still starting (its socket comes up after it has
// resumed unfinished runs), or a short-lived command holds the file for a moment. A variable
// so tests can shorten it.
var connectWait = 5 * time.Second

// openBackend opens the database at path, or, when another process holds it, connects to
// that process's control socket (path + ".sock"). A command given --temporal gets the
// Temporal cluster instead (extensions.go).
func openBackend(e *env, path string, a access) (backend, error) {
	if e.temporal != nil {
		return e.openTemporal()
	}
	if c := liveHolder(path); c != nil {
		return c, nil
	}
	deadline := time.Now().Add(connectWait)
	for {
		b, err := openLocal(path, a)
		var inUse *boltstore.InUseError
		if !errors.As(err, &inUse) {
			return b, err
		}
		c, cerr := dialControl(path, inUse.PID)
		if cerr == nil {
			return c, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w, and its control socket %s does not answer (%v); if that process is not wend, stop it",
				err, socketPath(path), cerr)
		}
		// boltstore.Open itself waits about a second for the lock, so this loop does not spin.
		time.Sleep(100 * time.Millisecond)
	}
}

func socketPath(dbPath string) string { return dbPath + ".sock" }

// liveHolder connects to the database's holder when its socket answers, nil otherwise. It is
// asked first because opening a held file waits out bbolt's lock timeout (a second) before
// saying it is held.
func liveHolder(dbPath string) *client {
	if _, err := os.Lstat(socketPath(dbPath)); err != nil {
		return nil
	}
	c, err := dialControl(dbPath, holderPID(dbPath))
	if err != nil {
		return nil
	}
	return c
}

// holderPID reads the pid the database's holder wrote beside it; 0 when unknown.
func holderPID(dbPath string) int {
	b, err := os.ReadFile(dbPath + ".pid")
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// local is a backend over a database this process opened.
type local struct {
	*server.Server
	close func() error
}

func (l local) Close() error { return l.close() }

// List keeps the runs GET /v1/runs would (api.ListQuery.Match), so a database held by
// another process, listed through it, gives the same answer.
func (l local) List(q api.ListQuery, limit int) ([]history.Run, error) {
	runs, err := l.Server.List(q.StoreFilter())
	if err != nil {
		return nil, err
	}
	out := runs[:0] // Server.List's is never nil, so neither is this: --json prints [] for none
	for _, r := range runs {
		if limit > 0 && len(out) == limit {
			break
		}
		if q.Match(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

func openLocal(path string, a access) (backend, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if a == checkDB || a == purgeDB {
			return nil, fmt.Errorf("no database at %s", path)
		}
		// Reading or steering runs of a database that does not exist finds none; creating
		// the file as a side effect would surprise whoever asked.
		return local{server.New(nil, history.NewMemStore()), func() error { return nil }}, nil
	}
	if a == readRuns || a == checkDB {
		// Writing nothing, so that reading works on a full disk.
		st, err := app.OpenReadOnly(path)
		if err != nil {
			return nil, err
		}
		return local{server.New(nil, st), st.Close}, nil
	}
	if a == steerRuns {
		// A signal or cancel goes through an engine that drives none of the runs it replays.
		s, closeFn, err := app.OpenSteer(path, stderrLog)
		if err != nil {
			return nil, err
		}
		return local{s, closeFn}, nil
	}
	st, err := openStore(path)
	if err != nil {
		return nil, err
	}
	return local{server.New(nil, st), st.Close}, nil
}

// serveControl serves the control API for an engine this process drives. Without a socket
// the process still works, but other commands cannot reach it, so it says so. configure runs
// on the server before it listens (the plugin roller of a process that runs plugins).
func serveControl(e *env, dbPath string, s *server.Server) *server.UnixServer {
	u, err := server.ListenUnix(socketPath(dbPath), web.New(s)) // the API, and the UI for local browsers and tools
	if err != nil {
		fmt.Fprintf(e.stderr, "wend: no control socket (%v); other wend commands cannot reach this process\n", err)
		return nil
	}
	return u
}

// outcomeExit prints a closed run's output and maps its end to `wend run`'s exit code.
func outcomeExit(e *env, o api.Outcome) int {
	switch o.Run.Status {
	case history.StatusCompleted:
		out := o.Output
		if len(out) == 0 {
			out = json.RawMessage("null")
		}
		fmt.Fprintf(e.stdout, "%s\n", out)
		return exitOK
	case history.StatusCancelled:
		return exitRunCancelled
	}
	if o.Run.ClosedReason == history.ClosedTimedOut {
		return exitRunTimedOut
	}
	return exitRunFailed
}

// commandError prints a backend error for command cmd and returns its exit code: 1 when the
// subject is wrong (unknown id, finished or blocked run, invalid input), 2 for I/O trouble.
func commandError(e *env, cmd string, err error) int {
	fmt.Fprintf(e.stderr, "wend %s: %v\n", cmd, err)
	var se *api.Error
	if errors.As(err, &se) && se.Code != api.CodeInternal && se.Code != api.CodeStopped {
		return exitFailed
	}
	return exitUsage
}

// runRemote is `wend run` when another wend process holds the database: the run starts
// there and this process follows it, printing its events and output as a local run would.
// req.SpecFile is absolute: the holder resolves paths from its own working directory.
func runRemote(e *env, c *client, req engine.StartRequest, detach bool) int {
	st, err := c.Start(context.Background(), req)
	if err != nil {
		return startRefused(e, err, req.Input)
	}
	if st.Run.Status == history.StatusQueued {
		fmt.Fprintf(e.stderr, "wend: the database is held by wend pid %d; run %s of %s waits there, queued under its concurrency key (wend show %s says for what)\n",
			c.pid, st.Run.RunID, st.Run.WorkflowID, st.Run.WorkflowID)
	} else {
		fmt.Fprintf(e.stderr, "wend: the database is held by wend pid %d; run %s of %s runs there\n", c.pid, st.Run.RunID, st.Run.WorkflowID)
	}
	if detach {
		fmt.Fprintf(e.stdout, "%s %s\n", st.Run.WorkflowID, st.Run.RunID)
		return exitOK
	}
	return followRemote(e, c, st.Run.WorkflowID)
}

// followPoll is how long each long poll of a followed run lasts; new events print between
// polls, so it is also the progress lines' latency.
const followPoll = time.Second

// followRemote follows a workflow that another process drives until it closes. Ctrl-C stops
// following; the run goes on there.
func followRemote(e *env, b backend, workflowID string) int {
	return followElsewhere(e, b, workflowID, "in the process that holds the database",
		"it goes on when a wend process drives it (wend resume, wend serve)")
}

// followElsewhere follows a workflow that b's engine drives: where says where the run goes
// on after Ctrl-C, stuck what happens when following fails.
func followElsewhere(e *env, b backend, workflowID, where, stuck string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	prog := newProgress(e.stderr)
	var runID string
	var after uint64
	printNew := func() {
		p, err := b.Events(workflowID, after)
		if err != nil {
			return // the poll below reports what matters
		}
		if p.Run.RunID != runID { // continue-as-new: follow the next run from its start
			runID, after = p.Run.RunID, 0
			if p, err = b.Events(workflowID, 0); err != nil {
				return
			}
		}
		for _, ev := range p.Events {
			prog.observe(p.Run, ev)
			after = ev.Seq
		}
	}
	for {
		printNew()
		o, err := b.Wait(ctx, workflowID, followPoll)
		if ctx.Err() != nil {
			fmt.Fprintf(e.stderr, "wend: stopped following %s; the run goes on %s\n", workflowID, where)
			return exitInterrupted
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "wend run: %v\n", err)
			fmt.Fprintf(e.stderr, "wend: %s did not finish here; %s\n", workflowID, stuck)
			return exitFailed
		}
		printNew()
		if o.Closed {
			return outcomeExit(e, o)
		}
	}
}
