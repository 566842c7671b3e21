// Package spec turns a workflow file (YAML, spec version v1) into a typed, checked Workflow.
//
// It owns the language: parsing with source positions, the JSON Schema check, the semantic
// checks the schema cannot express, and the compilation of every `${{ }}` expression with expr.
// It does no execution and no I/O beyond reading workflow files (run_workflow children).
//
// Invariants:
//   - No input panics or hangs: the raw bytes and the YAML node tree are bounded (size, depth,
//     node count, keys per mapping, no anchors or aliases) before anything walks them.
//   - Every finding is a Diagnostic with file, line, column and a path; all findings of a file
//     are reported, sorted by position.
//   - A Workflow returned without error diagnostics has every expression compiled against the
//     names in scope where it appears, so evaluation can fail only on data, never on a typo.
package spec
