package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
)

// TestRunPageShowsFileVersion: the run page names the version of its workflow file a run is
// on (its text's sha256, shortened), and the new one once the run is moved to another text.
func TestRunPageShowsFileVersion(t *testing.T) {
	f := newWebFixture(t)
	base := "wend: v1\nname: v\nsteps: [{id: w, wait_for_signal: go}]\n"
	run := f.start("v1", base)
	f.settle("v1", waitingForSignal)
	version := func() string {
		t.Helper()
		code, _, page := f.send(req{Method: "GET", Path: "/ui/runs/v1", Session: true})
		if code != http.StatusOK {
			t.Fatalf("run page: %d", code)
		}
		_, after, ok := strings.Cut(page, `id="spec-version" title="sha256 `)
		if !ok {
			t.Fatalf("no file version on the run page:\n%s", page)
		}
		full, rest, _ := strings.Cut(after, `">version `)
		short, _, _ := strings.Cut(rest, "<")
		if !strings.HasPrefix(full, short) || len(short) != 12 {
			t.Fatalf("version %q of %q", short, full)
		}
		return full
	}
	if got := version(); got != run.SpecSHA256 {
		t.Fatalf("page names version %s, the run is on %s", got, run.SpecSHA256)
	}
	res, err := f.srv.Migrate(context.Background(), "v1", api.MigrateRequest{Source: base + "output: moved\n"})
	if err != nil || !res.Moved {
		t.Fatalf("migrate: %+v %v", res, err)
	}
	if got := version(); got != res.ToSHA256 || got == run.SpecSHA256 {
		t.Fatalf("after the move the page names version %s, want %s", got, res.ToSHA256)
	}
}
