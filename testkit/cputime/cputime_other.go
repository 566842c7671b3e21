//go:build !unix

package cputime

import "time"

// Process is not measured here: benchmarks report 0 CPU.
func Process() time.Duration { return 0 }
