package plugins

// Stats count a Host's plugin processes, for the operator's metrics.
type Stats struct {
	Processes int // alive now
	Starts    int // started since New
	Restarts  int // starts of a plugin that had a process before (it died or was killed)
	Rolls     int // starts that replaced a live process with a new build (Roll, a changed file)
}

// Stats returns the host's process counts. It never waits: a plugin whose slot is busy
// starting a process (up to StartTimeout) is left out of this reading, so a metrics scrape
// cannot stall behind a slow plugin start.
func (h *Host) Stats() Stats {
	h.mu.Lock()
	slots := make([]*slot, 0, len(h.slots))
	for _, s := range h.slots {
		slots = append(slots, s)
	}
	h.mu.Unlock()
	var st Stats
	for _, s := range slots {
		if !s.mu.TryLock() {
			continue
		}
		if s.proc != nil && s.proc.alive() {
			st.Processes++
		}
		for _, p := range s.retired {
			if p.alive() {
				st.Processes++
			}
		}
		st.Starts += s.starts
		st.Restarts += max(s.starts-1-s.rolls, 0)
		st.Rolls += s.rolls
		s.mu.Unlock()
	}
	return st
}
