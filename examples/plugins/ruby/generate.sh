#!/bin/sh
# Regenerates the committed Ruby stubs in gen/ with Debian's tools, the command the plugin
# guide (../README.md) gives:
#   apt-get install ruby-grpc-tools
# (grpc_tools_ruby_protoc is protoc with the grpc gem's Ruby plugin: *_pb.rb and *_services_pb.rb).
set -eu
cd "$(dirname "$0")/../../.."
grpc_tools_ruby_protoc -I sdk/go/proto/wend/plugin/v1 -I examples/plugins/proto \
	--ruby_out=examples/plugins/ruby/gen --grpc_out=examples/plugins/ruby/gen \
	activities.proto health.proto grpc_controller.proto
