//go:build unix

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
)

const searchFlow = `wend: v1
name: searched
search:
  customer: {type: string, value: "${{ input.customer }}"}
  amount: {type: number, value: "${{ state.total }}"}
steps:
  - wait_for_signal: total
    set: {total: "${{ signal }}"}
  - wait_for_signal: done
`

// searchID is the run id a list line of this test starts with.
var searchID = regexp.MustCompile(`^search-\S+`)

// registerSearchAttributes adds the wend attributes of searchFlow to the dev server's
// namespace, as `temporal operator search-attribute create` does, and waits until the
// namespace lists them.
func registerSearchAttributes(t *testing.T) {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: env.addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want := map[string]enumspb.IndexedValueType{
		"wend_customer": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"wend_amount":   enumspb.INDEXED_VALUE_TYPE_DOUBLE,
	}
	if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: "default", SearchAttributes: want}); err != nil {
		t.Fatalf("add search attributes: %v", err)
	}
	for {
		resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
		if err != nil {
			t.Fatalf("list search attributes: %v", err)
		}
		if resp.GetCustomAttributes()["wend_customer"] != 0 && resp.GetCustomAttributes()["wend_amount"] != 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestSearchFieldsOnTemporal: with the attributes registered, a run keeps its search fields
// in them as its state changes, and wend list --where finds runs by them on the cluster.
func TestSearchFieldsOnTemporal(t *testing.T) {
	registerSearchAttributes(t)
	w := startWorker(t, "wend", filepath.Join(t.TempDir(), "worker"))
	defer w.stop(t)
	file := filepath.Join(t.TempDir(), "searched.wend.yaml")
	if err := os.WriteFile(file, []byte(searchFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	tc := func(args ...string) result {
		return cli(t, time.Minute, env.wendTemporal, append(args, "--temporal", env.addr)...)
	}
	for _, r := range []struct{ id, input string }{
		{"search-ann", `{"customer": "ann"}`}, {"search-bob", `{"customer": "bob"}`}, {"search-quote", `{"customer": "o'hara"}`},
		{"search-dquote", `{"customer": "say \"hi\""}`},
	} {
		if res := tc("run", file, "--id", r.id, "--input", r.input, "--detach"); res.code != 0 {
			t.Fatalf("run %s: %d %s", r.id, res.code, res.stderr)
		}
	}
	// Visibility follows the upserts a little later: wait for the listing to settle.
	listed := func(where string, want ...string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			r := tc("list", "--where", where)
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				if id := searchID.FindString(line); id != "" {
					got = append(got, id)
				}
			}
			if r.code == 0 && strings.Join(got, " ") == strings.Join(want, " ") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("list --where %s: exit %d, runs %v, want %v; stderr %s", where, r.code, got, want, r.stderr)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	listed(`customer = "ann"`, "search-ann")
	listed(`customer = "o'hara"`, "search-quote")
	listed(`customer = "say \"hi\""`, "search-dquote") // left to the local check
	if r := tc("signal", "search-ann", "total", "--data", "150"); r.code != 0 {
		t.Fatalf("signal: %d %s", r.code, r.stderr)
	}
	if r := tc("signal", "search-bob", "total", "--data", "20"); r.code != 0 {
		t.Fatalf("signal: %d %s", r.code, r.stderr)
	}
	listed(`amount >= 100 and status = running`, "search-ann")
	listed(`amount < 100`, "search-bob")
	for _, id := range []string{"search-ann", "search-bob", "search-quote", "search-dquote"} {
		tc("cancel", id)
	}
}
