//go:build !linux || wend_portable

package plugins

import "fmt"

// registryKept: this build records nothing in the registry.
const registryKept = false

// Without /proc's start times there is no safe way to tell a plugin a dead host left from a
// process that took its pid, so the host records nothing; the watchdog (runner_unix.go) or
// the Job Object (runner_windows.go) ends the plugin with its host instead, and cannot be
// defeated by a wrapper that clears a parent-death signal.

func (r *procRunner) register()   {}
func (r *procRunner) refresh()    {}
func (r *procRunner) unregister() {}

// reapPlugins drops the registry at path, which only a Linux host writes (a database moved here, or
// a host built without the tag), without signalling anything: its pids mean nothing here.
// Every entry counts as Skipped (Corrupt when unparseable).
func reapPlugins(path string) (ReapReport, error) {
	var rep ReapReport
	reg := registryAt(path)
	if reg == nil {
		return rep, nil
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	_, entries, err := reg.load()
	if err != nil {
		return rep, fmt.Errorf("reap plugins: read registry %s: %w (remove it to go on)", path, err)
	}
	for _, e := range entries {
		if e == nil {
			rep.Corrupt++
		} else {
			rep.Skipped++
		}
	}
	if err := reg.store(nil); err != nil {
		return rep, fmt.Errorf("reap plugins: remove registry %s: %w", path, err)
	}
	return rep, nil
}
