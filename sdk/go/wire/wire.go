package wire

import (
	"context"
	"errors"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
)

// Handshake is go-plugin's handshake: app protocol 1 and the cookie the host sets in the
// plugin's environment, so a plugin binary run by hand says what it is instead of hanging.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "WEND_PLUGIN",
	MagicCookieValue: "wend-activities-v1",
}

// HostPIDEnv names the variable carrying the host's pid. A plugin exits once its parent is no
// longer that process: comparing with the pid at the plugin's own start would miss a host that
// died before the plugin looked.
const HostPIDEnv = "WEND_HOST_PID"

// PluginName is the key of the single plugin in go-plugin's PluginSet.
const PluginName = "activities"

const (
	// MaxPayloadBytes bounds an activity's JSON input and output (and heartbeat progress), as
	// Temporal's 2 MB blob error limit does: history stays small and replay fast.
	MaxPayloadBytes = 2 << 20
	// MaxMessageBytes is gRPC's per-message limit on both sides, set above MaxPayloadBytes plus
	// the envelope so that an oversized payload meets our clear error, never gRPC's bare one.
	MaxMessageBytes = 16 << 20
)

// Error types that cross the boundary (ActivityError.Type).
const (
	TypePayloadTooLarge = "PayloadTooLarge"
	TypeUnknownActivity = "UnknownActivity"
	TypeBadInput        = "BadInput"
	TypeCancelled       = "Cancelled"
	TypeTimeout         = "Timeout"
	TypePanic           = "Panic"
	TypeError           = "Error"
)

// Cancel reasons sent by the host.
const (
	ReasonDeadline  = "deadline"
	ReasonCancelled = "cancelled"
)

// GRPCPlugin adapts the Activities service to go-plugin. The host leaves Impl nil.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl pluginv1.ActivitiesServer
}

var errNoServer = errors.New("wire: plugin has no Activities server")

// GRPCServer registers the Activities service on the plugin's gRPC server.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errNoServer
	}
	pluginv1.RegisterActivitiesServer(s, p.Impl)
	return nil
}

// GRPCClient returns the host's client for the Activities service.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pluginv1.NewActivitiesClient(c), nil
}

// Flow-control windows fixed on both sides. gRPC otherwise estimates the bandwidth-delay
// product by sending a ping after data arrives, which on a call-sized exchange adds a ping and
// its ack — two more writes and wake-ups — to nearly every round trip. A window of 4 MiB per
// stream holds the largest message (2 MiB payload plus envelope) without waiting for an update.
const (
	streamWindow = 4 << 20
	connWindow   = 16 << 20
)

// DialOptions are the host's gRPC options for a plugin connection, added to go-plugin's.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithInitialWindowSize(streamWindow), grpc.WithInitialConnWindowSize(connWindow),
	}
}

// ServerOptions are the Go SDK's gRPC server options.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.InitialWindowSize(streamWindow), grpc.InitialConnWindowSize(connWindow),
		grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes),
	}
}
