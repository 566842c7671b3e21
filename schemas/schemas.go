package schemas

import _ "embed" // for go:embed

// WorkflowID is the $id of the workflow schema, the URL yaml-language-server modelines name.
const WorkflowID = "https://raw.githubusercontent.com/wendflow/wend/main/schemas/workflow.schema.json"

// Workflow is the JSON Schema (draft 2020-12) of a workflow file. Treat it as read-only: it is
// shared by every caller.
//
//go:embed workflow.schema.json
var Workflow []byte

// HistoryExportID is the $id of the history export schema.
const HistoryExportID = "https://raw.githubusercontent.com/wendflow/wend/main/schemas/history-export.schema.json"

// HistoryExport is the JSON Schema (draft 2020-12) of a run's history export
// (`schema: wend.history-export/v1`, built by history/export). Treat it as read-only.
//
//go:embed history-export.schema.json
var HistoryExport []byte

// WorkflowTestID is the $id of the workflow test schema.
const WorkflowTestID = "https://raw.githubusercontent.com/wendflow/wend/main/schemas/workflow-test.schema.json"

// WorkflowTest is the JSON Schema (draft 2020-12) of a workflow test file
// (NAME.wend.test.yaml, run by `wend test`). Treat it as read-only.
//
//go:embed workflow-test.schema.json
var WorkflowTest []byte
