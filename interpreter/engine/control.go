package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wendflow/wend/history"
)

// Signal sends a signal to the open run of a workflow id. The signal is durable once this
// returns nil; signals sent before the run waits for them are kept in order.
func (e *Engine) Signal(ctx context.Context, workflowID, name string, data json.RawMessage) error {
	_, err := e.SendSignal(ctx, SignalRequest{WorkflowID: workflowID, Name: name, Data: data})
	return err
}

// SignalRequest is a signal to a workflow id. ID, when set, makes the send idempotent: a
// client that lost the acknowledgement sends again with the same ID, and the run gets it once.
type SignalRequest struct {
	WorkflowID string
	Name       string
	Data       json.RawMessage
	ID         string
}

// SendSignal is Signal with an optional idempotency id. duplicate is true when s.ID names a
// signal the workflow id already recorded: nothing was recorded now, and the caller can say
// so instead of "sent".
func (e *Engine) SendSignal(ctx context.Context, s SignalRequest) (duplicate bool, err error) {
	if s.Name == "" {
		return false, fmt.Errorf("signal %s: the signal needs a name: %w", s.WorkflowID, ErrBadID)
	}
	if err := CheckID("signal name", s.Name); err != nil {
		return false, fmt.Errorf("signal: %w", err)
	}
	if err := CheckID("signal id", s.ID); err != nil {
		return false, fmt.Errorf("signal %s: %w", s.Name, err)
	}
	if err := CheckPayload("signal data", s.Data); err != nil {
		return false, fmt.Errorf("signal %s: %w", s.Name, err)
	}
	if len(s.Data) > 0 && !json.Valid(s.Data) {
		return false, fmt.Errorf("signal %s: data is not JSON", s.Name)
	}
	lr, err := e.openRun(s.WorkflowID)
	if q := (*queuedError)(nil); errors.As(err, &q) {
		handled, duplicate, qerr := e.signalQueued(ctx, q.rec, s)
		if handled {
			if qerr != nil {
				return false, fmt.Errorf("signal %s: %w", s.WorkflowID, qerr)
			}
			return duplicate, nil
		}
		lr, err = e.openRun(s.WorkflowID) // it started (or was cancelled) meanwhile
	}
	if err != nil {
		if errors.Is(err, ErrRunClosed) && s.ID != "" {
			if seen, serr := SignalRecorded(e.store, s.WorkflowID, s.ID); serr == nil && seen {
				return true, nil // a resend of a signal the run took before it finished: done already
			}
		}
		return false, fmt.Errorf("signal %s: %w", s.WorkflowID, err)
	}
	// The workflow's contract (spec `signals:`) before anything is queued: a refused signal
	// leaves the run as it was. The spec is fixed for the run's life, but an idle run's may be
	// out of memory (idle.go): resident takes the run's lock and brings it back.
	if w := e.resident(lr); w != nil {
		if err := w.CheckSignalContext(ctx, s.Name, s.Data); err != nil {
			return false, fmt.Errorf("run %s of %s: %w", lr.rec.RunID, s.WorkflowID, err)
		}
	}
	err = e.deliver(lr, history.Event{Type: history.SignalReceived,
		Data: history.MustData(history.Signal{Name: s.Name, Data: s.Data, SignalID: s.ID})})
	if errors.Is(err, errDuplicateSignal) {
		return true, nil
	}
	return false, err
}

// errDuplicateSignal is what applyBatch answers a signal whose id the run already recorded:
// not a failure, SendSignal turns it into its duplicate flag.
var errDuplicateSignal = errors.New("a resend of a signal already recorded")

// Terminate stops the open run of a workflow id at once: no compensation, no on_cancel.
func (e *Engine) Terminate(ctx context.Context, workflowID, reason string) error {
	lr, err := e.openRun(workflowID)
	if q := (*queuedError)(nil); errors.As(err, &q) {
		if done, err := e.cancelQueued(ctx, q.rec, true); done || err != nil {
			return err
		}
		lr, err = e.openRun(workflowID) // it started meanwhile
	}
	if err != nil {
		return fmt.Errorf("terminate %s: %w", workflowID, err)
	}
	return e.deliver(lr, history.Event{Type: history.TerminateRequested, Data: history.MustData(history.CancelRequest{Reason: reason})})
}

// Cancel cancels the open run of a workflow id.
func (e *Engine) Cancel(ctx context.Context, workflowID, reason string) error {
	lr, err := e.openRun(workflowID)
	if q := (*queuedError)(nil); errors.As(err, &q) {
		if done, err := e.cancelQueued(ctx, q.rec, false); done || err != nil {
			return err
		}
		lr, err = e.openRun(workflowID) // it started meanwhile
	}
	if err != nil {
		return fmt.Errorf("cancel %s: %w", workflowID, err)
	}
	return e.deliver(lr, history.Event{Type: history.CancelRequested, Data: history.MustData(history.CancelRequest{Reason: reason})})
}

// openRun finds the open run of a workflow id, explaining why there is none.
func (e *Engine) openRun(workflowID string) (*liveRun, error) {
	if err := e.isStopped(); err != nil {
		return nil, err
	}
	if lr := e.liveByWorkflow(workflowID); lr != nil {
		return lr, nil
	}
	runs, err := e.store.Runs(history.RunFilter{WorkflowID: workflowID})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no workflow %q: %w", workflowID, history.ErrNotFound)
	}
	if runs[0].Status == history.StatusQueued {
		return nil, &queuedError{runs[0]}
	}
	if runs[0].Open() {
		return nil, fmt.Errorf("run %s of %q is not driven by this engine: %w", runs[0].RunID, workflowID, ErrBlocked)
	}
	return nil, fmt.Errorf("run %s of %q is %s: %w", runs[0].RunID, workflowID, runs[0].Status, ErrRunClosed)
}

// WaitClosed blocks until the workflow id's last run has closed (following continue-as-new)
// and returns its record.
func (e *Engine) WaitClosed(ctx context.Context, workflowID string) (history.Run, error) {
	for {
		e.mu.Lock()
		e.awaitStartLocked(workflowID)
		ch := make(chan struct{})
		_, open := e.current[workflowID]
		if open {
			e.closeWaits[workflowID] = append(e.closeWaits[workflowID], ch)
		}
		stopped := e.stopped
		e.mu.Unlock()
		if !open {
			runs, err := e.store.Runs(history.RunFilter{WorkflowID: workflowID})
			if err != nil {
				return history.Run{}, err
			}
			if len(runs) == 0 {
				return history.Run{}, fmt.Errorf("no workflow %q: %w", workflowID, history.ErrNotFound)
			}
			if !runs[0].Open() {
				return runs[0], nil
			}
			if runs[0].Status == history.StatusQueued && stopped == nil {
				if err := e.awaitQueued(ctx, runs[0]); err != nil {
					return history.Run{}, err
				}
				continue
			}
			if stopped != nil {
				return runs[0], stopped
			}
			if e.drivenNow(workflowID) {
				continue // started after the look at e.current: a queued run let in meanwhile
			}
			return runs[0], fmt.Errorf("run %s: %w", runs[0].RunID, ErrBlocked)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return history.Run{}, ctx.Err()
		case <-e.ctx.Done():
			if err := e.isStopped(); err != nil {
				return history.Run{}, err
			}
			return history.Run{}, ErrStopped
		}
	}
}

// drivenNow says whether this engine drives an open run of workflowID now, once any start
// of it in flight is done. The store read in WaitClosed comes after its look at e.current, so
// a run that started in between (a queued run let in) reads open there yet is not blocked.
func (e *Engine) drivenNow(workflowID string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.awaitStartLocked(workflowID)
	_, open := e.current[workflowID]
	return open
}

// LastEvent returns a run's newest event.
func (e *Engine) LastEvent(runID string) (history.Event, error) {
	rec, err := e.store.Run(runID)
	if err != nil {
		return history.Event{}, err
	}
	evs, err := e.store.Events(runID, rec.LastSeq-1)
	if err != nil || len(evs) == 0 {
		return history.Event{}, fmt.Errorf("run %s: read last event: %v", runID, err)
	}
	return evs[0], nil
}

// SignalRecorded says whether any run of a workflow id recorded a signal with this client
// id: a resend after the run finished is then acknowledged as the duplicate it is.
func SignalRecorded(store history.Store, workflowID, signalID string) (bool, error) {
	runs, err := store.Runs(history.RunFilter{WorkflowID: workflowID})
	if err != nil {
		return false, err
	}
	for _, r := range runs {
		evs, err := store.Events(r.RunID, 0)
		if err != nil {
			return false, err
		}
		for _, ev := range evs {
			if ev.Type != history.SignalReceived {
				continue
			}
			if sig, err := history.DataOf[history.Signal](ev); err == nil && sig.SignalID == signalID {
				return true, nil
			}
		}
	}
	return false, nil
}
