package schedule

import (
	"strings"
	"testing"
	"time"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := LoadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// fires lists the fire times of a timing from (exclusive), n of them, in RFC 3339 with offsets.
func fires(t *testing.T, tm Timing, from time.Time, n int, loc *time.Location) []string {
	t.Helper()
	var out []string
	for at := from; len(out) < n; {
		at = tm.Next(at)
		if at.IsZero() {
			t.Fatalf("no fire after %s", out)
		}
		out = append(out, at.In(loc).Format(time.RFC3339))
	}
	return out
}

// TestDaylightSavingNewYork: on the virtual clock, America/New_York's spring-forward (2:00
// EST -> 3:00 EDT, 2026-03-08) and fall-back (2:00 EDT -> 1:00 EST, 2026-11-01). A skipped
// local time fires once at the end of the gap; a repeated local time fires once, at its
// first occurrence; an interval ignores the zone.
func TestDaylightSavingNewYork(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	cases := []struct {
		name  string
		cron  string
		every time.Duration
		from  string
		want  []string
	}{
		{"spring daily in the gap fires at 3:00 EDT", "30 2 * * *", 0, "2026-03-07T00:00:00-05:00",
			[]string{"2026-03-07T02:30:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"spring every 15 minutes: the gap's four times fire once", "*/15 * * * *", 0, "2026-03-08T01:30:00-05:00",
			[]string{"2026-03-08T01:45:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:15:00-04:00"}},
		{"spring hourly", "@hourly", 0, "2026-03-08T00:30:00-05:00",
			[]string{"2026-03-08T01:00:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T04:00:00-04:00"}},
		{"fall daily in the repeated hour fires once", "30 1 * * *", 0, "2026-10-31T00:00:00-04:00",
			[]string{"2026-10-31T01:30:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"fall hourly: 1:00 once, then 2:00 EST", "0 * * * *", 0, "2026-11-01T00:30:00-04:00",
			[]string{"2026-11-01T01:00:00-04:00", "2026-11-01T02:00:00-05:00", "2026-11-01T03:00:00-05:00"}},
		{"fall every 30 minutes", "*/30 * * * *", 0, "2026-11-01T00:45:00-04:00",
			[]string{"2026-11-01T01:00:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-01T02:00:00-05:00"}},
		{"every hour counts elapsed time through fall-back", "", time.Hour, "2026-11-01T00:30:00-04:00",
			[]string{"2026-11-01T01:00:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T02:00:00-05:00"}},
		{"midnight on a plain day", "@daily", 0, "2026-06-01T12:00:00-04:00",
			[]string{"2026-06-02T00:00:00-04:00", "2026-06-03T00:00:00-04:00"}},
		{"day of month or day of week (cron's OR)", "0 9 1 * MON", 0, "2026-06-01T10:00:00-04:00",
			[]string{"2026-06-08T09:00:00-04:00", "2026-06-15T09:00:00-04:00", "2026-06-22T09:00:00-04:00", "2026-06-29T09:00:00-04:00", "2026-07-01T09:00:00-04:00"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tm, err := NewTiming(c.cron, c.every, "America/New_York")
			if err != nil {
				t.Fatal(err)
			}
			from, err := time.Parse(time.RFC3339, c.from)
			if err != nil {
				t.Fatal(err)
			}
			got := fires(t, tm, from, len(c.want), ny)
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Fatalf("fires after %s:\n got  %v\n want %v", c.from, got, c.want)
			}
		})
	}
}

func TestFebruary29thIsFound(t *testing.T) {
	tm, err := NewTiming("0 0 29 2 *", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	got := tm.Next(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC))
	if want := time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Fatalf("next Feb 29th = %s, want %s", got, want)
	}
	if tm, _ := NewTiming("0 0 30 2 *", 0, ""); !tm.Next(time.Now()).IsZero() {
		t.Fatal("Feb 30th should never fire")
	}
}

func TestTimingRefusals(t *testing.T) {
	cases := []struct {
		cron  string
		every time.Duration
		zone  string
		want  string
	}{
		{"", 0, "", "give cron or every"},
		{"* * * * *", time.Hour, "", "not both"},
		{"* * * *", 0, "", "expected exactly 5 fields"},
		{"61 * * * *", 0, "", "above maximum"},
		{"@every 1h", 0, "", "use the schedule's every"},
		{"TZ=UTC * * * * *", 0, "", "use the schedule's timezone"},
		{"* * * * *", 0, "Mars/Olympus", "unknown time zone"},
		{"* * * * *", 0, "Local", "depends on the machine"},
		{"", 500 * time.Millisecond, "", "under the minimum"},
	}
	for _, c := range cases {
		_, err := NewTiming(c.cron, c.every, c.zone)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewTiming(%q, %s, %q) = %v, want an error with %q", c.cron, c.every, c.zone, err, c.want)
		}
	}
}

func TestJitterIsStableAndBounded(t *testing.T) {
	n := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seen := map[time.Duration]bool{}
	for i := 0; i < 50; i++ {
		at := n.Add(time.Duration(i) * time.Hour)
		j := Jitter("nightly", at, time.Minute)
		if j < 0 || j >= time.Minute {
			t.Fatalf("jitter %s outside [0, 1m)", j)
		}
		if j != Jitter("nightly", at, time.Minute) {
			t.Fatal("jitter differs between two calls for one fire")
		}
		seen[j] = true
	}
	if len(seen) < 40 {
		t.Fatalf("jitter took only %d values over 50 fires", len(seen))
	}
}

func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"* * * * *", "*/5 1-3 * JAN-MAR MON", "@hourly", "0-60/0 * * * *", "1-0 * * * *", "*/ * * * *"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sched, err := ParseCron(s)
		if err == nil {
			Timing{cron: sched, loc: time.UTC}.Next(time.Unix(0, 0))
		}
	})
}
