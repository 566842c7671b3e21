package batch

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/wendflow/wend/api"
)

// FuzzBatchRequest: any body POST /v1/batches decodes is checked without a panic, and refused,
// if it is, with a client error (4xx) saying so.
func FuzzBatchRequest(f *testing.F) {
	for _, s := range []string{
		`{"operation":"cancel","where":"status = running","rps":10}`,
		`{"operation":"signal","run_ids":["a","b"],"signal":{"name":"go","data":{"x":1},"id":"s"}}`,
		`{"operation":"purge","where":"started < 2026-01-01"}`,
		`{"operation":"retry","run_ids":[""]}`,
		`{"operation":"terminate","where":"id ^= \"a b\" and","rps":-1}`,
		`{"id":"\u0000","operation":"cancel","run_ids":["x"]}`,
		`{"operation":"migrate","where":"name = w","migrate":{"file":"w.wend.yaml","source":"wend: v1\nname: w\nsteps: [{wait_for_signal: go}]\n","by":"ann"}}`,
		`{"operation":"migrate","run_ids":["a"],"migrate":{"source":"wend: v1\nname: w\nsteps: [{bogus: 1}]\n","by":"\u001b[31m"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req api.BatchRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		err := checkRequest(&req)
		if err == nil {
			return
		}
		var e *api.Error
		if !errors.As(err, &e) || e.Status < 400 || e.Status >= 500 || e.Message == "" {
			t.Fatalf("check(%s) = %v (%T), want a client error with a message", body, err, err)
		}
		if e.Status == http.StatusBadRequest && e.Code == "" {
			t.Fatalf("check(%s): no code", body)
		}
	})
}
