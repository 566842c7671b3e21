package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/wendflow/wend/history"
)

var (
	shardItems = flag.Int("shard-items", 1_000_000, "shard: items of the sharded for_each")
	shardSize  = flag.Int("shard-size", 10_000, "shard: items per shard child run (shard: N)")
	shardConc  = flag.Int("shard-concurrency", 200, "shard: items in flight in each child (concurrency)")
)

// shard runs a for_each past the history limit: a for_each over -shard-items
// no-op activities with shard: -shard-size, through the engine on bbolt, and reports the
// wall time, the process's peak RSS (getrusage's maxrss), the parent's history length and the children.
// The items are zeros in the input (1,000,000 of them is 2 MB, under the 2 MiB input limit);
// the body reads only `index`.
func (b *bench) shard() {
	f := b.workflow("shard", fmt.Sprintf("plugins: {p: ./p}\noutput: \"${{ len(steps.loop.output) }}\"\nsteps:\n"+
		"  - id: loop\n    for_each: \"${{ input.items }}\"\n    shard: %d\n    concurrency: %d\n"+
		"    steps: [{activity: p.noop, with: \"${{ index }}\"}]\n", *shardSize, *shardConc))
	in, _ := json.Marshal(map[string]any{"items": make([]int, *shardItems)})
	db := b.path("shard.db")
	r := b.rig(db, noop{})
	runtime.GC()
	before := peakRSSMB()
	start := time.Now()
	rec := r.run(f, "shard", string(in))
	wall := time.Since(start)
	peak := peakRSSMB()
	anon, file := rssParts()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	children, completed, childEvents := (*shardItems+*shardSize-1) / *shardSize, 0, uint64(0)
	for k := range children {
		kids, err := r.store.Runs(history.RunFilter{WorkflowID: fmt.Sprintf("shard/%s/steps[0]#shard%d", rec.RunID, k)})
		if err != nil {
			fail(err)
		}
		if len(kids) == 1 && kids[0].Status == history.StatusCompleted {
			completed++
			childEvents = max(childEvents, kids[0].LastSeq)
		}
	}
	evs, err := r.store.Events(rec.RunID, rec.LastSeq-1)
	if err != nil || len(evs) == 0 {
		fail(fmt.Errorf("read the parent's last event: %v", err))
	}
	c, _ := history.DataOf[history.Closed](evs[len(evs)-1])
	r.close()
	dbMB := -1.0
	if fi, err := os.Stat(db); err == nil {
		dbMB = round(float64(fi.Size()) / (1 << 20))
	}
	if string(c.Output) != strconv.Itoa(*shardItems) {
		fail(fmt.Errorf("the for_each's output has %s items, want %d", c.Output, *shardItems))
	}
	emit("shard_foreach_noop", "items", *shardItems, "shard", *shardSize, "concurrency", *shardConc,
		"wall_s", round(wall.Seconds()), "items_per_s", round(float64(*shardItems)/wall.Seconds()),
		"peak_rss_mb", peak, "peak_rss_mb_before_run", before,
		"rss_anon_mb_at_end", anon, "rss_file_mb_at_end", file, "db_file_mb", dbMB, "go_heap_sys_mb", round(float64(ms.HeapSys)/(1<<20)),
		"parent_events", rec.LastSeq, "children", children, "children_completed", completed, "child_events_max", childEvents)
}

// rssParts is the resident set now, split into anonymous memory (the Go heap, stacks) and
// file-backed pages (bbolt's memory map of its file), in MB; -1 where /proc is missing.
func rssParts() (anon, file float64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1, -1
	}
	anon, file = -1, -1
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "RssAnon:":
			anon = round(kb / 1024)
		case "RssFile:":
			file = round(kb / 1024)
		}
	}
	return anon, file
}
