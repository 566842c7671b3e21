package pluginv1

// Regenerate with `go generate ./plugins/proto/...`: protoc comes from Debian's protobuf-compiler,
// the Go generators are the versions pinned by go.mod's tool directive (`go tool -n` prints the
// path of the built tool).
//go:generate sh -c "protoc --plugin=protoc-gen-go=$(go tool -n protoc-gen-go) --plugin=protoc-gen-go-grpc=$(go tool -n protoc-gen-go-grpc) -I . --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative activities.proto"
