// Package wire holds what the plugin host and the Go SDK must agree on: the go-plugin handshake,
// the payload limits, the error types that cross the boundary and the go-plugin glue for the
// wend.plugin.v1 gRPC service. It is part of the wire protocol, public so that the host (in
// wend's module) and the SDK (this module) share one copy; plugin authors use package sdk, not
// this one. The Python and Node.js SDKs (sdk/python, sdk/node) and the Ruby example repeat these
// values; change them together (and the SDKs' protocol version check).
package wire
