package export_test

import (
	"slices"
	"testing"

	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/interpreter/sim"
)

// TestIntegrity: the export says whether it holds the whole history, whether the
// run closed, and carries a checksum over its events that any change to them alters.
func TestIntegrity(t *testing.T) {
	s := sim.New(t, sim.Head+"steps: [{activity: p.x}, {activity: p.y}]\n", nil)
	s.RunActivities(sim.Echo)
	whole := exportOf(t, s)
	in := whole.Integrity
	if in == nil || !in.Complete || !in.Closed || in.EventCount != len(s.Events) || in.LastSeq != s.Events[len(s.Events)-1].Seq || len(in.EventsSHA256) != 64 {
		t.Fatalf("integrity of a whole closed history: %+v", in)
	}
	gap := slices.Delete(slices.Clone(s.Events), 2, 3)
	doc, err := export.Build(s.Record(), gap)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Integrity.Complete || doc.Integrity.EventsSHA256 == in.EventsSHA256 {
		t.Errorf("a history with a gap: %+v", doc.Integrity)
	}
	rec := s.Record()
	rec.LastSeq += 3 // the store holds more than was exported
	if doc, err = export.Build(rec, s.Events); err != nil || doc.Integrity.Complete {
		t.Errorf("a history cut short: %+v %v", doc.Integrity, err)
	}
	open := s.Events[:len(s.Events)-1]
	if doc, err = export.Build(s.Record(), open); err != nil || doc.Integrity.Closed {
		t.Errorf("an open history: %+v %v", doc.Integrity, err)
	}
}
