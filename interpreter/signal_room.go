package interpreter

// SignalRoom says whether the run can take one more signal of this name without passing
// MaxSignals: a step waiting for the name takes it at once; otherwise it must fit beside the
// signals nobody has consumed yet. An engine asks before recording a signal, so a client
// over the limit is refused and the run goes on (signalReceived's overLimit stays for
// histories recorded before).
func (r *Run) SignalRoom(name string) bool {
	return len(r.waiters.at(name)) > 0 || r.unconsumedSignals() < MaxSignals
}
