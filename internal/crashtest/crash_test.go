//go:build unix

package crashtest

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/testkit/needs"
	"github.com/wendflow/wend/testkit/proctest"
)

// bins builds wend (with failpoints, and with the tags this test binary was built with, so
// `go test -tags wend_portable` crashes the portable plugin host and store) and the example Go
// plugin once per test binary: every test kills copies of the same two programs, and linking
// wend once per test took most of a loaded machine's minute.
func bins(t *testing.T) (wend, plugin string) {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "wend-crashtest-")
		if built.err != nil {
			return
		}
		wend, plugin := filepath.Join(built.dir, "wend"), filepath.Join(built.dir, "demo")
		for _, b := range [][]string{
			{"build", "-tags", "faults" + extraTags, "-o", wend, "github.com/wendflow/wend/cmd/wend"},
			{"build", "-o", plugin, "github.com/wendflow/wend/examples/plugins/demo"},
		} {
			if out, err := exec.Command("go", b...).CombinedOutput(); err != nil {
				built.err = fmt.Errorf("go %v: %v\n%s", b, err, out)
				return
			}
		}
		built.wend, built.plugin = wend, plugin
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	// Each test gets its own path to both (a hard link, or a copy across file systems): the
	// orphan checks count the processes running the test's plugin by its path.
	dir := t.TempDir()
	return linkOrCopy(t, built.wend, filepath.Join(dir, "wend")), linkOrCopy(t, built.plugin, filepath.Join(dir, "demo"))
}

func linkOrCopy(t *testing.T, from, to string) string {
	t.Helper()
	if os.Link(from, to) == nil {
		return to
	}
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// built holds what bins built; TestMain removes its folder.
var built struct {
	once         sync.Once
	dir          string
	wend, plugin string
	err          error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// sequential writes a workflow of n `record` steps, each its own commit boundary.
func sequential(t *testing.T, dir, plugin, log string, n int) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "wend: v1\nname: crash\nplugins: {demo: %q}\nsteps:\n", plugin)
	for i := range n {
		fmt.Fprintf(&b, "  - {id: s%d, activity: demo.record, with: {path: %q, note: \"s%d\"}, retry: {tries: 3, backoff: [10ms]}}\n", i, log, i)
	}
	b.WriteString("output: \"${{ steps.s" + strconv.Itoa(n-1) + ".output }}\"\n")
	p := filepath.Join(dir, "crash.wend.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type attempt struct {
	exit   int
	killed bool
	stderr string // what the process printed, for the message of a test that did not expect its exit
}

// runOnce starts `wend run --id crash` and either lets it finish, kills it after delay, or
// lets a failpoint end it.
func runOnce(t *testing.T, wend, db, wf string, delay time.Duration, failpoints string) attempt {
	t.Helper()
	return runWith(t, wend, db, wf, "crash", delay, failpoints)
}

// runOnceID is runOnce for another workflow id, without failpoints.
func runOnceID(t *testing.T, wend, db, wf, id string, delay time.Duration) attempt {
	t.Helper()
	return runWith(t, wend, db, wf, id, delay, "")
}

func runWith(t *testing.T, wend, db, wf, id string, delay time.Duration, failpoints string) attempt {
	t.Helper()
	cmd := exec.Command(wend, "run", "--id", id, "--db", db, wf)
	cmd.Env = append(os.Environ(), "WEND_FAILPOINTS="+failpoints)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timer <-chan time.Time
	if delay > 0 {
		timer = time.After(delay)
	}
	select {
	case err := <-done:
		return attempt{exit: exitCode(err), stderr: stderr.String()}
	case <-timer:
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
		return attempt{exit: 137, killed: true, stderr: stderr.String()}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("wend run hung; stderr:\n%s", stderr.String())
	}
	return attempt{}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// TestKillAndResume is docs/reliability.md B1 at the scale of the engine issue: a 100-step workflow
// killed with SIGKILL at seeded random times and at each failpoint, resumed each time, must end
// with a well-formed history, every step completed exactly once in history, and every step's
// invocations sharing one activity_execution_id (at least once, never twice in history).
func TestKillAndResume(t *testing.T) {
	t.Parallel() // the test waits on its own processes most of its time
	killAndResume(t)
}

// killAndResume is TestKillAndResume under the store mode of the process's environment.
func killAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds and runs real processes")
	}
	wend, plugin := bins(t)
	dir := t.TempDir()
	db, log := filepath.Join(dir, "wend.db"), filepath.Join(dir, "invocations.jsonl")
	crashes := kills(t)
	// No process gets further than 4 steps (see below), so 4 steps per crash keep the run from
	// finishing before the last crash.
	steps := max(150, 4*crashes)
	wf := sequential(t, dir, plugin, log, steps)
	seed := time.Now().UnixNano() % 100000
	if s := os.Getenv("WEND_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d (WEND_CRASH_SEED=%d to repeat)", seed, seed)

	faults, random := 0, 0
	points := []string{"after-commit", "before-commit", "after-call"}
	finished := false
	for i := 0; !finished && i < 10*crashes; i++ {
		// Alternate failpoint deaths (at an early pass, so each process makes little progress)
		// with SIGKILLs at random times; after the last crash let the run finish.
		fp, delay := "", time.Duration(0)
		switch {
		case faults+random >= crashes:
		case i%2 == 0:
			fp = fmt.Sprintf("%s=%d", points[(i/2)%len(points)], 1+rng.Intn(3))
		default:
			// A SIGKILL at a random time, with a failpoint after the 4th commit as a cap: no
			// process gets further than 4 steps, so 150 steps take at least 37 crashes however
			// fast the machine is.
			delay = time.Duration(5+rng.Intn(60)) * time.Millisecond
			fp = "after-commit=4"
		}
		a := runOnce(t, wend, db, wf, delay, fp)
		switch {
		case a.killed:
			random++
		case a.exit == 137:
			faults++
		case a.exit == 0:
			finished = true
		default:
			t.Fatalf("wend run exited %d (attempt %d); stderr:\n%s", a.exit, i, a.stderr)
		}
	}
	if !finished {
		t.Fatal("the run never finished")
	}

	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	checkErrs, err := st.Check()
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(history.RunFilter{WorkflowID: "crash"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v %v", runs, err)
	}
	evs, err := st.Events(runs[0].RunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	problems := history.Check(runs[0], evs)
	completed := map[string]int{}
	execOf := map[string]string{}
	for _, e := range evs {
		if e.Type == history.ActivityCompleted {
			completed[e.Step]++
			execOf[e.Step] = e.ActivityExecutionID
		}
	}
	dupHistory, missing := 0, 0
	for i := range steps {
		switch n := completed[fmt.Sprintf("steps[%d]", i)]; {
		case n == 0:
			missing++
		case n > 1:
			dupHistory += n - 1
		}
	}
	inv := proctest.LoadInvocations(t, log)
	// Every delivery of a step is a new attempt: a redelivery after a crash
	// never repeats the attempt number, and so the activity_attempt_id, of an earlier call.
	dupInv, dupAttempts, idsPerStep := 0, 0, map[string]map[string]bool{}
	for note, recs := range inv {
		dupInv += len(recs) - 1
		idsPerStep[note] = map[string]bool{}
		attempts := map[int]bool{}
		for _, r := range recs {
			idsPerStep[note][r.ExecID] = true
			if attempts[r.Attempt] {
				dupAttempts++
			}
			attempts[r.Attempt] = true
		}
	}
	maxIDs := 0
	for i := range steps {
		note := fmt.Sprintf("s%d", i)
		if len(inv[note]) == 0 {
			t.Errorf("step %s completed in history but the plugin never recorded it (at least once broken)", note)
		}
		if n := len(idsPerStep[note]); n > maxIDs {
			maxIDs = n
		}
		if id := execOf[fmt.Sprintf("steps[%d]", i)]; !idsPerStep[note][id] {
			t.Errorf("step %s: history's execution id %s is not among the plugin's %v", note, id, idsPerStep[note])
		}
	}
	orphans := proctest.Running(plugin, 3*time.Second)
	fmt.Printf("RELIABILITY suite=crash store=%s faults=%d random_kills=%d resumed=%d events=%d events_lost=%d dup_history=%d invocations=%d dup_invocations=%d dup_attempts=%d distinct_exec_ids_per_step_max=%d check_errors=%d orphans=%d seed=%d\n",
		storeKind(), faults, random, faults+random, len(evs), missing, dupHistory, proctest.CountInvocations(inv), dupInv, dupAttempts, maxIDs, len(problems)+len(checkErrs), orphans, seed)
	if orphans > 0 {
		t.Errorf("%d plugin processes outlived their killed hosts", orphans)
	}
	if len(problems) > 0 || len(checkErrs) > 0 {
		t.Fatalf("integrity: %v %v", problems, checkErrs)
	}
	// The export shows each redelivery as a try of its own after the interrupted one.
	doc, err := export.Build(runs[0], evs)
	if err != nil {
		t.Fatal(err)
	}
	interrupted, redelivered := 0, 0
	for _, a := range doc.Activities {
		for i, at := range a.Attempts {
			if at.Outcome != runview.AttemptInterrupted {
				continue
			}
			interrupted++
			if at.Retry != nil && at.Retry.Redelivery && i+1 < len(a.Attempts) &&
				a.Attempts[i+1].ActivityAttemptID != at.ActivityAttemptID && a.Attempts[i+1].Attempt == at.Attempt+1 {
				redelivered++
			}
		}
	}
	if n := count(evs, history.ActivityAttemptInterrupted); interrupted != n || redelivered != n {
		t.Errorf("export: %d interrupted tries, %d followed by their redelivery; the history has %d interruptions", interrupted, redelivered, n)
	}
	t.Logf("%d tries interrupted by the crashes and redelivered", interrupted)
	if missing > 0 || dupHistory > 0 || maxIDs != 1 || dupAttempts > 0 {
		t.Fatalf("missing %d, duplicated in history %d, max exec ids per step %d, redeliveries under an attempt already called %d",
			missing, dupHistory, maxIDs, dupAttempts)
	}
	if faults+random < crashes*3/4 {
		t.Fatalf("only %d crashes; the test wants at least %d", faults+random, crashes*3/4)
	}
}

// kills is the number of crashes TestKillAndResume inflicts: 15 in the default loop, 40 under
// WEND_TEST_ALL=1, or WEND_KILLS (the long run of tier T3 in docs/reliability.md uses 200 or
// more).
func kills(t *testing.T) int {
	v := os.Getenv("WEND_KILLS")
	if v == "" {
		return needs.Size("", 15, 40)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("WEND_KILLS=%q: want a positive number of crashes", v)
	}
	return n
}

// served is a `wend serve` process whose exit is watched from the start, so a wait for its
// socket can fail at once, naming the exit code and what it printed, instead of waiting out
// a deadline for a process that is gone. Wait (reaping it once) may be called any number of times.
type served struct {
	*exec.Cmd
	stderr string // file holding its stderr
	exited chan struct{}
	err    error // set before exited closes
}

// Wait waits for the process to exit and returns what exec.Cmd.Wait returned.
func (s *served) Wait() error {
	<-s.exited
	return s.err
}

// Stderr is what the process printed on stderr so far.
func (s *served) Stderr() string {
	b, _ := os.ReadFile(s.stderr)
	return string(b)
}

// startServe starts `wend serve` on db in its own process group (so a kill takes its plugins
// too), with no HTTP listener, the given failpoints and any further flags; its stderr goes to
// a file.
func startServe(t *testing.T, wend, db, failpoints string, flags ...string) *served {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "serve-*.stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() // the child has its own descriptor
	cmd := exec.Command(wend, append([]string{"serve", "--db", db, "--listen", "off"}, flags...)...)
	cmd.Env = append(os.Environ(), "WEND_FAILPOINTS="+failpoints)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{Cmd: cmd, stderr: f.Name(), exited: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		close(s.exited)
	}()
	return s
}

func count(evs []history.Event, typ history.EventType) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}
