// Command wend-temporal is wend with the Temporal SDK: every wend command, plus `worker`,
// and --temporal HOST:PORT (or WEND_TEMPORAL) sends the run commands to a Temporal cluster.
// The plain wend binary hands such commands to this one, so users type `wend` either way.
package main

import (
	"os"

	"github.com/wendflow/wend/cli"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/temporal/backend"
)

func main() { os.Exit(cli.MainWith(extensions())) }

func extensions() cli.Extensions {
	return cli.Extensions{
		OpenTemporal: func(t cli.Temporal) (server.Backend, error) {
			return backend.Dial(backend.Options{HostPort: t.Address, Namespace: t.Namespace, TaskQueue: t.TaskQueue})
		},
		Commands: map[string]cli.Command{"worker": workerCmd},
	}
}
