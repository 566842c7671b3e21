package schemas

import _ "embed" // for go:embed

// WorkflowID is the $id of the workflow schema, the URL yaml-language-server modelines name.
const WorkflowID = "https://wend.dev/schemas/workflow.schema.json"

// Workflow is the JSON Schema (draft 2020-12) of a workflow file. Treat it as read-only: it is
// shared by every caller.
//
//go:embed workflow.schema.json
var Workflow []byte
