package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/metrics"
	"github.com/wendflow/wend/server/web"
)

// serveCluster is wend serve --temporal: the HTTP API, the web UI and /metrics over the runs of
// a cluster, answered by its backend (the same one wend list, show and signal use there). No
// engine runs here, so there is no control socket and no database: the cluster's workers
// drive the runs.
func serveCluster(e *env, f httpFlags, workflows []server.Workflow) int {
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
	token, from, generated, err := clusterToken(e, *f.tokenFile)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend serve: %v\n", err)
		return exitUsage
	}
	if *f.allowRemote && generated {
		return usageError(e, "serve", "--allow-remote needs a token chosen on purpose: --token-file FILE or WEND_TOKEN")
	}
	sigs := notifyStop() // before it listens: a SIGTERM from then on is the clean stop
	s := server.Over(c)
	if len(workflows) > 0 {
		s.SetWorkflows(workflows)
	}
	if cb, ok := c.(server.ClusterBatches); ok {
		// Temporal's batch operations run the batches: durable on the cluster.
		s.SetBatches(server.NewClusterBatches(s, cb, func(format string, args ...any) { fmt.Fprintf(e.stderr, format+"\n", args...) }))
	}
	list := func() ([]history.Run, error) { return s.List(history.RunFilter{}) }
	t, err := server.ListenTCP(s, server.TCPOptions{Addr: *f.listen, Token: token, AllowRemote: *f.allowRemote,
		Metrics: metrics.New(version).ClusterHandler(list), UI: web.New(s)})
	if err != nil {
		fmt.Fprintf(e.stderr, "wend serve: %v\n", err)
		return exitUsage
	}
	defer t.Close()
	if generated {
		fmt.Fprintf(e.stderr, "wend: generated an API token for this process (give --token-file to keep one): %s\n", token)
		fmt.Fprintf(e.stderr, "wend: web UI at %s/ui/login?token=%s\n", t.URL(), token)
	} else {
		fmt.Fprintf(e.stderr, "wend: web UI at %s/ui/runs (log in with the token from %s)\n", t.URL(), from)
	}
	fmt.Fprintf(e.stderr, "wend: HTTP API at %s/v1, metrics at %s/metrics\n", t.URL(), t.URL())
	if len(workflows) > 0 {
		reportWorkflows(e, workflows)
	}
	tp := e.temporal
	fmt.Fprintf(e.stderr, "wend: serving the runs of Temporal %s (namespace %s, task queue %s) (pid %d); Ctrl-C to stop\n",
		tp.Address, tp.Namespace, tp.TaskQueue, os.Getpid())
	waitForStop(e, sigs)
	return exitOK
}

// clusterToken finds the API token of a serve over a cluster: --token-file, else $WEND_TOKEN,
// else one generated for this process alone (there is no database beside which to keep it).
func clusterToken(e *env, tokenFile string) (token, from string, generated bool, err error) {
	if tokenFile != "" || strings.TrimSpace(e.getenv("WEND_TOKEN")) != "" {
		// apiToken never reaches the generated file when either is given.
		token, from, _, _, err = apiToken(e, "", tokenFile)
		return token, from, false, err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", false, errors.New("generate an API token: " + err.Error())
	}
	return hex.EncodeToString(b[:]), "", true, nil
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
