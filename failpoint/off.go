//go:build !faults

package failpoint

// Hit marks a failpoint; without the faults build tag it does nothing.
func Hit(string) {}
