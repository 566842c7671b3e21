package spec

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"300ms", 300 * time.Millisecond, true},
		{"5s", 5 * time.Second, true},
		{"1m30s", 90 * time.Second, true},
		{"2h", 2 * time.Hour, true},
		{"7d", 7 * 24 * time.Hour, true},
		{"1d12h", 36 * time.Hour, true},
		{"1.5h", 90 * time.Minute, true},
		{"10us", 10 * time.Microsecond, true},
		{"10µs", 10 * time.Microsecond, true},
		{"0s", 0, true}, // syntax is fine; positivity is the checker's
		{"", 0, false},
		{"5", 0, false},
		{"-5s", 0, false},
		{"5 s", 0, false},
		{"5w", 0, false},
		{"s", 0, false},
		{"99999999999d", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("ParseDuration(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if got != tt.want {
				t.Errorf("ParseDuration(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestRetryWait(t *testing.T) {
	list := &Retry{Backoff: []Duration{{D: 5 * time.Second}, {D: 30 * time.Second}}}
	exp := &Retry{Exponential: &Exponential{Initial: Duration{D: time.Second}, Factor: 2, Max: Duration{D: 5 * time.Second}}}
	tests := []struct {
		name string
		r    *Retry
		try  int
		want time.Duration
	}{
		{"list after try 1", list, 1, 5 * time.Second},
		{"list after try 2", list, 2, 30 * time.Second},
		{"list last repeats", list, 7, 30 * time.Second},
		{"exp try 1", exp, 1, time.Second},
		{"exp try 3", exp, 3, 4 * time.Second},
		{"exp capped", exp, 4, 5 * time.Second},
		{"exp far capped", exp, 60, 5 * time.Second},
		{"nil policy", nil, 1, 0},
		{"no backoff", &Retry{Tries: 3}, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Wait(tt.try); got != tt.want {
				t.Errorf("Wait(%d) = %v, want %v", tt.try, got, tt.want)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	keys := []string{"activity", "retry", "timeout", "heartbeat_timeout", "steps", "input"}
	tests := []struct{ in, want string }{
		{"retyr", "retry"},
		{"acivity", "activity"},
		{"timout", "timeout"},
		{"inptu", "input"},
		{"item", ""},
		{"zzz", ""},
		{"steps", "steps"},
	}
	for _, tt := range tests {
		if got := suggest(tt.in, keys); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
