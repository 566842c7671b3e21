package quantile

import (
	"testing"
	"time"
)

func TestMillis(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		var ds []time.Duration
		for _, v := range n {
			ds = append(ds, time.Duration(v)*time.Millisecond)
		}
		return ds
	}
	for _, c := range []struct {
		name string
		ds   []time.Duration
		p    int
		want float64
	}{
		{"empty", nil, 99, 0},
		{"one", ms(7), 50, 7},
		{"median of unsorted", ms(5, 1, 3), 50, 3},
		{"p99 of 100 is the 99th", ms(seq(100)...), 99, 99},
		{"p100 is the largest", ms(4, 9, 2), 100, 9},
		{"p0 is the smallest", ms(4, 9, 2), 0, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := append([]time.Duration(nil), c.ds...)
			if got := Millis(c.ds, c.p); got != c.want {
				t.Fatalf("Millis(%v, %d) = %v, want %v", c.ds, c.p, got, c.want)
			}
			for i := range in {
				if in[i] != c.ds[i] {
					t.Fatalf("Millis reordered its input: %v, was %v", c.ds, in)
				}
			}
		})
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i + 1
	}
	return s
}
