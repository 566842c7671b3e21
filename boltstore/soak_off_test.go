//go:build !soak

package boltstore

const soak, soakKills = false, 0
