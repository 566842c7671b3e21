package commands

import (
	"fmt"
	"os"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/app"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/metrics"
	"github.com/wendflow/wend/server/web"
)

// serveCluster is wend serve --temporal: the HTTP API, the web UI and /metrics over the runs of
// a cluster, answered by its backend (the same one wend list, show and signal use there). No
// engine runs here, so there is no control socket and no database: the cluster's workers
// drive the runs.
func serveCluster(e *env, f httpFlags, workflows []api.Workflow) int {
	if *f.listen == "off" || *f.listen == "" {
		return usageError(e, "serve", "--http off leaves nothing to serve with --temporal: give an address")
	}
	b, err := e.openTemporal()
	if err != nil {
		fmt.Fprintf(e.stderr, "wend serve: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	c, ok := b.(server.Cluster)
	if !ok {
		fmt.Fprintf(e.stderr, "wend serve: this build's Temporal backend cannot serve the API\n")
		return exitUsage
	}
	tokens, err := serveTokens(e, "", f)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend serve: %v\n", err)
		return exitUsage
	}
	sigs := notifyStop() // before it listens: a SIGTERM from then on is the clean stop
	s := app.OverCluster(c, workflows, func(format string, args ...any) { fmt.Fprintf(e.stderr, format+"\n", args...) })
	list := func() ([]history.Run, error) { return s.List(history.RunFilter{}) }
	t, err := server.ListenTCP(s, tokens.options(f, metrics.New(version).ClusterHandler(list), web.New(s)))
	if err != nil {
		fmt.Fprintf(e.stderr, "wend serve: %v\n", err)
		return exitUsage
	}
	defer t.Close()
	tokens.report(e, t.URL(), f)
	if len(workflows) > 0 {
		reportWorkflows(e, workflows)
	}
	tp := e.temporal
	fmt.Fprintf(e.stderr, "wend: serving the runs of Temporal %s (namespace %s, task queue %s) (pid %d); Ctrl-C to stop\n",
		tp.Address, tp.Namespace, tp.TaskQueue, os.Getpid())
	waitForStop(e, sigs)
	return exitOK
}

// waitForStop returns at the first Ctrl-C or SIGTERM on sigs (from notifyStop); a second one
// exits at once.
func waitForStop(e *env, sigs chan os.Signal) {
	<-sigs
	fmt.Fprintf(e.stderr, "wend: stopping (Ctrl-C again to exit at once)\n")
	go func() {
		<-sigs
		os.Exit(exitInterrupted)
	}()
}
