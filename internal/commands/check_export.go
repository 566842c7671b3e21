package commands

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/internal/inputfile"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/schemas"
	"github.com/wendflow/wend/spec"
)

// exportVerdict is what wend check --export found in a saved export.
type exportVerdict struct {
	Problems []string `json:"problems"`
	RunID    string   `json:"run_id"`
	Events   int      `json:"events"`
	Replayed bool     `json:"replayed"` // the history was replayed through the interpreter
}

// maxExportBytes bounds an export file `wend check --export` reads: a run's history is at most
// interpreter.MaxHistoryBytes, and its export adds the spec sources and a view of the run.
const maxExportBytes = 256 << 20

// checkExport verifies a saved history export: the schema, the integrity checksum over its
// events, their seqs contiguous from 1 and the history's own rules (history.Check), and a
// replay through the interpreter when the spec source is in it. The error is for a file that
// cannot be read.
func checkExport(path string) (exportVerdict, error) {
	v := exportVerdict{Problems: []string{}}
	b, err := inputfile.Read(path, maxExportBytes)
	if err != nil {
		return v, err
	}
	add := func(format string, args ...any) { v.Problems = append(v.Problems, fmt.Sprintf(format, args...)) }
	var raw any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		add("%s: not JSON: %v", path, err)
		return v, nil
	}
	sch, err := spec.CompileJSONSchema(schemas.HistoryExport)
	if err != nil {
		return v, fmt.Errorf("compile the export schema: %w", err)
	}
	if err := sch.Validate(raw); err != nil {
		add("%s: does not match schemas/history-export.schema.json: %v", path, err)
	}
	var doc export.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		add("%s: %v", path, err)
		return v, nil
	}
	v.RunID, v.Events = doc.Workflow.RunID, len(doc.HistoryEvents)
	evs := make([]history.Event, len(doc.HistoryEvents))
	for i, e := range doc.HistoryEvents {
		evs[i] = history.Event{Seq: e.Seq, Type: history.EventType(e.Type), Time: e.Time, Step: e.Step,
			ActivityExecutionID: e.ActivityExecutionID, Attempt: e.Attempt, Data: e.Data}
	}
	in := doc.Integrity
	if in == nil {
		add("no integrity section (exported by a wend before it was added): its events cannot be verified")
	} else {
		sum, err := export.EventsSHA256(doc.HistoryEvents)
		switch {
		case err != nil:
			add("history_events: %v", err)
		case sum != in.EventsSHA256:
			add("history_events do not match integrity.events_sha256: the export was altered or damaged after it was made")
		}
		if in.EventCount != len(evs) {
			add("integrity.event_count is %d, the export holds %d events", in.EventCount, len(evs))
		}
		if len(evs) > 0 && in.LastSeq != evs[len(evs)-1].Seq {
			add("integrity.last_seq is %d, the last event is %d", in.LastSeq, evs[len(evs)-1].Seq)
		}
		if !in.Complete {
			add("integrity.complete is false: the history was exported with events missing")
		}
	}
	last := uint64(0)
	if len(evs) > 0 {
		last = evs[len(evs)-1].Seq
	}
	run := history.Run{RunID: doc.Workflow.RunID, Status: doc.Workflow.Status, LastSeq: last}
	for _, p := range history.Check(run, evs) {
		add("%s", p)
	}
	if len(v.Problems) > 0 {
		return v, nil // a replay would only repeat what is wrong
	}
	switch err := engine.Replay(evs); {
	case errors.Is(err, engine.ErrNoSpecSource):
	case err != nil:
		add("replay through the interpreter: %v", err)
	default:
		v.Replayed = true
	}
	return v, nil
}
