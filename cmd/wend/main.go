// Command wend validates, runs and operates declarative YAML workflows.
package main

import (
	"os"

	"github.com/wendflow/wend/internal/cli"
)

func main() { os.Exit(cli.Main()) }
