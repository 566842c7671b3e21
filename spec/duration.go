package spec

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Duration is a positive span of time written as a Go duration with an extra `d` (24h) unit.
type Duration struct {
	D   time.Duration
	Pos Pos
}

// IsSet reports whether the duration was written in the file.
func (d Duration) IsSet() bool { return d.D != 0 }

var durationPart = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h|d)`)

// errDurationSyntax is returned by ParseDuration for text that is not a duration.
var errDurationSyntax = errors.New("expected a duration like 30s, 5m, 2h or 7d")

// ParseDuration parses "1d12h", "300ms", "5m30s". It does not accept signs or a bare number.
func ParseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, errDurationSyntax
	}
	var total float64
	for rest := s; rest != ""; {
		m := durationPart.FindStringSubmatch(rest)
		if m == nil {
			return 0, errDurationSyntax
		}
		n, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, errDurationSyntax
		}
		total += n * float64(unitOf(m[2]))
		rest = rest[len(m[0]):]
	}
	if total > float64(1<<63-1) {
		return 0, fmt.Errorf("duration %q is too long", s)
	}
	return time.Duration(total), nil
}

func unitOf(u string) time.Duration {
	switch u {
	case "ns":
		return time.Nanosecond
	case "us", "µs":
		return time.Microsecond
	case "ms":
		return time.Millisecond
	case "s":
		return time.Second
	case "m":
		return time.Minute
	case "h":
		return time.Hour
	}
	return 24 * time.Hour // "d"
}
