package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/app/apptest"
)

// TestUIBatchPages: the batches page lists each batch linked to its page, which shows its
// counts; both escape what the request carried; without batches they answer 501.
func TestUIBatchPages(t *testing.T) {
	_, srv := apptest.Over(t, nil, nil)
	hs := httptest.NewServer(New(srv))
	t.Cleanup(hs.Close)
	get := func(path string) (int, string) {
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/ui/batches"); code != http.StatusNotImplemented {
		t.Fatalf("without batches: %d, want 501", code)
	}
	bs := apptest.Batches(t, srv, nil)
	bt, _, err := bs.Create(api.BatchRequest{ID: "b1", Operation: api.BatchOpCancel, Where: `id ~ "<i>"`, Reason: "<b>why</b>"})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); bt.Open() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		bt, _ = bs.Get("b1")
	}
	code, body := get("/ui/batches")
	for _, want := range []string{`data-batch="b1"`, `href="/ui/batches/b1"`, `data-status="completed"`, `id ~ &#34;&lt;i&gt;&#34;`} {
		if !strings.Contains(body, want) {
			t.Errorf("list lacks %s", want)
		}
	}
	if code != 200 || strings.Contains(body, "<i>") {
		t.Fatalf("list: %d\n%s", code, body)
	}
	code, body = get("/ui/batches/b1")
	for _, want := range []string{`id="batch-status">completed<`, `0 of 0: 0 done, 0 failed, 0 skipped`, `&lt;b&gt;why&lt;/b&gt;`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if code != 200 || strings.Contains(body, "<b>why") {
		t.Fatalf("page: %d\n%s", code, body)
	}
	if code, _ := get("/ui/batches/nope"); code != http.StatusNotFound {
		t.Fatalf("unknown batch: %d, want 404", code)
	}
}
