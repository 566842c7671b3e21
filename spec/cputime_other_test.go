//go:build !linux

package spec

import "time"

func threadCPU() (time.Duration, bool) { return 0, false }
