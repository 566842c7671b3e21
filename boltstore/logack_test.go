package boltstore

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestAcknowledgeLogLoss: a database that went on without its log is a problem for Check until
// the loss is acknowledged; then Check is clean and CheckNotes says what was lost, by whom it
// was acknowledged and when, on every later Open. A database that lost nothing has nothing to
// acknowledge, and a store opened for reading acknowledges nothing.
func TestAcknowledgeLogLoss(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	must(t, s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{storetest.Started("wf", "r1", t0)}}))
	must(t, s.settle())
	if _, err := s.AcknowledgeLogLoss("op@host"); !errors.Is(err, ErrNoLogLoss) {
		t.Errorf("AcknowledgeLogLoss with no loss = %v, want ErrNoLogLoss", err)
	}
	cp := filepath.Join(t.TempDir(), "copy.db")
	copyFile(t, path, cp) // without its log
	must(t, s.Close())

	c, err := Open(cp, Options{AcceptLogLoss: true})
	must(t, err)
	if ps, err := c.Check(); err != nil || len(ps) != 1 || !strings.Contains(ps[0], "wend check --acknowledge-log-loss") {
		t.Errorf("Check before the acknowledgment = %q, %v; want one problem saying how to acknowledge", ps, err)
	}
	must(t, c.Close())

	r, err := Open(cp, Options{ReadOnly: true})
	must(t, err)
	if _, err := r.AcknowledgeLogLoss("op@host"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("AcknowledgeLogLoss on a store opened for reading = %v, want ErrReadOnly", err)
	}
	must(t, r.Close())

	c, err = Open(cp, Options{})
	must(t, err)
	ack, err := c.AcknowledgeLogLoss("op@host")
	must(t, err)
	if !strings.HasPrefix(ack, "acknowledged by op@host at ") {
		t.Errorf("acknowledgment %q, want who and when", ack)
	}
	must(t, c.Close())

	for _, opts := range []Options{{}, {ReadOnly: true}} {
		c, err = Open(cp, opts)
		must(t, err)
		ps, err := c.Check()
		notes, nerr := c.CheckNotes()
		if err != nil || len(ps) != 0 {
			t.Errorf("Check after the acknowledgment = %q, %v; want clean", ps, err)
		}
		if nerr != nil || len(notes) != 1 || !strings.Contains(notes[0], "behind what was acknowledged") || !strings.Contains(notes[0], ack) {
			t.Errorf("CheckNotes = %q, %v; want the loss and %q", notes, nerr, ack)
		}
		must(t, c.Close())
	}
}
