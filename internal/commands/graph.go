package commands

import (
	"flag"
	"fmt"
	"io"

	"github.com/wendflow/wend/spec"
	"github.com/wendflow/wend/spec/graph"
)

var graphCmd = &command{
	summary: "print a workflow file's graph as Mermaid, Graphviz dot or SVG",
	usage: `Usage: wend graph [--format mermaid|dot|svg] FILE

Prints the workflow's graph on stdout without running anything: every step (by its id,
else its path), sequences, parallel branches and their join, for_each as one node with
its body, catch and compensate_with edges, waits, timers and child workflows.

Flags:
  --format mermaid  a Mermaid flowchart, which renders in a README or a pull request (default)
  --format dot      a Graphviz digraph
  --format svg      a standalone SVG drawn by wend (no Graphviz needed)

Exit codes: 0 printed, 1 the file is not a valid workflow (its findings on stderr),
2 usage error.
`,
	run: runGraph,
}

func runGraph(e *env, args []string) int {
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	format := fs.String("format", "mermaid", "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "graph", "%s", flagError(err))
	}
	render := map[string]func(io.Writer, *graph.Graph) error{"mermaid": graph.Mermaid, "dot": graph.Dot, "svg": graph.SVG}[*format]
	if render == nil {
		return usageError(e, "graph", "--format %q: want mermaid, dot or svg", *format)
	}
	if len(pos) != 1 {
		return usageError(e, "graph", "want one workflow FILE, e.g. wend graph examples/order.wend.yaml")
	}
	w, ds, err := (&spec.Loader{}).LoadFile(pos[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "wend graph: %v\n", err)
		return exitFailed
	}
	if ds.HasErrors() {
		for _, d := range relativize(ds.Sorted()) {
			if d.IsError() {
				fmt.Fprintln(e.stderr, d.String())
			}
		}
		fmt.Fprintf(e.stderr, "wend graph: %s is not a valid workflow; fix it (wend validate %s)\n", pos[0], pos[0])
		return exitFailed
	}
	if err := render(e.stdout, graph.Build(w)); err != nil {
		fmt.Fprintf(e.stderr, "wend graph: %v\n", err)
		return exitFailed
	}
	return exitOK
}
