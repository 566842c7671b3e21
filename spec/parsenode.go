package spec

import "go.yaml.in/yaml/v3"

// ParseNode reads one YAML document under the rules of workflow files (size, depth and node
// limits; no anchors, aliases or duplicate keys) and returns its root mapping, or nil with
// findings. wend's other YAML formats (test files) share it so they refuse the same inputs.
func ParseNode(file string, data []byte) (*yaml.Node, Diagnostics) { return parseYAML(file, data) }
