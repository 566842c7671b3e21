#!/bin/sh
# Regenerates the committed Python stubs in wend_plugin/_gen/ with Debian's tools:
#   apt-get install protobuf-compiler protobuf-compiler-grpc
# (protoc for *_pb2.py, grpc_python_plugin from the grpcio release Debian ships for *_pb2_grpc.py).
set -eu
cd "$(dirname "$0")/wend_plugin"
protoc --plugin=protoc-gen-grpc_python="$(command -v grpc_python_plugin)" \
	-I ../../../sdk/go/proto/wend/plugin/v1 -I ../../../examples/plugins/proto \
	--python_out=_gen --grpc_python_out=_gen \
	activities.proto health.proto grpc_controller.proto
