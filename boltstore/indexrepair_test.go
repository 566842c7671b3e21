package boltstore

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestRepairIndexes: each way an index can disagree with the run records (an entry missing, one
// no record calls for, one damaged, a head miscounting) is reported by Check and put right by
// RepairIndexes, which says what it changed; Check is then clean, and a second repair finds
// nothing. A damaged run record is left as it is, its entries too.
func TestRepairIndexes(t *testing.T) {
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	seed := func(t *testing.T) string {
		path := filepath.Join(t.TempDir(), "wend.db")
		s, err := Open(path, Options{})
		must(t, err)
		a := storetest.Started("wa", "ra", at)
		a.Run.Search = map[string]any{"customer": "ann", "amount": 10.0}
		b := storetest.Started("wa", "rb", at.Add(time.Second))
		b.Run.Search = map[string]any{"vip": true}
		commitRun(t, s, a)
		commitRun(t, s, b)
		must(t, s.Close())
		return path
	}
	cases := []struct {
		name    string
		damage  func(tx *bolt.Tx) error
		check   []string // what Check reports
		repairs []string // what RepairIndexes says
	}{
		{
			name: "search entry missing",
			damage: func(tx *bolt.Tx) error {
				return tx.Bucket(bucketSearch).Delete(testSearchKey("customer", "ann", at, "ra"))
			},
			check:   []string{`search index: entry run "ra", customer = "ann" is missing: its run is hidden from an equality filter on the field`},
			repairs: []string{`search index: put run "ra", customer = "ann"`},
		},
		{
			name:    "search bucket gone",
			damage:  func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketSearch) },
			check:   []string{`search index: entry run "ra", amount = 10 is missing: its run is hidden from an equality filter on the field`, `search index: entry run "ra", customer = "ann" is missing: its run is hidden from an equality filter on the field`, `search index: entry run "rb", vip = true is missing: its run is hidden from an equality filter on the field`},
			repairs: []string{`search index: put run "ra", amount = 10`, `search index: put run "ra", customer = "ann"`, `search index: put run "rb", vip = true`},
		},
		{
			name: "search entries no record calls for",
			damage: func(tx *bolt.Tx) error {
				b := tx.Bucket(bucketSearch)
				for _, k := range [][]byte{testSearchKey("customer", "bob", at, "ra"), testSearchKey("customer", "ann", at, "gone")} {
					if err := b.Put(k, indexEntry(k)); err != nil {
						return err
					}
				}
				return nil
			},
			check: []string{`search index: entry run "gone", customer = "ann" names no run holding that value`, `search index: entry run "ra", customer = "bob" names no run holding that value`},
			repairs: []string{`search index: deleted run "gone", customer = "ann", which no run record calls for`,
				`search index: deleted run "ra", customer = "bob", which no run record calls for`},
		},
		{
			name: "search entry damaged",
			damage: func(tx *bolt.Tx) error {
				return tx.Bucket(bucketSearch).Put(testSearchKey("vip", true, at.Add(time.Second), "rb"), []byte{1, 2, 3, 4, 5})
			},
			check:   []string{`search index: entry run "rb", vip = true: checksum mismatch: the record is damaged`},
			repairs: []string{`search index: put run "rb", vip = true`},
		},
		{
			name:    "workflow entry missing",
			damage:  func(tx *bolt.Tx) error { return tx.Bucket(bucketWorkflows).Delete(workflowKey("wa", "rb")) },
			check:   []string{`run rb: missing from the workflow index`, `workflow index: "wa" counts 2 run(s), 1 indexed`},
			repairs: []string{`workflow index: put run "rb" under workflow "wa"`},
		},
		{
			name: "workflow entry no record calls for",
			damage: func(tx *bolt.Tx) error {
				k := workflowKey("wz", "ra")
				return tx.Bucket(bucketWorkflows).Put(k, indexEntry(k))
			},
			check:   []string{`workflow index: "wz" has no head`, `workflow index: wz -> run ra does not match a run record`},
			repairs: []string{`workflow index: deleted run "ra" under workflow "wz", which no run record calls for`},
		},
		{
			name: "workflow head miscounts",
			damage: func(tx *bolt.Tx) error {
				p := workflowPrefix("wa")
				return tx.Bucket(bucketWorkflows).Put(p, indexHead(p, 7))
			},
			check:   []string{`workflow index: "wa" counts 7 run(s), 2 indexed`},
			repairs: []string{`workflow index: workflow "wa" counts 2 run(s)`},
		},
		{
			name: "damaged run record keeps its entries",
			damage: func(tx *bolt.Tx) error {
				v := slices.Clone(tx.Bucket(bucketRuns).Get([]byte("rb")))
				v[len(v)-2] ^= 0x20
				return tx.Bucket(bucketRuns).Put([]byte("rb"), v)
			},
			check:   nil, // the record's damage itself, which Check names; no index problem
			repairs: nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := seed(t)
			db, err := bolt.Open(path, 0o600, nil)
			must(t, err)
			must(t, db.Update(tc.damage))
			must(t, db.Close())
			s := openAt(t, path, Options{})
			problems, err := s.Check()
			must(t, err)
			if tc.check != nil && !slices.Equal(problems, tc.check) {
				t.Errorf("check found\n%q\nwant\n%q", problems, tc.check)
			}
			got, err := s.RepairIndexes()
			must(t, err)
			if !slices.Equal(got, tc.repairs) {
				t.Errorf("repair said\n%q\nwant\n%q", got, tc.repairs)
			}
			if again, err := s.RepairIndexes(); err != nil || len(again) != 0 {
				t.Errorf("a second repair said %q %v, want nothing", again, err)
			}
			after, err := s.Check()
			must(t, err)
			if tc.check != nil && len(after) != 0 {
				t.Errorf("check after the repair: %q", after)
			}
			if tc.check == nil && !slices.Equal(after, problems) {
				t.Errorf("check after the repair %q, before %q: want the same", after, problems)
			}
			if tc.check != nil {
				runs, err := s.Runs(history.RunFilter{Search: []history.SearchCond{{Field: "customer", Op: "=", Value: "ann"}}})
				if err != nil || fmtIDs(runs) != "[ra]" {
					t.Errorf("customer = ann after the repair: %v %v", runIDs(runs), err)
				}
			}
		})
	}
}

// BenchmarkRepairIndexesSound is the watchdog's minute's index repair over 20,000 runs with
// two search values each, when the indexes are sound: a scan that changes nothing.
func BenchmarkRepairIndexesSound(b *testing.B) {
	const runs = 20_000
	s, err := Open(filepath.Join(b.TempDir(), "wend.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	for i := 0; i < runs; i += 500 {
		var c history.Commit
		for j := i; j < i+500; j++ {
			u := storetest.Started(fmt.Sprintf("w%d", j), fmt.Sprintf("r%d", j), at.Add(time.Duration(j)*time.Second))
			u.Run.Search = map[string]any{"customer": fmt.Sprintf("c%d", j%1000), "amount": float64(j)}
			c.Runs = append(c.Runs, u)
		}
		if err := s.Commit(context.Background(), c); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if got, err := s.RepairIndexes(); err != nil || len(got) != 0 {
			b.Fatalf("repair of sound indexes: %q %v", got, err)
		}
	}
}
