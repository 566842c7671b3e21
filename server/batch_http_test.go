package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
)

// TestBatchesOnACluster: a server over a cluster whose backend runs no batches (no
// ClusterBatches given) says how to act on many runs there instead.
func TestBatchesOnACluster(t *testing.T) {
	hs := httptest.NewServer(Over(&fakeCluster{}))
	defer hs.Close()
	resp, err := http.Post(hs.URL+"/v1/batches", "application/json", strings.NewReader(`{"operation":"cancel","where":"status = running"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	wantError(t, resp.StatusCode, string(b), http.StatusNotImplemented, api.CodeUnsupported, "--where, which acts on each run from the command")
}
