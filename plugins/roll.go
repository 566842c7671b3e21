package plugins

import (
	"maps"
	"slices"
)

// Rolled is what Roll did to one running plugin.
type Rolled struct {
	Plugin    string
	OldPID    int
	OldSHA256 string // the build the old process runs ("" when unknown)
	NewPID    int    // 0 when the new build did not start
	NewSHA256 string
	// Err says why the new build did not start (a checksum that no longer matches the pin,
	// a missing program...); the old process then goes on serving.
	Err error
}

// Roll replaces each running process of plugin (every plugin when plugin is empty) with a
// new one started from the program as it is on disk now, verified against Config.SHA256 when
// pinned, whether or not the file changed. The old process takes no new tries, finishes those
// it runs and then stops. A plugin with no live process is left alone: its next try starts
// the program as it is then. Tries wait while their plugin's new process starts.
func (h *Host) Roll(plugin string) []Rolled {
	h.mu.Lock()
	names := slices.Sorted(maps.Keys(h.slots))
	h.mu.Unlock()
	var out []Rolled
	for _, name := range names {
		if plugin != "" && name != plugin {
			continue
		}
		s, err := h.slot(name)
		if err != nil {
			break // closed
		}
		if r, ok := h.roll(s); ok {
			out = append(out, r)
		}
	}
	return out
}

func (h *Host) roll(s *slot) (Rolled, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.proc
	if old == nil || !old.alive() {
		return Rolled{}, false
	}
	r := Rolled{Plugin: s.cfg.Name, OldSHA256: old.build}
	r.OldPID, _ = old.pid()
	p, err := h.current(s, true)
	if err != nil {
		r.Err = err
		return r, true
	}
	r.NewSHA256 = p.build
	r.NewPID, _ = p.pid()
	return r, true
}

// Roll rolls plugin (every plugin when empty) in every host that runs it: Host.Roll.
func (r *Router) Roll(plugin string) []Rolled {
	r.mu.Lock()
	keys := slices.Sorted(maps.Keys(r.hosts))
	hosts := make([]*Host, len(keys))
	for i, k := range keys {
		hosts[i] = r.hosts[k]
	}
	r.mu.Unlock()
	var out []Rolled
	for _, h := range hosts {
		out = append(out, h.Roll(plugin)...)
	}
	return out
}
