// Package fastlane is the fast lane's wire: how host and Go SDK agree on it over gRPC metadata,
// and the length-prefixed protobuf frames they then exchange on a unix-domain socket. A fast
// lane carries exactly the Lane stream's messages (ExecuteInput one way, ExecuteEvent the
// other) with the same meaning; what it leaves out is gRPC's goroutine hand-offs, so that each
// side's calling goroutine writes its frame and reads the answer itself. Like package wire it is
// part of the wire protocol, public for the host in wend's module; plugin authors use package sdk.
package fastlane
