// Command wend-temporal-dev starts a local Temporal server for trying wend on Temporal
// without a cluster: every Temporal service in this one process, state in SQLite.
//
//	GOTOOLCHAIN=go1.26.11 go run ./cmd/wend-temporal-dev [--port 7233] [--db FILE]
//
// It prints the address to give `wend-temporal worker --temporal` and `wend-temporal run
// --temporal`, and stops cleanly on Ctrl-C (SIGINT) or SIGTERM. It is a development server:
// one history shard, no UI, no TLS, no authentication; do not expose it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/wendflow/wend/temporal/e2e/devserver"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, nil))
}

// run starts the server, prints how to use it and blocks until a signal arrives (or stop
// is closed, for tests). It returns the exit code.
func run(args []string, stdout, stderr io.Writer, stop <-chan struct{}) int {
	fs := flag.NewFlagSet("wend-temporal-dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("port", 7233, "frontend port that workers and `run` dial (0: any free port)")
	ip := fs.String("ip", "127.0.0.1", "address to listen on")
	db := fs.String("db", "", "SQLite file keeping runs across restarts (default: a temporary file removed on exit)")
	ns := fs.String("namespace", "default", "namespace to register")
	logLevel := fs.String("log-level", "error", "server log level: debug, info, warn, error")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: wend-temporal-dev [--port N] [--db FILE] [--ip IP] [--namespace NS] [--log-level L]")
		fmt.Fprintln(stderr, "Starts a local Temporal server for trying wend; Ctrl-C stops it.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "wend-temporal-dev: unexpected argument %q (flags only; see --help)\n", fs.Arg(0))
		return 2
	}
	if *port < 0 || *port > 65535 {
		fmt.Fprintf(stderr, "wend-temporal-dev: --port %d: want 0-65535\n", *port)
		return 2
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	srv, err := devserver.Start(devserver.Options{DBFile: *db, IP: *ip, Port: *port, Namespace: *ns, LogLevel: *logLevel})
	if err != nil {
		fmt.Fprintf(stderr, "wend-temporal-dev: %v\n", err)
		return 1
	}
	state := "a temporary file, removed on exit"
	if *db != "" {
		state = *db
	}
	fmt.Fprintf(stdout, "Temporal server listening on %s (namespace %s, state in %s)\n", srv.Addr(), srv.Namespace(), state)
	fmt.Fprintf(stdout, "Start a worker:   wend-temporal worker --temporal %s\n", srv.Addr())
	fmt.Fprintf(stdout, "Run a workflow:   wend-temporal run --temporal %s examples/hello.wend.yaml\n", srv.Addr())
	fmt.Fprintln(stdout, "Ctrl-C stops the server.")
	select {
	case s := <-sigs:
		fmt.Fprintf(stdout, "%v: stopping\n", s)
	case <-stop:
	}
	if err := srv.Stop(); err != nil {
		fmt.Fprintf(stderr, "wend-temporal-dev: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "stopped")
	return 0
}
