//go:build unix && wend_portable

package crashtest

// extraTags builds the wend under test with the portable plugin host and store (process groups
// and the watchdog, fsync, no Linux-only hints), as darwin and FreeBSD run them.
const extraTags = ",wend_portable"
