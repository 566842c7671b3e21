package metrics

import (
	"fmt"
	"testing"
)

// A few answers as a map does, below fewMax entries and past it.
func TestFewAnswersAsAMap(t *testing.T) {
	var f few[int]
	want := map[string]int{}
	check := func(when string) {
		t.Helper()
		for k := range 3 * fewMax {
			key := fmt.Sprint("k", k)
			got, ok := f.get(key)
			w, wok := want[key]
			if got != w || ok != wok {
				t.Fatalf("%s: get(%s) = %d, %v; want %d, %v", when, key, got, ok, w, wok)
			}
		}
	}
	for _, n := range []int{fewMax - 1, 2 * fewMax} {
		for k := range n {
			key := fmt.Sprint("k", k)
			f.set(key, k)
			want[key] = k
		}
		f.set("k0", -1)
		want["k0"] = -1
		check(fmt.Sprint(n, " set"))
		for k := 0; k < n; k += 3 {
			key := fmt.Sprint("k", k)
			f.del(key)
			delete(want, key)
		}
		f.del("absent")
		check(fmt.Sprint(n, " deleted"))
	}
}
