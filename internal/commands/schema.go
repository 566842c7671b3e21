package commands

import (
	"github.com/wendflow/wend/schemas"
)

var schemaCmd = &command{
	summary: "print the JSON Schema of workflow files, or of test files (for editors)",
	usage: `Usage: wend schema [test]

Prints schemas/workflow.schema.json, the JSON Schema (draft 2020-12) that workflow files
follow. Point yaml-language-server at it for completion and hover help:

    # yaml-language-server: $schema=./workflow.schema.json

Save it with: wend schema > workflow.schema.json

wend schema test prints schemas/workflow-test.schema.json, the schema of the
*.wend.test.yaml files that wend test runs.
`,
	run: func(e *env, args []string) int {
		if len(args) == 1 && args[0] == "test" {
			_, _ = e.stdout.Write(schemas.WorkflowTest)
			return exitOK
		}
		if len(args) > 0 {
			return usageError(e, "schema", "unexpected argument %q", args[0])
		}
		_, _ = e.stdout.Write(schemas.Workflow)
		return exitOK
	},
}
