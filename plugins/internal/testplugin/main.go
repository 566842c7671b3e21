package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	sdk "github.com/wendflow/wend/sdk/go"
	"github.com/wendflow/wend/sdk/go/fastlane"
	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
	"github.com/wendflow/wend/sdk/go/wire"
)

func main() {
	acts := activities()
	fmt.Fprintf(os.Stderr, "testplugin pid %d\n", os.Getpid()) // tests find the process group here
	if ms, err := strconv.Atoi(os.Getenv("WEND_TESTPLUGIN_START_MS")); err == nil {
		time.Sleep(time.Duration(ms) * time.Millisecond) // a slow start, before any mode
	}
	if path := os.Getenv("WEND_TESTPLUGIN_HANG_FIRST"); path != "" {
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
			f.Close()
			fmt.Fprintln(os.Stderr, "testplugin: first start, hanging")
			time.Sleep(time.Hour) // the first start never answers; the next ones do
		}
	}
	switch mode := os.Getenv("WEND_TESTPLUGIN_MODE"); mode {
	case "":
		sdk.Serve(acts)
	case "garbage":
		fmt.Println("hello from a chatty plugin")
		sdk.Serve(acts)
	case "nohandshake":
		fmt.Fprintln(os.Stderr, "testplugin: thinking about it")
		time.Sleep(time.Hour)
	case "exit":
		fmt.Fprintln(os.Stderr, "testplugin: config file missing")
		os.Exit(3)
	case "wrongcookie", "wrongproto":
		hs := wire.Handshake
		if mode == "wrongcookie" {
			hs.MagicCookieValue = "not-wend"
		} else {
			hs.ProtocolVersion = 2
		}
		plugin.Serve(&plugin.ServeConfig{
			HandshakeConfig: hs,
			Plugins:         plugin.PluginSet{wire.PluginName: &wire.GRPCPlugin{Impl: sdk.NewServer(acts)}},
			GRPCServer:      plugin.DefaultGRPCServer,
		})
	case "plaingrpc":
		servePlain(acts)
	case "nolane", "chattylane", "laneerror", "lateevent", "badfastlane":
		var impl pluginv1.ActivitiesServer = noLane{srv: sdk.NewServer(acts)}
		switch mode {
		case "badfastlane":
			impl = badOffer{noLane{srv: sdk.NewServer(acts)}}
		case "lateevent":
			impl = lateEvent{noLane{srv: sdk.NewServer(acts)}}
		case "chattylane":
			impl = chattyLane{noLane{srv: sdk.NewServer(acts)}}
		case "laneerror":
			impl = errorLane{noLane{srv: sdk.NewServer(acts)}}
		}
		plugin.Serve(&plugin.ServeConfig{
			HandshakeConfig: wire.Handshake,
			Plugins:         plugin.PluginSet{wire.PluginName: &wire.GRPCPlugin{Impl: impl}},
			GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
				return grpc.NewServer(append(opts, wire.ServerOptions()...)...)
			},
			Logger: hclog.New(&hclog.LoggerOptions{Name: "testplugin", Level: hclog.Warn, Output: os.Stderr}),
		})
	default:
		fmt.Fprintf(os.Stderr, "testplugin: unknown mode %q\n", mode)
		os.Exit(2)
	}
}

// noLane serves the Activities service without Lane, as a plugin built before lanes (or in a
// language whose SDK has none) does: Lane answers Unimplemented.
type noLane struct {
	pluginv1.UnimplementedActivitiesServer
	srv pluginv1.ActivitiesServer
}

func (n noLane) Describe(ctx context.Context, req *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	return n.srv.Describe(ctx, req)
}

func (n noLane) Execute(stream pluginv1.Activities_ExecuteServer) error { return n.srv.Execute(stream) }

// lateEvent sends a heartbeat after each Execute try's final event, which the protocol forbids.
type lateEvent struct{ noLane }

func (l lateEvent) Execute(stream pluginv1.Activities_ExecuteServer) error {
	return l.srv.Execute(lateStream{stream})
}

type lateStream struct {
	pluginv1.Activities_ExecuteServer
}

func (s lateStream) Send(ev *pluginv1.ExecuteEvent) error {
	if err := s.Activities_ExecuteServer.Send(ev); err != nil || ev.GetHeartbeat() != nil {
		return err
	}
	return s.Activities_ExecuteServer.Send(&pluginv1.ExecuteEvent{Event: &pluginv1.ExecuteEvent_Heartbeat{Heartbeat: &pluginv1.Heartbeat{}}})
}

// chattyLane serves a Lane that speaks before it is asked anything: it sends an event on
// every lane it is given, then waits for the host to end it.
type chattyLane struct{ noLane }

func (chattyLane) Lane(stream pluginv1.Activities_LaneServer) error {
	if err := stream.Send(&pluginv1.ExecuteEvent{}); err != nil {
		return err
	}
	for {
		if _, err := stream.Recv(); err != nil {
			return nil
		}
	}
}

// errorLane answers every Lane with the status WEND_TESTPLUGIN_LANE_CODE (a code number) and
// WEND_TESTPLUGIN_LANE_MESSAGE: how a plugin in Ruby without Lane answers (Unknown, "RuntimeError:
// Illegal arity of reply generator"), or a Lane that really fails.
type errorLane struct{ noLane }

func (errorLane) Lane(pluginv1.Activities_LaneServer) error {
	code, err := strconv.Atoi(os.Getenv("WEND_TESTPLUGIN_LANE_CODE"))
	if err != nil {
		return status.Error(codes.InvalidArgument, "testplugin: WEND_TESTPLUGIN_LANE_CODE is not a number")
	}
	return status.Error(codes.Code(code), os.Getenv("WEND_TESTPLUGIN_LANE_MESSAGE"))
}

// badOffer serves the SDK's lanes but spoils its fast-lane offer as
// WEND_TESTPLUGIN_OFFER says: "wrongtoken", "nosocket" or "garbage".
type badOffer struct{ noLane }

func (b badOffer) Lane(stream pluginv1.Activities_LaneServer) error {
	return b.srv.Lane(spoiltOffer{stream})
}

type spoiltOffer struct{ pluginv1.Activities_LaneServer }

func (s spoiltOffer) SendHeader(md metadata.MD) error {
	switch os.Getenv("WEND_TESTPLUGIN_OFFER") {
	case "wrongtoken":
		md.Set(fastlane.TokenKey, strings.Repeat("00", fastlane.TokenBytes))
	case "nosocket":
		md.Set(fastlane.AddrKey, "/nonexistent/"+fastlane.DirPrefix+"x/"+fastlane.SocketName)
	case "garbage":
		md.Set(fastlane.TokenKey, "not hex")
	}
	return s.Activities_LaneServer.SendHeader(md)
}

// version is set at build time (-ldflags -X main.version=...): the roll tests build two.
var version = "dev"

type empty struct{}

func activities() sdk.Activities {
	return sdk.Activities{
		"noop": sdk.Func(func(*sdk.Context, empty) (empty, error) { return empty{}, nil }, "", ""),
		"echo": sdk.Func(func(_ *sdk.Context, in any) (any, error) { return in, nil }, "", ""),
		"now":  sdk.Func(func(*sdk.Context, empty) (int64, error) { return time.Now().UnixNano(), nil }, "", ""),
		"sleep": sdk.Func(func(ctx *sdk.Context, in struct{ MS int }) (empty, error) {
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
				return empty{}, nil
			case <-ctx.Done():
				return empty{}, ctx.Err()
			}
		}, "", ""),
		"hang": sdk.Func(func(*sdk.Context, empty) (empty, error) {
			select {} // ignores cancellation on purpose
		}, "", ""),
		"crash": sdk.Func(func(*sdk.Context, empty) (empty, error) {
			fmt.Fprintln(os.Stderr, "testplugin: about to crash")
			time.Sleep(50 * time.Millisecond)
			killSelf()
			select {}
		}, "", ""),
		"freeze": sdk.Func(func(*sdk.Context, empty) (empty, error) {
			freezeSelf()
			select {} // were it resumed, it still never answers
		}, "", ""),
		"grandchild": sdk.Func(func(*sdk.Context, empty) (int, error) {
			cmd := exec.Command("sleep", "1000")
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr // hold the plugin's pipes, as go-plugin#136
			if err := cmd.Start(); err != nil {
				return 0, err
			}
			return cmd.Process.Pid, nil
		}, "", ""),
		"env": sdk.Func(func(*sdk.Context, empty) ([]string, error) { return os.Environ(), nil }, "", ""),
		"big": sdk.Func(func(_ *sdk.Context, in struct{ Bytes int }) (string, error) {
			return strings.Repeat("x", in.Bytes), nil
		}, "", ""),
		"stderr": sdk.Func(func(_ *sdk.Context, in struct{ Line string }) (empty, error) {
			fmt.Fprintln(os.Stderr, in.Line)
			return empty{}, nil
		}, "", ""),
		// rawstdout writes to the process's stdout itself (go-plugin only swaps os.Stdout),
		// as a plugin in another language does after its handshake.
		"rawstdout": sdk.Func(func(_ *sdk.Context, in struct{ Line string }) (empty, error) {
			_, err := os.NewFile(1, "stdout").WriteString(in.Line + "\n")
			return empty{}, err
		}, "", ""),
		"flood": sdk.Func(func(_ *sdk.Context, in struct{ MB, LineKB int }) (empty, error) {
			line := strings.Repeat("f", in.LineKB<<10) + "\n"
			for range (in.MB << 20) / len(line) {
				os.Stderr.WriteString(line)
			}
			return empty{}, nil
		}, "", ""),
		"pid": sdk.Func(func(*sdk.Context, empty) (int, error) { return os.Getpid(), nil }, "", ""),
		"version": sdk.Func(func(*sdk.Context, empty) (map[string]any, error) {
			return map[string]any{"version": version, "pid": os.Getpid()}, nil
		}, "", ""),
		// gate {path}: returns its pid once path exists; a try held open at will.
		"gate": sdk.Func(func(ctx *sdk.Context, in struct{ Path string }) (int, error) {
			for {
				if _, err := os.Stat(in.Path); err == nil {
					return os.Getpid(), nil
				}
				select {
				case <-ctx.Done():
					return 0, ctx.Err()
				case <-time.After(10 * time.Millisecond):
				}
			}
		}, "", ""),
		// fail_unless {version}: fails retryably (type OldCode) unless this build is version.
		"fail_unless": sdk.Func(func(_ *sdk.Context, in struct{ Version string }) (map[string]any, error) {
			if version != in.Version {
				return nil, sdk.NewError("OldCode", fmt.Sprintf("build %s (pid %d) is not %s", version, os.Getpid(), in.Version))
			}
			return map[string]any{"version": version, "pid": os.Getpid()}, nil
		}, "", ""),
		"info": sdk.Func(func(ctx *sdk.Context, _ empty) (sdk.Info, error) { return ctx.Info, nil }, "", ""),
		"leak": sdk.Func(leak, "", ""),
	}
}
