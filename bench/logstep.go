package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/interpreter/engine"
)

// logStep prices a sequential step on the Go example plugin with the store's write-ahead log
// (the default; boltstore.Options.NoLog turns it off) against its floor, one synced append plus one plugin call, and the
// same step without the log against its floor, a synced bbolt Update plus one call (issue 18:
// a step at most 1.2 times the append and the call). Each of 7 rounds runs, back to back, the
// append loop, a 1,000-step run with the log, a 1,000-step run without it, the Update loop, and
// the append loop again (200 iterations each loop), so every ratio divides figures of one round.
func (b *bench) logStep() {
	const steps, rounds, bare = 1000, 7, 200
	bin := b.buildDemo()
	host := &hostActs{bin: bin}
	defer host.close()
	host.echo() // the plugin started, as in the runs
	decl := fmt.Sprintf("plugins: {p: %q}\n", bin)
	f := b.workflow("lseq1000", decl+strings.TrimPrefix(seqSteps(steps), "plugins: {p: ./p}\n"))
	var logSteps, boltSteps, appendFloors, updateFloors, logRatios, boltRatios, logVsBolt []float64
	for i := range rounds {
		var app, appCalls time.Duration
		b.appendLoop(bare, host.echo, &app, &appCalls)
		logStep := b.runSteps(f, fmt.Sprintf("log%d", i), host, boltstore.Options{}, steps)
		boltStep := b.runSteps(f, fmt.Sprintf("bolt%d", i), host, boltstore.Options{NoLog: true}, steps)
		var upd, updCalls time.Duration
		b.bareLoop(bare, host.echo, &upd, &updCalls)
		b.appendLoop(bare, host.echo, &app, &appCalls)
		appendFloor := float64(app+appCalls) / float64(time.Millisecond) / (2 * bare)
		updateFloor := float64(upd+updCalls) / float64(time.Millisecond) / bare
		logSteps, boltSteps = append(logSteps, logStep), append(boltSteps, boltStep)
		appendFloors, updateFloors = append(appendFloors, appendFloor), append(updateFloors, updateFloor)
		logRatios, boltRatios = append(logRatios, logStep/appendFloor), append(boltRatios, boltStep/updateFloor)
		logVsBolt = append(logVsBolt, logStep/boltStep)
	}
	emit("sequential_1000_go_plugin_log", "steps", steps, "rounds", rounds,
		"log_step_ms", round(medianOf(logSteps)), "log_step_ms_each", roundAll(logSteps),
		"append_plus_call_ms", round(medianOf(appendFloors)),
		"log_step_over_append_plus_call", round(medianOf(logRatios)), "log_step_over_append_plus_call_each", roundAll(logRatios),
		"bbolt_step_ms", round(medianOf(boltSteps)), "update_plus_call_ms", round(medianOf(updateFloors)),
		"bbolt_step_over_update_plus_call", round(medianOf(boltRatios)), "bbolt_step_over_update_plus_call_each", roundAll(boltRatios),
		"log_step_over_bbolt_step", round(medianOf(logVsBolt)), "log_step_over_bbolt_step_each", roundAll(logVsBolt),
		"note", "per round: 200 x (synced 512-byte append + echo), 1,000 steps with the log, 1,000 steps with Options.NoLog, 200 x (synced bbolt Update + echo), 200 x (append + echo); ratios within a round, medians over rounds")
}

// runSteps runs the sequential workflow f on a fresh store with opts and returns ms per step.
func (b *bench) runSteps(f, id string, host *hostActs, opts boltstore.Options, steps int) float64 {
	st, err := boltstore.Open(b.path(id+".db"), opts)
	if err != nil {
		fail(err)
	}
	r := &rig{store: st, eng: engine.New(engine.Options{Store: st, Activities: host, MaxActivities: 512})}
	_, took := r.runTimed(f, id, "null")
	r.close()
	return float64(took) / float64(time.Millisecond) / float64(steps)
}

// appendLoop runs n iterations of the log's bare durable loop, a synced 512-byte append and then
// a call, and adds up the appends' and the calls' time.
func (b *bench) appendLoop(n int, call func() time.Duration, app, calls *time.Duration) {
	l, err := boltstore.OpenPlainLog(b.path("bare.log"))
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
