// Package schemas holds the JSON Schemas wend publishes, embedded so that the binary
// (`wend schema`, `wend validate`) never reads them from disk or the network.
//
// workflow.schema.json describes a workflow file for editors (yaml-language-server shows its
// descriptions on hover and completes its keys) and is the first check `wend validate` runs.
// It encodes docs/language.md exactly; a test parses that document's tables and fails when the
// two disagree. Rules a schema cannot express well (exactly one step kind, step ids, expressions,
// positive durations) are checked in package spec.
//
// The package is a leaf: it imports only the standard library.
package schemas
