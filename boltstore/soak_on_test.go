//go:build soak

package boltstore

// Under -tags soak the crash tests run RELIABILITY.md's T3 count.
const soak, soakKills = true, 1000
