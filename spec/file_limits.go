package spec

// Limits on a workflow file, checked before anything walks its node tree. They keep a hostile
// or broken file from costing more than a few milliseconds: yaml.v3's own alias protection does
// not cover code that walks yaml.Node trees, and its duplicate-key check is quadratic.
const (
	MaxFileBytes       = 1 << 20 // 1 MiB
	MaxDepth           = 64      // nesting of mappings and sequences
	MaxKeysPerMapping  = 1000
	MaxNodes           = 100_000 // every scalar, mapping and sequence node
	MaxExpressionBytes = 4096
	MaxExpressionNodes = 1000
	MaxIncludeDepth    = 16 // run_workflow nesting followed by validation
)
