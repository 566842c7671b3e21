package web

import (
	"github.com/wendflow/wend/history"
)

// compensated reports whether the run's compensations ran (its history has a
// CompensationStarted), for the list's "compensated" filter. The run record does not say, so
// the history is read; a closed run's answer is remembered, as its history no longer changes.
// A history that cannot be read counts as not compensated: the filter then omits the run,
// and its own page says why it cannot be read.
func (u *UI) compensated(run history.Run) bool {
	u.compMu.Lock()
	c, ok := u.comp[run.RunID]
	u.compMu.Unlock()
	if ok {
		return c
	}
	p, err := u.s.Events(run.RunID, 0)
	if err != nil {
		return false
	}
	for _, ev := range p.Events {
		if ev.Type == history.CompensationStarted {
			c = true
			break
		}
	}
	if !p.Run.Open() {
		u.compMu.Lock()
		if u.comp == nil {
			u.comp = map[string]bool{}
		}
		u.comp[run.RunID] = c
		u.compMu.Unlock()
	}
	return c
}
