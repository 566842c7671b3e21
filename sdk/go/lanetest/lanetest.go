// Package lanetest speaks the plugin side's Lane protocol from a test: send a request or a
// cancel, read a try's events up to its final one. The SDK's and the host's tests share it, so it
// is public in the SDK's module; only tests import it (internal/arch checks wend's packages).
package lanetest

import (
	"testing"

	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
)

// Lane is the host's end of a lane: a gRPC Lane stream or a fast lane's connection.
type Lane interface {
	Send(*pluginv1.ExecuteInput) error
	Recv() (*pluginv1.ExecuteEvent, error)
}

// Request sends a try's request on the lane.
func Request(t testing.TB, s Lane, req *pluginv1.ExecuteRequest) {
	t.Helper()
	if err := s.Send(&pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Request{Request: req}}); err != nil {
		t.Fatal(err)
	}
}

// Cancel sends a cancel on the lane.
func Cancel(t testing.TB, s Lane) {
	t.Helper()
	if err := s.Send(&pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Cancel{Cancel: &pluginv1.Cancel{Reason: "cancelled"}}}); err != nil {
		t.Fatal(err)
	}
}

// Final reads a try's events up to its final one; it fails the test if the lane ends first.
func Final(t testing.TB, s Lane) (heartbeats int, last *pluginv1.ExecuteEvent) {
	t.Helper()
	for {
		ev, err := s.Recv()
		if err != nil {
			t.Fatalf("lane ended before the try's final event: %v", err)
		}
		if ev.GetHeartbeat() != nil {
			heartbeats++
			continue
		}
		return heartbeats, ev
	}
}
