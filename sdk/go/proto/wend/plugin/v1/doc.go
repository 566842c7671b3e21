// Package pluginv1 is the generated Go code of wend.plugin.v1 (activities.proto), the protocol
// between the wend host and an activity plugin. Only activities.proto and this file are written
// by hand; `go generate` rebuilds the rest (see generate.go). Changes must stay wire-compatible:
// add fields, never renumber or reuse them. It lives in the SDK's module, which wend's module
// requires: one copy of the generated code, since two registrations of one proto package panic.
package pluginv1
