// Package cli is wend's command line as a library, for a binary that is wend plus more:
// MainWith runs every wend command and adds what Extensions give. wend-temporal is such a
// binary: it adds a Temporal backend (OpenTemporal, which the commands that read or steer runs
// use when given --temporal) and the `worker` command, and links the Temporal SDK that the
// plain wend binary leaves out.
//
// The commands themselves live in wend's internal/commands; this package is the stable seam over
// them. A backend implements server.Backend, whose methods and *api.Error are the control
// API's, so the commands print the same results, messages and exit codes on any engine.
package cli
