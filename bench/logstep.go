package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/interpreter/engine"
)

// logStep prices a sequential step on the Go example plugin with the store's write-ahead log
// (the default; boltstore.Options.NoLog turns it off) against two floors, and the same step
// without the log against its floor, a synced bbolt Update plus one call. The target's floor is one
// synced append plus one plugin call (a step at most 1.2 times it); the stricter floor is one
// synced 512-byte write into a preallocated file plus one call, which is what the log's append is
// since its segments are preallocated: a sync that does not grow the file is cheaper. Each of 7
// rounds runs, back to back, the append loop, the preallocated loop, a 1,000-step run with the
// log, a 1,000-step run without it, the Update loop, and the append and preallocated loops again
// (200 iterations each loop), so every ratio divides figures of one round.
//
// The run with the log is timed twice on the same store: first on a new store (cold), then
// again once the store has passed its first checkpoint (warm, the figure the ratios use), as a
// store is for the rest of its life. On ext4 without a journal and a kernel with multigrain
// timestamps (6.13 on), a stat of the log's segment between its writes makes each log sync
// write the segment's inode too (docs/performance.md).
func (b *bench) logStep() {
	const steps, rounds, bare = 1000, 7, 200
	bin := b.buildDemo()
	host := &hostActs{bin: bin}
	defer host.close()
	host.echo() // the plugin started, as in the runs
	decl := fmt.Sprintf("plugins: {p: %q}\n", bin)
	f := b.workflow("lseq1000", decl+strings.TrimPrefix(seqSteps(steps), "plugins: {p: ./p}\n"))
	var coldSteps, logSteps, boltSteps, appendFloors, preFloors, updateFloors, logRatios, preRatios, boltRatios, logVsBolt []float64
	for i := range rounds {
		var app, appCalls, pre, preCalls time.Duration
		b.appendLoop(bare, host.echo, false, &app, &appCalls)
		b.appendLoop(bare, host.echo, true, &pre, &preCalls)
		logRuns := b.runSteps(f, fmt.Sprintf("log%d", i), host, boltstore.Options{}, steps, 2)
		coldSteps = append(coldSteps, logRuns[0])
		logStep := logRuns[1]
		boltStep := b.runSteps(f, fmt.Sprintf("bolt%d", i), host, boltstore.Options{NoLog: true}, steps, 1)[0]
		var upd, updCalls time.Duration
		b.bareLoop(bare, host.echo, &upd, &updCalls)
		b.appendLoop(bare, host.echo, false, &app, &appCalls)
		b.appendLoop(bare, host.echo, true, &pre, &preCalls)
		appendFloor := float64(app+appCalls) / float64(time.Millisecond) / (2 * bare)
		preFloor := float64(pre+preCalls) / float64(time.Millisecond) / (2 * bare)
		updateFloor := float64(upd+updCalls) / float64(time.Millisecond) / bare
		logSteps, boltSteps = append(logSteps, logStep), append(boltSteps, boltStep)
		appendFloors, preFloors, updateFloors = append(appendFloors, appendFloor), append(preFloors, preFloor), append(updateFloors, updateFloor)
		logRatios, boltRatios = append(logRatios, logStep/appendFloor), append(boltRatios, boltStep/updateFloor)
		preRatios = append(preRatios, logStep/preFloor)
		logVsBolt = append(logVsBolt, logStep/boltStep)
	}
	emit("sequential_1000_go_plugin_log", "steps", steps, "rounds", rounds,
		"log_step_ms", round(medianOf(logSteps)), "log_step_ms_each", roundAll(logSteps),
		"cold_log_step_ms", round(medianOf(coldSteps)), "cold_log_step_ms_each", roundAll(coldSteps),
		"append_plus_call_ms", round(medianOf(appendFloors)),
		"log_step_over_append_plus_call", round(medianOf(logRatios)), "log_step_over_append_plus_call_each", roundAll(logRatios),
		"prealloc_write_plus_call_ms", round(medianOf(preFloors)),
		"log_step_over_prealloc_write_plus_call", round(medianOf(preRatios)), "log_step_over_prealloc_write_plus_call_each", roundAll(preRatios),
		"bbolt_step_ms", round(medianOf(boltSteps)), "update_plus_call_ms", round(medianOf(updateFloors)),
		"bbolt_step_over_update_plus_call", round(medianOf(boltRatios)), "bbolt_step_over_update_plus_call_each", roundAll(boltRatios),
		"log_step_over_bbolt_step", round(medianOf(logVsBolt)), "log_step_over_bbolt_step_each", roundAll(logVsBolt),
		"note", "per round: 200 x (synced 512-byte append + echo), 200 x (synced 512-byte write into a preallocated file + echo), 1,000 steps with the log on a new store (cold) and 1,000 more on it (warm: past its first checkpoint; log_step_ms), 1,000 steps with Options.NoLog, 200 x (synced bbolt Update + echo), then the append and preallocated loops again; ratios within a round, medians over rounds; the target's floor is append_plus_call, the stricter one prealloc_write_plus_call")
}

// runSteps runs the sequential workflow f n times, one after the other, on a fresh store with
// opts and returns each run's ms per step.
func (b *bench) runSteps(f, id string, host *hostActs, opts boltstore.Options, steps, n int) []float64 {
	st, err := boltstore.Open(b.path(id+".db"), opts)
	if err != nil {
		fail(err)
	}
	r := &rig{store: st, eng: engine.New(engine.Options{Store: st, Activities: host, MaxActivities: 512})}
	var out []float64
	for k := range n {
		_, took := r.runTimed(f, fmt.Sprintf("%s-%d", id, k), "null")
		out = append(out, float64(took)/float64(time.Millisecond)/float64(steps))
	}
	r.close()
	return out
}

// appendLoop runs n iterations of a bare durable loop, a synced 512-byte write and then a call,
// and adds up the writes' and the calls' time: appends to a growing file (the target's floor), or
// with prealloc writes into a file preallocated as the log's segments are (the stricter floor).
func (b *bench) appendLoop(n int, call func() time.Duration, prealloc bool, app, calls *time.Duration) {
	var l *PlainLog
	var err error
	if prealloc {
		l, err = OpenPlainLogPreallocated(b.path("bare-prealloc.log"), boltstore.DefaultLogSegmentSize)
	} else {
		l, err = OpenPlainLog(b.path("bare.log"))
	}
	if err != nil {
		fail(err)
	}
	defer l.Close()
	val := make([]byte, 512)
	for range n {
		start := time.Now()
		if err := l.Append(val); err != nil {
			fail(err)
		}
		*app += time.Since(start)
		*calls += call()
	}
}
