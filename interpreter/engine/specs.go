package engine

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// specCache holds the parsed specs runs are replayed with, by file and text: runs of one
// workflow share one *spec.Workflow (the interpreter only reads it, and compiled expressions
// run concurrently), so a restart over many open runs, or the rebuild of an evicted run
// (idle.go), parses and checks each spec text once instead of once a run.
type specCache struct {
	mu sync.Mutex
	m  map[string]cachedSpec
	// byText finds a spec by file and by its text as a WorkflowStarted payload holds it
	// (JSON-quoted), for started.
	byText map[textKey]textEntry
}

type textKey struct{ file, quoted string }

// cachedSpec is a parsed spec and its text's hash, which the records of its runs share.
type cachedSpec struct {
	w      *spec.Workflow
	sha256 string
}

type textEntry struct {
	w      *spec.Workflow
	source string // the text, unquoted
}

// maxCachedSpecs bounds the cache; past it the cache starts afresh (distinct spec texts
// are few: one per version of each workflow file with open runs).
const maxCachedSpecs = 1024

func (c *specCache) load(st history.Started) (*spec.Workflow, error) {
	sum := sha([]byte(st.SpecSource))
	key := specKey(st.SpecFile, sum)
	if e := c.get(key); e.w != nil {
		return e.w, nil
	}
	w, ds := (&spec.Loader{SkipChildren: true}).Load(st.SpecFile, []byte(st.SpecSource))
	if ds.HasErrors() {
		return nil, fmt.Errorf("recorded spec no longer loads (was it written by a newer wend?):\n%s", ds.Error())
	}
	c.put(key, cachedSpec{w, sum})
	return w, nil
}

func (c *specCache) put(key string, e cachedSpec) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedSpecs {
		c.m, c.byText = map[string]cachedSpec{}, nil
	}
	c.m[key] = e
	c.mu.Unlock()
}

// forStart returns the parsed spec a new run of file's text sha256 starts with, loaded and
// checked once per text: a server starting one workflow again and again parsed it at every
// start (docs/performance.md, "Starting a run"). A load depends only on the file's name and
// text, but for its run_workflow targets, which are other files that may have changed since:
// a spec with any is loaded afresh at every start, so its children are checked as they are now.
// shared is sha256 as the cache holds it, for the new run's record: the open runs of a text
// share one copy of its hash.
func (c *specCache) forStart(file, source, sha256 string) (w *spec.Workflow, shared string, ds spec.Diagnostics) {
	key := specKey(file, sha256)
	if e := c.get(key); e.w != nil && !hasChildren(e.w) {
		return e.w, e.sha256, nil
	}
	w, ds = (&spec.Loader{}).Load(file, []byte(source))
	if !ds.HasErrors() {
		c.put(key, cachedSpec{w, sha256})
	}
	return w, sha256, ds
}

func hasChildren(w *spec.Workflow) bool {
	found := false
	w.Walk(func(s *spec.Step) { found = found || s.Kind == spec.KindRunWorkflow })
	return found
}

// started decodes a run's WorkflowStarted payload, as history.DataOf does, and finds the
// run's parsed spec. The spec text, most of the payload, is looked up as the payload holds
// it: for a spec already cached, rebuilding a run does not unquote and hash the text again
// (decoding the payload took half the time, and the hash more for a long spec).
func (c *specCache) started(ev history.Event) (history.Started, *spec.Workflow, error) {
	var p struct {
		history.Started
		SpecSource json.RawMessage `json:"spec_source"` // shadows Started's: kept quoted
	}
	if len(ev.Data) > 0 {
		if err := json.Unmarshal(ev.Data, &p); err != nil {
			return history.Started{}, nil, fmt.Errorf("%s event %d: %w", ev.Type, ev.Seq, err)
		}
	}
	st := p.Started
	key := textKey{st.SpecFile, string(p.SpecSource)}
	c.mu.Lock()
	e, ok := c.byText[key]
	c.mu.Unlock()
	if ok {
		st.SpecSource = e.source
		return st, e.w, nil
	}
	if len(p.SpecSource) > 0 {
		if err := json.Unmarshal(p.SpecSource, &st.SpecSource); err != nil {
			return history.Started{}, nil, fmt.Errorf("%s event %d: %w", ev.Type, ev.Seq, err)
		}
	}
	w, err := c.load(st)
	if err != nil {
		return st, nil, err
	}
	c.mu.Lock()
	if c.byText == nil || len(c.byText) >= maxCachedSpecs {
		c.byText = map[textKey]textEntry{}
	}
	c.byText[key] = textEntry{w: w, source: st.SpecSource}
	c.mu.Unlock()
	return st, w, nil
}

// cached returns the parsed spec of a run whose recorded file and text hash are given, if
// the cache holds it (as load would key it), without reading the run's history.
func (c *specCache) cached(file, sha256 string) *spec.Workflow { return c.get(specKey(file, sha256)).w }

func specKey(file, sha256 string) string { return file + "\x00" + sha256 }

func (c *specCache) get(key string) cachedSpec {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

// replayWith replays a run's events into a fresh state machine over w. decoded says st was
// decoded from evs[0] (the state machine then does not decode it again).
func replayWith(w *spec.Workflow, st history.Started, evs []history.Event, decoded bool) (*liveRun, error) {
	in := interpreter.New(w, st)
	replay := in.Replay
	if decoded {
		replay = in.ReplayDecoded
	}
	if err := replay(evs); err != nil {
		return nil, err
	}
	return &liveRun{dir: filepath.Dir(st.SpecFile), workflowID: st.WorkflowID, w: w, interp: in}, nil
}
