package export

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
)

// Integrity lets the reader of a saved export check it is whole and unaltered
// (wend check --export verifies it).
type Integrity struct {
	// EventCount and LastSeq describe history_events as exported.
	EventCount int    `json:"event_count"`
	LastSeq    uint64 `json:"last_seq"`
	// Complete is true when history_events runs from seq 1 to the run's last seq without a gap:
	// nothing of the history as stored was left out.
	Complete bool `json:"complete"`
	// Closed is true when the history ends with a terminal event: no event will be added.
	Closed bool `json:"closed"`
	// EventsSHA256 is the SHA-256, in hex, of history_events: each event encoded as compact
	// JSON with the fields in the order of the schema (as json.Marshal of Event writes it),
	// followed by a newline.
	EventsSHA256 string `json:"events_sha256"`
}

// Links name the runs related to this one.
type Links struct {
	// Parent is the run that started this one as a child.
	Parent *RunLink `json:"parent,omitempty"`
	// Children are the child runs this run started, in the order it scheduled them.
	Children []RunLink `json:"children,omitempty"`
	// ContinuedFrom is the run this one continued (continue-as-new), when the exporter knows it.
	ContinuedFrom string `json:"continued_from,omitempty"`
	// ContinuedAs is the run that continued this one.
	ContinuedAs string `json:"continued_as,omitempty"`
	// RetryOf is the failed run this one retries (wend retry).
	RetryOf string `json:"retry_of,omitempty"`
}

// RunLink is one related run.
type RunLink struct {
	WorkflowID string `json:"workflow_id,omitempty"`
	// RunID is empty for a child that has not reported back yet.
	RunID string `json:"run_id,omitempty"`
	// Step is the step that started the child (for a parent: the parent's step).
	Step string `json:"step,omitempty"`
}

// OpenTask is a task the store holds for the run: work the engine owes it.
type OpenTask struct {
	ID          string    `json:"id"`
	Kind        string    `json:"kind"`
	AvailableAt time.Time `json:"available_at"`
}

// EventsSHA256 is Integrity.EventsSHA256 of evs.
func EventsSHA256(evs []Event) (string, error) {
	h := sha256.New()
	for _, e := range evs {
		b, err := json.Marshal(e)
		if err != nil {
			return "", err
		}
		h.Write(append(b, '\n'))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// integrity fills the document's integrity and links once its events are in.
func (doc *Document) integrity(run history.Run, retryOf string) error {
	evs := doc.HistoryEvents
	in := &Integrity{EventCount: len(evs), Complete: true}
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			in.Complete = false
		}
	}
	if len(evs) > 0 {
		in.LastSeq = evs[len(evs)-1].Seq
		in.Closed = history.EventType(evs[len(evs)-1].Type).Terminal()
	}
	if run.LastSeq != 0 && run.LastSeq != in.LastSeq {
		in.Complete = false
	}
	sum, err := EventsSHA256(evs)
	if err != nil {
		return err
	}
	in.EventsSHA256 = sum
	doc.Integrity = in

	w := doc.Workflow
	l := &Links{ContinuedAs: w.NextRunID, RetryOf: retryOf}
	if w.ParentRunID != "" {
		l.Parent = &RunLink{RunID: w.ParentRunID, Step: w.ParentStep}
	}
	for _, c := range doc.Children {
		if c.Kind == runview.ChildRun {
			l.Children = append(l.Children, RunLink{WorkflowID: c.WorkflowID, RunID: c.RunID, Step: c.Step})
		}
	}
	if l.Parent != nil || len(l.Children) > 0 || l.ContinuedAs != "" || l.RetryOf != "" {
		doc.Links = l
	}
	return nil
}
