// Package commands is wend's command line: the only code that reads os.Args, the environment and
// signals, prints for people or scripts, and chooses exit codes. The commands that drive runs
// in process open the application over the database (package app: store, plugins, engine,
// serve's schedules, batches and retention) and print what it reports; it holds no workflow
// logic of its own.
//
// Exit codes: 0 success, 1 the command's subject failed (invalid workflow, failed run), 2 usage
// or I/O error, 3 run cancelled, 4 run timed out, 70 internal error, 130 interrupted; one
// meaning each, for every command (the README's "Exit codes" table).
//
// Binaries that are wend plus more (wend-temporal) build on the public package cli, a thin
// layer over RunWith and Extensions (extensions.go); the commands reach runs through
// server.Backend, whichever engine holds them.
package commands
