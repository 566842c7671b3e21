//go:build !unix

package boltstore

// pidAlive cannot tell here without a handle's rights: a recorded pid is taken as alive.
func pidAlive(pid int) bool { return true }
