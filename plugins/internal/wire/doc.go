// Package wire holds what the plugin host and the Go SDK must agree on: the go-plugin handshake,
// the payload limits, the error types that cross the boundary and the go-plugin glue for the
// wend.plugin.v1 gRPC service. The Python and Node.js SDKs (sdk/python, sdk/node) and the Ruby example
// repeat these values; change them together (and the SDKs' protocol version check).
package wire
