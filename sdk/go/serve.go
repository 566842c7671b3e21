package sdk

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/wendflow/wend/sdk/go/wire"
)

// Serve serves acts to the wend host that started this process and returns only if serving
// fails to start (go-plugin then exits the process itself). Run by hand, it prints a notice and
// exits 1: a plugin is started by wend.
func Serve(acts Activities) {
	srv := &server{acts: acts}
	defer srv.fast.close() // the fast lane's socket directory goes with the process
	if os.Getenv(wire.Handshake.MagicCookieKey) == wire.Handshake.MagicCookieValue {
		go watchParent(hostPID(), time.Second, srv.fast.close)
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: wire.Handshake,
		Plugins:         plugin.PluginSet{wire.PluginName: &wire.GRPCPlugin{Impl: srv}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, wire.ServerOptions()...)...)
		},
		// go-plugin logs at trace level by default; the host tags every stderr line, so keep
		// only what an operator should read.
		Logger: hclog.New(&hclog.LoggerOptions{Name: "sdk", Level: hclog.Warn, Output: os.Stderr}),
	})
}

// watchParent exits the plugin when its parent changes (the host died and the plugin was
// reparented): the parent-death signal the host sets is lost if the host's starting thread
// exits (golang/go#27505), and non-Linux hosts have none.
func watchParent(host int, every time.Duration, cleanup func()) {
	for {
		if os.Getppid() != host {
			fmt.Fprintf(os.Stderr, "wend plugin: host process %d is gone; exiting\n", host)
			cleanup()
			os.Exit(1)
		}
		time.Sleep(every)
	}
}

// hostPID is the pid the host announced, else the parent's at start.
func hostPID() int {
	if pid, err := strconv.Atoi(os.Getenv(wire.HostPIDEnv)); err == nil && pid > 0 {
		return pid
	}
	return os.Getppid()
}
