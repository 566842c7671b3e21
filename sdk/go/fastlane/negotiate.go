package fastlane

import "os"

// EnvVar turns the fast lane off when set to "0", in the host's environment (it stops asking)
// or in a plugin's (it stops offering); either way the calls use gRPC lanes.
const EnvVar = "WEND_PLUGIN_FASTLANE"

// Metadata keys of the negotiation, carried on the host's lane probe. The host asks with
// AskKey: "1" in the request metadata; a plugin that offers a fast lane answers with header
// metadata AddrKey (the socket's path) and TokenKey (hex of the token a connection must send
// first).
const (
	AskKey   = "wend-fastlane"
	AddrKey  = "wend-fastlane-addr"
	TokenKey = "wend-fastlane-token"
)

// TokenBytes is the token's length; the token is random, fresh for each plugin process.
const TokenBytes = 32

// DirPrefix begins the name of the private directory a plugin makes for its socket, so that a
// host cleaning up after a killed plugin removes only such a directory.
const DirPrefix = "wend-fastlane-"

// SocketName is the socket's file name inside that directory.
const SocketName = "lane.sock"

// Enabled reports whether this process's environment leaves the fast lane on.
func Enabled() bool { return os.Getenv(EnvVar) != "0" }
