package server

import (
	"fmt"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

// A page of GET /v1/runs with a search clause is read through the store's search index
// (listSearch): the entries of one clause, then the records of the page's runs only. A page
// without a workflow id, or whose clause too many runs pass, is read from the store's index
// of runs in start order (boltstore's started index), in slices of listSlice runs, each one
// short read that lets commits in between, and at most listScanMax runs per page: a filter
// that few runs pass answers a shorter page (even an empty one) with a cursor to go on from,
// rather than reading the whole store for one page. Clients follow next_cursor until there is
// none (client.Client.List does).
const (
	listSlice   = 256
	listScanMax = 16 * listSlice
)

// newestReader is a store that reads runs newest first through an index, a slice at a time
// (boltstore.Store.RunsNewest).
type newestReader interface {
	RunsNewest(afterT time.Time, afterID string, max, want int, keep func(history.Run) bool) (runs []history.Run, lastT time.Time, lastID string, end, ok bool, err error)
}

// searchReader is a store that reads the runs passing a search clause newest first through
// its search index, a page at a time (boltstore.Store.SearchNewest).
type searchReader interface {
	SearchNewest(f history.RunFilter, afterT time.Time, afterID string, want int, keep func(history.Run) bool) (runs []history.Run, end, ok bool, err error)
}

// listSearch reads one page of q's runs, which q's search clauses select, through sr; ok is
// false when the index cannot serve them (a clause more runs pass than a page reads entries
// for), and the caller lists through the started index instead.
func listSearch(sr searchReader, q api.ListQuery, limit int, afterT time.Time, afterID string) (page api.RunPage, ok bool, err error) {
	runs, _, ok, err := sr.SearchNewest(q.StoreFilter(), afterT, afterID, limit+1, q.Matcher())
	if err != nil {
		return api.RunPage{}, true, wrap(fmt.Errorf("list runs: %w", err))
	}
	if !ok {
		return api.RunPage{}, false, nil
	}
	page = api.RunPage{Runs: runs}
	if page.Runs == nil {
		page.Runs = []history.Run{}
	}
	if len(page.Runs) > limit {
		page.Runs = page.Runs[:limit]
		last := page.Runs[limit-1]
		page.NextCursor = encodeCursor(last.StartedAt, last.RunID)
	}
	return page, true, nil
}

// listNewest reads one page of q's runs after (afterT, afterID) (afterID "": from the newest)
// through nr; ok is false when the store has no such index, and the caller lists otherwise.
func listNewest(nr newestReader, q api.ListQuery, limit int, afterT time.Time, afterID string) (page api.RunPage, ok bool, err error) {
	keep := q.Matcher()
	page = api.RunPage{Runs: []history.Run{}}
	for scanned := 0; scanned < listScanMax; scanned += listSlice {
		runs, t, id, end, indexed, err := nr.RunsNewest(afterT, afterID, listSlice, limit+1-len(page.Runs), keep)
		if err != nil {
			return api.RunPage{}, true, wrap(fmt.Errorf("list runs: %w", err))
		}
		if !indexed {
			return api.RunPage{}, false, nil
		}
		page.Runs = append(page.Runs, runs...)
		if len(page.Runs) > limit {
			page.Runs = page.Runs[:limit]
			last := page.Runs[limit-1]
			page.NextCursor = encodeCursor(last.StartedAt, last.RunID)
			return page, true, nil
		}
		if end {
			return page, true, nil
		}
		afterT, afterID = t, id
	}
	page.NextCursor = encodeCursor(afterT, afterID) // the last run read: the next page goes on after it
	return page, true, nil
}
