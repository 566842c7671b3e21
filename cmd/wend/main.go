// Command wend validates, runs and operates declarative YAML workflows.
package main

import (
	"os"

	"github.com/wendflow/wend/internal/commands"
)

func main() { os.Exit(commands.Main()) }
