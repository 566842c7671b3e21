// Package wire holds what the plugin host and the Go SDK must agree on: the go-plugin handshake,
// the payload limits, the error types that cross the boundary and the go-plugin glue for the
// wend.plugin.v1 gRPC service. Non-Go plugins (examples/plugins/python, examples/plugins/node)
// repeat these values; change them together.
package wire
