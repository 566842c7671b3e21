package commands

import (
	"fmt"
	"math"
	"testing"
)

func TestAppendSecondsIsFmts(t *testing.T) {
	for _, secs := range []float64{0, 0.0004, 0.0005, 1.23456, 12.5, 999.9999, 1234.5678, 1e9, -0.5, -12.25, math.Inf(1), math.Inf(-1), math.NaN()} {
		want := fmt.Sprintf("%7.3f", secs)
		if got := string(appendSeconds([]byte("x"), secs)); got != "x"+want {
			t.Errorf("appendSeconds(%v) = %q, want %q", secs, got, "x"+want)
		}
	}
}
