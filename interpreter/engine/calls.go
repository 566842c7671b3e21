package engine

import "context"

// CallStats is a snapshot of the engine's activity calls, for metrics.
type CallStats struct {
	Max     int // MaxActivities: calls made at once at most
	Running int // tries holding a slot (their call in progress, or about to start)
	// WaitingSlot counts tries due now that wait for a slot of Max: their try has not
	// started (no dispatch mark, no timeout running).
	WaitingSlot int
}

// CallStats says how many calls run and wait now.
func (e *Engine) CallStats() CallStats {
	return CallStats{Max: cap(e.sem), Running: len(e.sem), WaitingSlot: int(e.waitingSlot.Load())}
}

// takeSlot waits for a MaxActivities slot, counted as waiting meanwhile; false if ctx ended
// first (the try was cancelled or the engine is stopping).
func (e *Engine) takeSlot(ctx context.Context) bool {
	select {
	case e.sem <- struct{}{}:
		return true
	default:
	}
	e.waitingSlot.Add(1)
	defer e.waitingSlot.Add(-1)
	select {
	case e.sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}
