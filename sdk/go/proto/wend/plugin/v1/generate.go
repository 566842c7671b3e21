package pluginv1

// Regenerate with `cd sdk/go && go generate ./proto/...`: protoc comes from Debian's
// protobuf-compiler, the Go generators are the versions pinned by the main module's tool
// directive (`go tool -n` run at the repository's root prints the path of the built tool), so
// the SDK module's go.mod names none of them.
//go:generate sh -c "protoc --plugin=protoc-gen-go=$(cd ../../../../../.. && go tool -n protoc-gen-go) --plugin=protoc-gen-go-grpc=$(cd ../../../../../.. && go tool -n protoc-gen-go-grpc) -I . --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative activities.proto"
