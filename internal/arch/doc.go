// Package arch holds no code: its test enforces the dependency direction of DESIGN.md §1, so
// the deterministic core never grows an import of a store, the plugin host or the CLI.
package arch
