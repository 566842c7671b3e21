package cli

import (
	"github.com/wendflow/wend/schemas"
)

var schemaCmd = &command{
	summary: "print the JSON Schema of workflow files (for editors)",
	usage: `Usage: wend schema

Prints schemas/workflow.schema.json, the JSON Schema (draft 2020-12) that workflow files
follow. Point yaml-language-server at it for completion and hover help:

    # yaml-language-server: $schema=./workflow.schema.json

Save it with: wend schema > workflow.schema.json
`,
	run: func(e *env, args []string) int {
		if len(args) > 0 {
			return usageError(e, "schema", "unexpected argument %q", args[0])
		}
		_, _ = e.stdout.Write(schemas.Workflow)
		return exitOK
	},
}
