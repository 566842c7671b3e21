module github.com/wendflow/wend

go 1.26

require (
	github.com/expr-lang/expr v1.17.8 // indirect
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
)
