package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/plugins"
)

type bench struct {
	dir      string
	n        int
	updateMs float64
}

// noop answers every activity at once, in process: the engine's own cost.
type noop struct{}

func (noop) Execute(context.Context, history.ActivityCall, func(history.Heartbeat)) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}

func (b *bench) path(name string) string {
	b.n++
	return filepath.Join(b.dir, fmt.Sprintf("%s-%d", name, b.n))
}

// plainUpdate is the yardstick: the mean of 500 synced bbolt Updates of 300 bytes.
func (b *bench) plainUpdate() float64 { return b.plainUpdates(500) }

func (b *bench) plainUpdates(n int) float64 {
	d, err := PlainUpdate(b.path("plain.db"), n, 300)
	if err != nil {
		fail(err)
	}
	return float64(d) / float64(time.Millisecond)
}

// workflow writes a spec file and returns its path.
func (b *bench) workflow(name, body string) string {
	return writeWorkflow(b.path(name)+".wend.yaml", name, body)
}

func writeWorkflow(p, name, body string) string {
	if err := os.WriteFile(p, []byte("wend: v1\nname: "+name+"\n"+body), 0o644); err != nil {
		fail(err)
	}
	return p
}

// pluginFlows are the bodies of the three workloads with the example plugin at bin: 200
// sequential echo steps, a for_each of concurrency 200 over input.items, and 3 sequential
// steps. The plugin and process workloads run the same ones.
func pluginFlows(bin string) (seq, fan, three string) {
	decl := fmt.Sprintf("plugins: {p: %q}\n", bin)
	seq = decl + strings.TrimPrefix(seqSteps(200), "plugins: {p: ./p}\n")
	fan = decl + "steps:\n  - for_each: \"${{ input.items }}\"\n    concurrency: 200\n    steps: [{activity: p.echo, with: \"${{ item }}\"}]\n"
	three = decl + strings.TrimPrefix(seqSteps(3), "plugins: {p: ./p}\n")
	return seq, fan, three
}

// fanInput is the for_each workload's input: 200 items.
func fanInput() string {
	in, _ := json.Marshal(map[string]any{"items": make([]int, 200)})
	return string(in)
}

func seqSteps(n int) string {
	var s strings.Builder
	s.WriteString("plugins: {p: ./p}\nsteps:\n")
	for i := range n {
		fmt.Fprintf(&s, "  - {id: s%d, activity: p.echo, with: {i: %d}}\n", i, i)
	}
	return s.String()
}

type rig struct {
	store *boltstore.Store
	eng   *engine.Engine
}

func (b *bench) rig(db string, acts engine.Activities) *rig {
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		fail(err)
	}
	return &rig{store: st, eng: engine.New(engine.Options{Store: st, Activities: acts, MaxActivities: 512})}
}

func (r *rig) close() { r.eng.Close(); r.store.Close() }

func (r *rig) run(file, id string, input string) history.Run {
	rec, _ := r.runTimed(file, id, input)
	return rec
}

// runTimed runs like run and also returns how long the run took after Start returned: the
// steps alone, without loading the spec and committing the start.
func (r *rig) runTimed(file, id string, input string) (history.Run, time.Duration) {
	src, err := os.ReadFile(file)
	if err != nil {
		fail(err)
	}
	if _, _, err := r.eng.Start(context.Background(), engine.StartRequest{WorkflowID: id, SpecFile: file, Source: string(src), Input: json.RawMessage(input)}); err != nil {
		fail(err)
	}
	started := time.Now()
	rec, err := r.eng.WaitClosed(context.Background(), id)
	if err != nil {
		fail(err)
	}
	steps := time.Since(started)
	if rec.Status != history.StatusCompleted {
		fail(fmt.Errorf("%s ended %s", id, rec.Status))
	}
	return rec, steps
}

// sequential: a 1,000-step workflow of no-op activities; engine time per step against one
// plain bbolt Update (target: at most 1.5). A step's time is the run's time after Start
// returned (1,000 steps, 1,000 commits) over 1,000; starting the run (loading and checking the
// 1,000-step spec, about 50 ms here, and the first commit) is reported apart, as start_ms.
// Fsync latency here drifts by several times within a minute, so each of 9 rounds measures the
// yardstick right before and right after its run, and the figure is the median of the rounds'
// ratios.
func (b *bench) sequential() {
	const steps, rounds = 1000, 9
	f := b.workflow("seq", seqSteps(steps))
	var ratios, perSteps, starts, cpus []float64
	var commits, txs, events uint64
	for i := range rounds {
		before := b.plainUpdates(200)
		r := b.rig(b.path("seq.db"), noop{})
		start, cpu := time.Now(), cpuTime()
		rec, took := r.runTimed(f, fmt.Sprintf("seq%d", i), "null")
		total := time.Since(start)
		cpus = append(cpus, float64(cpuTime()-cpu)/float64(time.Millisecond)/steps)
		st := r.store.Stats()
		r.close()
		upd := (before + b.plainUpdates(200)) / 2
		perStep := float64(took) / float64(time.Millisecond) / steps
		ratios, perSteps = append(ratios, perStep/upd), append(perSteps, perStep)
		starts = append(starts, float64(total-took)/float64(time.Millisecond))
		commits, txs, events = st.Commits, st.Transactions, rec.LastSeq
	}
	emit("sequential_1000_noop", "steps", steps, "rounds", rounds,
		"updates_per_step", round(medianOf(ratios)), "updates_per_step_each", roundAll(ratios),
		"ms_per_step", round(medianOf(perSteps)), "ms_per_step_each", roundAll(perSteps),
		"cpu_ms_per_step", round(medianOf(cpus)), "start_ms", round(medianOf(starts)), "commits", commits, "transactions", txs, "events", events)
}

// sequentialPlugin is sequential on the real Go example plugin: the same 1,000 steps, each an
// echo call. Beside each run it times the bare durable loop, 200 iterations before the run and
// 200 after: a plain synced Update, then the same echo through the host, no engine. That loop
// is the floor of any engine that makes a step durable before it calls the plugin, and it
// prices the Update and the call as they cost in that position: here a call right after an
// fsync costs 1.6-1.9 times one made back to back, and an Update right after a call more than
// one after another Update (README, Performance). So the engine's
// overhead per step, in commits, is (step - loop's call) / loop's Update: the same as the
// in-process figure, which is step / Update. overhead_vs_hot_call is the older, cruder figure:
// step less a back-to-back call, over the yardstick taken apart from any call.
func (b *bench) sequentialPlugin() {
	const steps, rounds, bare = 1000, 7, 200
	bin := b.buildDemo()
	host := &hostActs{bin: bin}
	defer host.close()
	decl := fmt.Sprintf("plugins: {p: %q}\n", bin)
	f := b.workflow("pseq1000", decl+strings.TrimPrefix(seqSteps(steps), "plugins: {p: ./p}\n"))
	var ratios, crude, perSteps, loopUpds, loopCalls, hot []float64
	for i := range rounds {
		before := b.plainUpdates(200)
		ds := make([]float64, 0, bare)
		for range bare {
			ds = append(ds, float64(host.echo())/float64(time.Millisecond))
		}
		var upd, calls time.Duration
		b.bareLoop(bare, host.echo, &upd, &calls)
		r := b.rig(b.path("pseq.db"), host)
		_, took := r.runTimed(f, fmt.Sprintf("pseq%d", i), "null")
		r.close()
		b.bareLoop(bare, host.echo, &upd, &calls)
		yardstick := (before + b.plainUpdates(200)) / 2
		perStep := float64(took) / float64(time.Millisecond) / steps
		loopUpd := float64(upd) / float64(time.Millisecond) / (2 * bare)
		loopCall := float64(calls) / float64(time.Millisecond) / (2 * bare)
		ratios, crude = append(ratios, (perStep-loopCall)/loopUpd), append(crude, (perStep-medianOf(ds))/yardstick)
		perSteps, loopUpds, loopCalls, hot = append(perSteps, perStep), append(loopUpds, loopUpd), append(loopCalls, loopCall), append(hot, medianOf(ds))
	}
	emit("sequential_1000_go_plugin", "steps", steps, "rounds", rounds,
		"overhead_updates_per_step", round(medianOf(ratios)), "overhead_updates_per_step_each", roundAll(ratios),
		"ms_per_step", round(medianOf(perSteps)), "ms_per_step_each", roundAll(perSteps),
		"loop_update_ms", round(medianOf(loopUpds)), "loop_call_ms", round(medianOf(loopCalls)),
		"call_back_to_back_ms", round(medianOf(hot)), "overhead_vs_hot_call", round(medianOf(crude)),
		"note", "overhead = (step - the bare loop's call) / the bare loop's Update; the loop is a plain synced Update then the same call, 200 times before and 200 after each run")
}

// bareLoop runs n iterations of the bare durable loop, a plain synced Update and then a call,
// and adds up the Updates' and the calls' time.
func (b *bench) bareLoop(n int, call func() time.Duration, upd, calls *time.Duration) {
	plain, err := OpenPlain(b.path("bare.db"))
	if err != nil {
		fail(err)
	}
	defer plain.Close()
	val := make([]byte, 300)
	for range n {
		start := time.Now()
		if err := plain.Update(val); err != nil {
			fail(err)
		}
		*upd += time.Since(start)
		*calls += call()
	}
}

// buildDemo builds the Go example plugin into the bench's folder.
func (b *bench) buildDemo() string {
	bin := b.path("demo")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/wendflow/wend/examples/plugins/demo").CombinedOutput(); err != nil {
		fail(fmt.Errorf("build plugin: %v\n%s", err, out))
	}
	return bin
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func roundAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = round(x)
	}
	return out
}

// concurrent: 200 runs of 20 steps started together; steps per second (target over 5,000).
func (b *bench) concurrent() {
	const runs, steps = 200, 20
	f := b.workflow("conc", seqSteps(steps))
	r := b.rig(b.path("conc.db"), noop{})
	defer r.close()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() { defer wg.Done(); r.run(f, fmt.Sprintf("c%d", i), "null") }()
	}
	wg.Wait()
	took := time.Since(start)
	st := r.store.Stats()
	emit("concurrent_200x20_noop", "runs", runs, "steps", runs*steps, "total_ms", ms(took),
		"steps_per_s", int(float64(runs*steps)/took.Seconds()), "commits", st.Commits, "transactions", st.Transactions,
		"commits_per_tx", round(float64(st.Commits)/float64(max(st.Transactions, 1))))
}

// forEach: 1,000 and 10,000 items with concurrency 100; time ratio (target 10x items <= 12x
// time) and peak RSS (target under 200 MB).
func (b *bench) forEach() {
	body := "plugins: {p: ./p}\nsteps:\n  - id: each\n    for_each: \"${{ input.items }}\"\n    concurrency: 100\n    steps: [{activity: p.echo, with: \"${{ item }}\"}]\noutput: \"${{ len(steps.each.output) }}\"\n"
	f := b.workflow("each", body)
	var took [2]time.Duration
	var txs [2]uint64
	for i, n := range []int{1000, 10000} {
		items := make([]int, n)
		for j := range items {
			items[j] = j
		}
		in, _ := json.Marshal(map[string]any{"items": items})
		r := b.rig(b.path("each.db"), noop{})
		start := time.Now()
		r.run(f, fmt.Sprintf("each%d", n), string(in))
		took[i] = time.Since(start)
		txs[i] = r.store.Stats().Transactions
		r.close()
	}
	emit("for_each_concurrency_100", "items_1000_ms", ms(took[0]), "items_10000_ms", ms(took[1]),
		"transactions_1000", txs[0], "transactions_10000", txs[1],
		"time_ratio_10x_items", round(float64(took[1])/float64(took[0])), "peak_rss_mb", peakRSSMB())
}

// resume: Recover a run whose history holds 10,000 events (target under 300 ms).
func (b *bench) resume() {
	const steps = 4999 // 1 start + 2 per step + a waiting step's events ~ 10,000
	f := b.workflow("resume", seqSteps(steps)+"  - wait_for_signal: never\n")
	db := b.path("resume.db")
	r := b.rig(db, noop{})
	src, _ := os.ReadFile(f)
	if _, _, err := r.eng.Start(context.Background(), engine.StartRequest{WorkflowID: "big", SpecFile: f, Source: string(src)}); err != nil {
		fail(err)
	}
	for {
		runs, _ := r.store.Runs(history.RunFilter{WorkflowID: "big"})
		if len(runs) == 1 && runs[0].LastSeq >= 2*steps+1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.close()
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		fail(err)
	}
	eng := engine.New(engine.Options{Store: st, Activities: noop{}})
	start := time.Now()
	rep, err := eng.Recover(context.Background())
	took := time.Since(start)
	if err != nil || rep.Resumed != 1 {
		fail(fmt.Errorf("recover: %+v %v", rep, err))
	}
	runs, _ := st.Runs(history.RunFilter{WorkflowID: "big"})
	eng.Close()
	st.Close()
	emit("resume_10000_events", "events", runs[0].LastSeq, "recover_ms", ms(took))
}

// plugin: the three workloads users compare engines on, through the example Go plugin.
func (b *bench) plugin() {
	bin := b.buildDemo()
	host := &hostActs{bin: bin}
	defer host.close()
	seqBody, fanBody, threeBody := pluginFlows(bin)
	seq := b.workflow("pseq", seqBody)
	fan := b.workflow("pfan", fanBody)
	three := b.workflow("pthree", threeBody)

	r := b.rig(b.path("plugin.db"), host)
	defer r.close()
	r.run(three, "warmup", "null") // start the plugin process once, as a long-running engine has
	start := time.Now()
	r.run(seq, "pseq", "null")
	seqT := time.Since(start)
	start = time.Now()
	r.run(fan, "pfan", fanInput())
	fanT := time.Since(start)
	start = time.Now()
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		go func() { defer wg.Done(); r.run(three, fmt.Sprintf("t%d", i), "null") }()
	}
	wg.Wait()
	threeT := time.Since(start)
	emit("go_plugin_workloads", "sequential_200_ms", ms(seqT), "parallel_200_ms", ms(fanT), "runs_100x3_ms", ms(threeT),
		"note", "one engine process with the plugin already started")
}

// hostActs routes every call to one plugin host of the example plugin.
type hostActs struct {
	bin  string
	once sync.Once
	h    *plugins.Host
	err  error
}

func (a *hostActs) Execute(ctx context.Context, c history.ActivityCall, hb func(history.Heartbeat)) (json.RawMessage, error) {
	a.once.Do(func() {
		a.h, a.err = plugins.New([]plugins.Config{{Name: c.Plugin, Command: []string{a.bin}}}, plugins.Options{})
	})
	if a.err != nil {
		return nil, a.err
	}
	return a.h.Execute(ctx, c, hb)
}

// echo makes one echo call and returns how long it took.
func (a *hostActs) echo() time.Duration {
	start := time.Now()
	call := history.ActivityCall{Plugin: "p", Activity: "echo", Input: json.RawMessage(`{"i":1}`)}
	if _, err := a.Execute(context.Background(), call, nil); err != nil {
		fail(err)
	}
	return time.Since(start)
}

func (a *hostActs) close() {
	if a.h != nil {
		a.h.Close()
	}
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func peakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return round(float64(ru.Maxrss) / 1024)
}
