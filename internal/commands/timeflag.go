package commands

import (
	"fmt"
	"time"
)

// listTime parses a time flag: an RFC 3339 time with a zone, or a date (YYYY-MM-DD), which
// stands for its first instant in UTC, so `--started-after 2026-11-30 --started-before
// 2026-12-01` is that day. Empty is no bound.
func listTime(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s: %q is not a date like 2024-05-01 or an RFC 3339 time like 2024-05-01T12:00:00Z", name, s)
}
