package interpreter

import (
	"maps"
	"strconv"
	"testing"
)

// A table answers as a map does through every size: in its slice up to tableFew entries, in a
// map past them, and back to empty when its entries are deleted; while in its slice it yields
// in the order entries were first set.
func TestTableActsAsAMap(t *testing.T) {
	for _, n := range []int{0, 1, 2, tableFew - 1, tableFew, tableFew + 1, 3 * tableFew} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var tb table[int]
			want := map[string]int{}
			check := func(when string) {
				t.Helper()
				if tb.len() != len(want) {
					t.Fatalf("%s: len %d, want %d", when, tb.len(), len(want))
				}
				if got := maps.Collect(tb.all()); !maps.Equal(got, want) {
					t.Fatalf("%s: entries %v, want %v", when, got, want)
				}
				for k, v := range want {
					if got, ok := tb.get(k); !ok || got != v || tb.at(k) != v {
						t.Fatalf("%s: get(%q) = %d, %v; at %d; want %d", when, k, got, ok, tb.at(k), v)
					}
				}
				if _, ok := tb.get("absent"); ok || tb.at("absent") != 0 {
					t.Fatalf("%s: an absent key was found", when)
				}
			}
			for i := range n {
				k := "k" + strconv.Itoa(i)
				tb.set(k, i)
				want[k] = i
			}
			check("set")
			if (tb.many != nil) != (n > tableFew) {
				t.Fatalf("%d entries: in a map %v, want a map only past %d", n, tb.many != nil, tableFew)
			}
			if n <= tableFew {
				i := 0
				for k := range tb.all() {
					if k != "k"+strconv.Itoa(i) {
						t.Fatalf("yielded %q at %d: not the order set", k, i)
					}
					i++
				}
			}
			for k := range want {
				tb.set(k, want[k]+100) // overwrite: no new entry
				want[k] += 100
			}
			check("overwritten")
			tb.del("absent")
			for i := 0; i < n; i += 2 {
				k := "k" + strconv.Itoa(i)
				tb.del(k)
				delete(want, k)
			}
			check("half deleted")
			for k := range want {
				tb.del(k)
				delete(want, k)
			}
			check("emptied")
			if tb.many != nil {
				t.Fatal("an emptied table keeps its map")
			}
			tb.set("again", 1)
			want["again"] = 1
			check("set after emptying")
		})
	}
}

// Yielding stops when the caller stops, in the slice and in the map.
func TestTableAllStopsEarly(t *testing.T) {
	for _, n := range []int{3, tableFew + 3} {
		var tb table[int]
		for i := range n {
			tb.set(strconv.Itoa(i), i)
		}
		seen := 0
		for range tb.all() {
			seen++
			if seen == 2 {
				break
			}
		}
		if seen != 2 {
			t.Fatalf("%d entries: yielded %d after the caller stopped at 2", n, seen)
		}
	}
}
