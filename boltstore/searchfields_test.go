package boltstore

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// SearchFields names each field the search index holds once, however many runs and values it
// has, fields of one length and of different lengths alike; a file with no search values has
// none.
func TestSearchFieldsNamesEachIndexedFieldOnce(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "wend.db"), Options{})
	if got, err := s.SearchFields(); err != nil || len(got) != 0 {
		t.Fatalf("empty store: %q, %v", got, err)
	}
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	var us []history.RunUpdate
	for i, vals := range []map[string]any{
		{"customer": "ann", "amount": 10.0, "vip": true},
		{"customer": "bob", "amount": 11.0, "a": "x", "ab": "y"},
		{"customer": "cy", "zz": false, "paid_at": "2026-05-01T08:00:00Z"},
	} {
		u := storetest.Started("w"+string(rune('a'+i)), "r"+string(rune('a'+i)), at.Add(time.Duration(i)*time.Second))
		u.Run.Search = vals
		us = append(us, u)
	}
	if err := s.Commit(context.Background(), history.Commit{Runs: us}); err != nil {
		t.Fatal(err)
	}
	got, err := s.SearchFields()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"a", "ab", "amount", "customer", "paid_at", "vip", "zz"}; !slices.Equal(got, want) {
		t.Fatalf("fields %q, want %q", got, want)
	}
}
