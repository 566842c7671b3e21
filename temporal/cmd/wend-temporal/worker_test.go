package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wendflow/wend/cli"
)

// TestWorkerUsage: the mistakes `wend worker` catches before dialing a cluster, each with
// exit 2 and a message naming the fix.
func TestWorkerUsage(t *testing.T) {
	tc := &cli.Temporal{Address: "127.0.0.1:1", Namespace: "default", TaskQueue: "wend"}
	cases := []struct {
		name string
		t    *cli.Temporal
		args []string
		want string
	}{
		{"no cluster", nil, nil, "no cluster named; give --temporal HOST:PORT (or set WEND_TEMPORAL)"},
		{"bad max", tc, []string{"--max-activities", "0"}, `--max-activities: "0" must be a whole number, at least 1`},
		{"stray argument", tc, []string{"extra"}, `unexpected argument "extra"`},
		{"unknown flag", tc, []string{"--bogus"}, "flag provided but not defined: -bogus"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := runWorker(cli.IO{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}, c.t, c.args)
			if code != 2 || !strings.Contains(errb.String(), c.want) || !strings.Contains(errb.String(), "try: wend help worker") {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errb.String(), c.want)
			}
		})
	}
}

// TestWorkerReadsPluginStartTimeout: `wend worker` reads WEND_PLUGIN_START_TIMEOUT as local
// commands do, and warns about a value that is not a duration before it dials the cluster.
func TestWorkerReadsPluginStartTimeout(t *testing.T) {
	tc := &cli.Temporal{Address: "127.0.0.1:1", Namespace: "default", TaskQueue: "wend"}
	var out, errb bytes.Buffer
	env := func(k string) string {
		if k == "WEND_PLUGIN_START_TIMEOUT" {
			return "soon"
		}
		return ""
	}
	code := runWorker(cli.IO{Stdout: &out, Stderr: &errb, Getenv: env}, tc, nil)
	want := `WEND_PLUGIN_START_TIMEOUT="soon" is not a positive duration such as 2m; using the default 30s`
	if code != 2 || !strings.Contains(errb.String(), want) {
		t.Fatalf("exit %d, stderr %q; want 2 (no cluster) after %q", code, errb.String(), want)
	}
}

// TestWorkerRefusesBadTraceConfig: an OTEL_* value the worker cannot honour stops it before
// it dials the cluster, with exit 2 and the fix.
func TestWorkerRefusesBadTraceConfig(t *testing.T) {
	tc := &cli.Temporal{Address: "127.0.0.1:1", Namespace: "default", TaskQueue: "wend"}
	var out, errb bytes.Buffer
	env := func(k string) string {
		if k == "OTEL_TRACES_EXPORTER" {
			return "zipkin"
		}
		return ""
	}
	code := runWorker(cli.IO{Stdout: &out, Stderr: &errb, Getenv: env}, tc, nil)
	want := `wend worker: traces: bad trace configuration: OTEL_TRACES_EXPORTER=zipkin: unknown exporter "zipkin"; use otlp, console or none`
	if code != 2 || !strings.Contains(errb.String(), want) || strings.Contains(errb.String(), "connect to Temporal") {
		t.Fatalf("exit %d, stderr %q; want 2 and %q before dialing", code, errb.String(), want)
	}
}
