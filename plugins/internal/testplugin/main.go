package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/wendflow/wend/plugins/internal/wire"
	"github.com/wendflow/wend/plugins/sdk"
)

func main() {
	acts := activities()
	fmt.Fprintf(os.Stderr, "testplugin pid %d\n", os.Getpid()) // tests find the process group here
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
	default:
		fmt.Fprintf(os.Stderr, "testplugin: unknown mode %q\n", mode)
		os.Exit(2)
	}
}

type empty struct{}

func activities() sdk.Activities {
	return sdk.Activities{
		"noop": sdk.Func(func(*sdk.Context, empty) (empty, error) { return empty{}, nil }, "", ""),
		"echo": sdk.Func(func(_ *sdk.Context, in any) (any, error) { return in, nil }, "", ""),
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
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}, "", ""),
		"freeze": sdk.Func(func(*sdk.Context, empty) (empty, error) {
			syscall.Kill(os.Getpid(), syscall.SIGSTOP)
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
		"flood": sdk.Func(func(_ *sdk.Context, in struct{ MB, LineKB int }) (empty, error) {
			line := strings.Repeat("f", in.LineKB<<10) + "\n"
			for range (in.MB << 20) / len(line) {
				os.Stderr.WriteString(line)
			}
			return empty{}, nil
		}, "", ""),
		"pid":  sdk.Func(func(*sdk.Context, empty) (int, error) { return os.Getpid(), nil }, "", ""),
		"info": sdk.Func(func(ctx *sdk.Context, _ empty) (sdk.Info, error) { return ctx.Info, nil }, "", ""),
	}
}
