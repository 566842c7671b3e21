//go:build soak

package boltstore

// Under -tags soak the crash tests run the T3 count of docs/reliability.md.
const soak, soakKills = true, 1000
