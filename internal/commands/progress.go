package commands

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wendflow/wend/internal/termtext"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/internal/tracecontext"
	"github.com/wendflow/wend/runview"
)

// progress prints a line per step event of the runs a command follows, on stderr. The
// activities of a for_each's items are counted instead: on a terminal one line per loop with
// items done/total, running, failed, rate and time left, rewritten in place; off a terminal
// that line every summaryEvery and when the loop ends, so a 300-item loop is a few lines, not
// 600. Failures keep their own lines.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	start time.Time
	now   func() time.Time // the clock; tests set a fake one
	quiet bool

	runs    map[string]*runNames  // run id -> what names its steps
	loops   map[string]*loopCount // run id + "\x00" + for_each path -> its count
	order   []string              // loops keys in the order they began
	pending bool                  // a count line is on screen without its newline
	line    []byte                // printAt's buffer for a line, kept from one to the next
	// said is the failure the last line showed and saidRun its run: the next line of that run
	// with the same failure points back to it instead of repeating it.
	said, saidRun string
	specs         specsSeen // the specs of the runs it saw start, by text
	// started, when set, reads the WorkflowStarted of a run progress did not see start (one
	// resumed after a crash), so its steps keep their ids instead of their places.
	started func(runID string) (history.Started, bool)

	queue chan observed // set by background: observe queues for the printer
	// The background printer's wake-ups (background): the first event after it drained,
	// printAt events queued, and the stop.
	idle             atomic.Bool
	wake, full, stop chan struct{}
	// traces puts each run's trace id on its lines (traces exported); a run started with a
	// traceparent gets its trace id either way.
	traces bool
}

// observed is one event observe was given, and when.
type observed struct {
	run history.Run
	ev  history.Event
	at  time.Time
}

// background makes observe queue its events for a goroutine that prints them in order.
// The engine calls Observe in its commit path, before the calls the commit scheduled start,
// so `wend serve` no longer holds a sequential run's next step for decoding, formatting and
// writing the previous one's line. The printer wakes once a batch, not once an event: the
// first event that finds it idle wakes it, it lets events gather for printGather (less when
// printAt are queued), prints them through a buffer and writes that out at the batch's end,
// so a step costs the server neither a goroutine hand-off nor a write of its own. Each
// line's time is its event's arrival. stop prints what is queued and returns once
// written; call it after the engine has closed (no Observe may follow).
func (p *progress) background() (stop func()) {
	p.queue = make(chan observed, 1024)
	p.wake, p.full, p.stop = make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{})
	p.idle.Store(true)
	out := bufio.NewWriterSize(p.w, 64<<10)
	p.w = out
	done := make(chan struct{})
	drain := func() {
		for {
			select {
			case o := <-p.queue:
				p.printAt(o.run, o.ev, o.at)
			default:
				p.mu.Lock()
				out.Flush()
				p.mu.Unlock()
				return
			}
		}
	}
	go func() {
		defer close(done)
		gather := time.NewTimer(printGather)
		gather.Stop()
		for {
			select {
			case <-p.wake:
			case <-p.stop:
				drain()
				return
			}
			gather.Reset(printGather)
			select {
			case <-gather.C:
			case <-p.full:
				gather.Stop()
			case <-p.stop:
				drain()
				return
			}
			p.idle.Store(true) // an event queued from now on wakes the printer again
			drain()
		}
	}()
	return func() {
		close(p.stop)
		<-done
	}
}

// printGather is how long the background printer lets events gather once woken; printAt
// queued events start it sooner (the queue holds 1024, and a full queue holds a commit).
const (
	printGather = 20 * time.Millisecond
	printAt     = 256
)

// runNames is what progress knows of a run from its WorkflowStarted: the spec (for step ids
// and for_each totals) and the input. A run followed from the middle has none: its steps are
// named by place and its loops' totals are unknown.
type runNames struct {
	*specNames // shared by the runs of one spec text
	// input is the run's input, kept only when its spec has a for_each (a loop's total).
	input json.RawMessage
	wf    string // the workflow id, printable
	trace string // " trace_id=<hex>" when the run's lines carry its trace id, else ""

	// On a shard child: the parent's run id and the sharded for_each's path. Its items count
	// in the parent's line for that loop, their paths carrying the global index.
	shardParent, shardLoop string
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, start: time.Now(), now: time.Now}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) observe(run history.Run, ev history.Event) {
	if p.quiet {
		return
	}
	if p.queue != nil {
		p.queue <- observed{run, ev, p.now()}
		if p.idle.CompareAndSwap(true, false) {
			wakeOnce(p.wake)
		} else if len(p.queue) >= printAt {
			wakeOnce(p.full)
		}
		return
	}
	p.print(run, ev)
}

// wakeOnce leaves a token in c (capacity 1) unless one is there already.
func wakeOnce(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// print shows one event's line (or counts it in its loop's line).
func (p *progress) print(run history.Run, ev history.Event) { p.printAt(run, ev, p.now()) }

// printAt is print of an event that arrived at now.
func (p *progress) printAt(run history.Run, ev history.Event, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runs == nil {
		p.runs = map[string]*runNames{}
		p.loops = map[string]*loopCount{}
	}
	if ev.Type == history.WorkflowStarted {
		st, err := history.DataOf[history.Started](ev)
		p.runs[run.RunID] = p.namesOf(run, st, err == nil)
	}
	rn := p.runs[run.RunID]
	if rn == nil && p.started != nil {
		st, ok := p.started(run.RunID)
		rn = p.namesOf(run, st, ok)
		p.runs[run.RunID] = rn // looked up once, found or not
	}
	if rn == nil {
		rn = &runNames{specNames: noSpec}
	}
	name := func(path string) string { return runview.StepName(path, rn.ids) }
	// Ids and messages come from the history and plugins: escaped, they cannot drive the terminal.
	id := termtext.Escape(run.WorkflowID, "")
	if p.countLoop(run, rn, ev, name, now, id) {
		return
	}
	if ev.Type.Terminal() {
		p.flushLoops(run.RunID, now, id)
		p.forget(run.RunID)
	}
	said := ""
	if p.saidRun == run.RunID {
		said = p.said
	}
	line, failure := runview.EventLine(ev, name, said)
	if line == "" {
		return
	}
	if runview.Caught(ev, rn.catches) {
		line += " (caught)"
	}
	p.saidRun, p.said = run.RunID, failure
	if p.pending {
		fmt.Fprintln(p.w)
		p.pending = false
	}
	b := appendSeconds(p.line[:0], p.since(now)) // a line a step: no fmt
	b = append(append(append(append(append(append(b, "s "...), id...), ' '), termtext.Escape(line, "")...), rn.trace...), '\n')
	p.w.Write(b)
	p.line = b
}

// appendSeconds appends secs as fmt's %7.3f writes it: three decimals, padded with spaces to
// seven characters.
func appendSeconds(b []byte, secs float64) []byte {
	start := len(b)
	b = strconv.AppendFloat(b, secs, 'f', 3, 64)
	if pad := 7 - (len(b) - start); pad > 0 {
		b = append(b, "       "[:pad]...)
		copy(b[start+pad:], b[start:len(b)-pad])
		copy(b[start:start+pad], "       ")
	}
	return b
}

// namesOf is what names a run's steps, from its WorkflowStarted payload when ok.
func (p *progress) namesOf(run history.Run, st history.Started, ok bool) *runNames {
	rn := &runNames{specNames: noSpec, wf: termtext.Escape(run.WorkflowID, "")}
	if ok {
		rn.specNames = p.specs.of(st)
		if rn.loops {
			rn.input = st.Input
		}
		if p.traces || st.TraceParent != "" {
			tp, _ := tracecontext.ForRun(run.RunID, st.TraceParent)
			rn.trace = " trace_id=" + tp.TraceIDString()
		}
		if st.Shard != nil && st.ParentRunID != "" {
			rn.shardParent, rn.shardLoop = st.ParentRunID, st.Shard.Path
		}
	}
	return rn
}

// forget drops what progress keeps of a run that ended (its names and its loops' counts), so
// a long-running server keeps the runs that are open, not every run it ever saw; p.mu is held.
// An event of it that still comes (a reopened run) finds its names again through started.
func (p *progress) forget(runID string) {
	delete(p.runs, runID)
	prefix := runID + "\x00"
	p.order = slices.DeleteFunc(p.order, func(key string) bool {
		if strings.HasPrefix(key, prefix) {
			delete(p.loops, key)
			return true
		}
		return false
	})
}

func (p *progress) since(now time.Time) float64 { return now.Sub(p.start).Seconds() }

// countLoop counts an event inside a for_each item and shows the loop's line; it reports
// whether the count stands for the event (false: the event gets its own line).
func (p *progress) countLoop(run history.Run, rn *runNames, ev history.Event, name func(string) string, now time.Time, id string) bool {
	loop, after, inLoop := strings.Cut(ev.Step, "@")
	if !inLoop {
		return false
	}
	num, rest, _ := strings.Cut(after, ".")
	owner, spec, input := run.RunID, rn.w, rn.input
	if parent := p.runs[rn.shardParent]; parent != nil && loop == rn.shardLoop {
		// A shard child's items are the parent's: one line, the parent's total.
		owner, spec, input, id = rn.shardParent, parent.w, parent.input, parent.wf
	}
	key := owner + "\x00" + loop
	c := p.loops[key]
	if c == nil {
		c = newLoop(termtext.Escape(name(loop), ""), loop, spec, input)
		p.loops[key] = c
		p.order = append(p.order, key)
	}
	counted := c.count(ev, loop+"@"+num, rest, now)
	switch {
	case p.tty:
		if counted {
			fmt.Fprintf(p.w, "\r%7.3fs %s %s\x1b[K", p.since(now), id, c.text(now))
			p.pending, p.said = true, ""
		}
	case c.dirty && (c.shown.IsZero() || now.Sub(c.shown) >= summaryEvery || c.finished()):
		fmt.Fprintf(p.w, "%7.3fs %s %s\n", p.since(now), id, c.text(now))
		c.shown, c.dirty, p.said = now, false, ""
	}
	return counted
}

// flushLoops prints the last counts of a closing run's loops that changed since their last
// line (off a terminal; a terminal shows them already).
func (p *progress) flushLoops(runID string, now time.Time, id string) {
	for _, key := range p.order {
		c := p.loops[key]
		if !strings.HasPrefix(key, runID+"\x00") || !c.dirty || p.tty {
			continue
		}
		fmt.Fprintf(p.w, "%7.3fs %s %s\n", p.since(now), id, c.text(now))
		c.shown, c.dirty, p.said = now, false, ""
	}
}
