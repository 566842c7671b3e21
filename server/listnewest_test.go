package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// GET /v1/runs over boltstore pages through its started index in bounded slices, or through
// its search index for a where clause on a search field; followed cursor by cursor, it lists
// exactly what the same filter lists over a MemStore, where every page reads every run. A filter few runs pass answers short pages with a cursor, never
// more than listScanMax runs read for one page.
func TestListPagesThroughTheStartedIndex(t *testing.T) {
	bolt, err := boltstore.Open(filepath.Join(t.TempDir(), "wend.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bolt.Close() })
	mem := history.NewMemStore()
	const n = 2*listScanMax + 300
	var c history.Commit
	for i := range n {
		u := storetest.Started(fmt.Sprintf("wf%d", i%50), fmt.Sprintf("r%05d", i), listT0.Add(time.Duration(i/3)*time.Second))
		u.Run.Name = []string{"alpha", "beta"}[i%2]
		u.Run.Status = history.StatusCompleted
		if i%1000 == 7 { // rare: fewer than one per page's reads
			u.Run.Status = history.StatusFailed
		}
		u.Run.Search = map[string]any{"amount": float64(i % 900), "customer": fmt.Sprintf("c%d", i%7)}
		if i%3 == 0 {
			u.Run.Search["paid_at"] = listT0.Add(time.Duration(i%500) * time.Minute).Format(time.RFC3339)
		}
		c.Runs = append(c.Runs, u)
	}
	for _, st := range []history.Store{bolt, mem} {
		if err := st.Commit(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	follow := func(t *testing.T, s history.Store, query string) (ids []string, pages []api.RunPage) {
		hs := httptest.NewServer(New(nil, s))
		defer hs.Close()
		f := &listFixture{t: t, hs: hs}
		v, err := url.ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			p := f.page(v.Encode())
			pages = append(pages, p)
			ids = append(ids, runIDs(p.Runs)...)
			if p.NextCursor == "" {
				return ids, pages
			}
			v.Set("cursor", p.NextCursor)
		}
		t.Fatalf("%s: the cursors do not end", query)
		return nil, nil
	}
	for _, q := range []string{"", "limit=1000", "status=failed", "name=beta&limit=333", "q=r0001",
		"started_before=" + listT0.Add(100*time.Second).Format(time.RFC3339),
		"where=amount < 20", "where=amount >= 850&limit=77", "where=customer = c3&limit=500", "where=customer != c3",
		"where=amount > 100 and customer = c1&limit=41", "where=status = failed and amount <= 500",
		"where=paid_at >= " + listT0.Add(400*time.Minute).Format(time.RFC3339) + "&limit=50"} {
		t.Run(q, func(t *testing.T) {
			got, pages := follow(t, bolt, q)
			want, _ := follow(t, mem, q)
			if !slices.Equal(got, want) {
				t.Fatalf("over boltstore %d runs, over a MemStore %d: first %v vs %v", len(got), len(want), got[:min(5, len(got))], want[:min(5, len(want))])
			}
			if q == "status=failed" && len(pages) < n/listScanMax {
				t.Fatalf("a rare status read in %d page(s): a page read more than %d runs", len(pages), listScanMax)
			}
		})
	}
}
