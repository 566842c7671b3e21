// Package crashtest holds no code: its tests kill real `wend` processes with SIGKILL and at
// failpoints while they drive workflows on the example Go plugin, resume them, and check the
// history invariants of docs/reliability.md (I1-I8) over the database and the plugin's invocation
// log.
package crashtest
