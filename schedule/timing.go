package schedule

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Timing says when a schedule fires: on a cron calendar in a time zone, or every fixed
// interval counted from the Unix epoch (so `every: 1h` fires on the hour, whenever wend started).
type Timing struct {
	cron  *cron.SpecSchedule // nil for an interval
	every time.Duration
	loc   *time.Location
}

// cronParser accepts the five standard fields and the @hourly-style names. robfig/cron's
// parser is the one Kubernetes CronJob uses; wend only parses with it and computes fire times
// itself (Next), because cron's own Next fires twice in a repeated hour.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCron checks a cron expression: 5 fields (minute hour day-of-month month day-of-week) or
// @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly.
func ParseCron(expr string) (sched *cron.SpecSchedule, err error) {
	e := strings.TrimSpace(expr)
	switch {
	case e == "":
		return nil, errors.New("empty cron expression")
	case strings.HasPrefix(e, "TZ=") || strings.HasPrefix(e, "CRON_TZ="):
		return nil, errors.New("a time zone inside cron is not taken here; use the schedule's timezone")
	case strings.HasPrefix(e, "@every"):
		return nil, errors.New("@every is not a cron calendar; use the schedule's every: DURATION")
	}
	defer func() { // a parser of untrusted text must never take the process down
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("invalid cron expression %q", expr)
		}
	}()
	s, err := cronParser.Parse(e)
	if err != nil {
		return nil, fmt.Errorf("invalid cron expression %q: %v", expr, err)
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("invalid cron expression %q", expr)
	}
	if spec.Dom&^starBit == 0 || spec.Month&^starBit == 0 || spec.Hour&^starBit == 0 || spec.Minute&^starBit == 0 {
		return nil, fmt.Errorf("cron expression %q matches no time", expr)
	}
	return spec, nil
}

const starBit = 1 << 63

// LoadZone resolves an IANA time zone name; "" is UTC. "Local" is refused: a schedule must
// fire at the same times on every machine.
func LoadZone(name string) (*time.Location, error) {
	switch name {
	case "", "UTC":
		return time.UTC, nil
	case "Local":
		return nil, errors.New(`"Local" depends on the machine; name an IANA zone such as "Europe/Paris"`)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q (want an IANA name such as \"America/New_York\")", name)
	}
	return loc, nil
}

// MinEvery is the shortest interval: a schedule firing faster than once a second would spend
// the store's commits on bookkeeping.
const MinEvery = time.Second

// NewTiming compiles a cron expression or an interval (exactly one) in a zone.
func NewTiming(cronExpr string, every time.Duration, zone string) (Timing, error) {
	loc, err := LoadZone(zone)
	if err != nil {
		return Timing{}, err
	}
	switch {
	case cronExpr != "" && every != 0:
		return Timing{}, errors.New("give cron or every, not both")
	case cronExpr != "":
		s, err := ParseCron(cronExpr)
		if err != nil {
			return Timing{}, err
		}
		return Timing{cron: s, loc: loc}, nil
	case every < MinEvery:
		if every == 0 {
			return Timing{}, errors.New("give cron or every")
		}
		return Timing{}, fmt.Errorf("every %s is under the minimum of %s", every, MinEvery)
	}
	return Timing{every: every, loc: loc}, nil
}

// searchDays bounds the calendar walk: "0 0 29 2 1" (Feb 29th or Mondays) needs under 8 years.
const searchDays = 8 * 366

// Next returns the first fire time strictly after t, or the zero time when there is none.
//
// A cron calendar is a list of wall-clock times in the schedule's zone, each firing once:
// a time that does not exist (skipped by a spring-forward change) fires at the first instant
// after the gap, once however many skipped times map to it; a time that exists twice (a
// fall-back change) fires at its first occurrence only.
func (tm Timing) Next(t time.Time) time.Time {
	if tm.cron == nil {
		if tm.every <= 0 {
			return time.Time{}
		}
		n := t.UnixNano()/int64(tm.every)*int64(tm.every) + int64(tm.every)
		return time.Unix(0, n).UTC()
	}
	s := tm.cron
	// No wall time before t's own resolves after t: a skipped one maps to the gap's end, whose
	// wall reading is later than the skipped times, and a repeated one to its first occurrence.
	from := wallOf(t.In(tm.loc)).Truncate(time.Minute)
	day := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC)
	for i := 0; i < searchDays; i, day = i+1, day.AddDate(0, 0, 1) {
		if !dayMatches(s, day) {
			continue
		}
		h0 := 0
		if i == 0 {
			h0 = from.Hour() // the first day starts at from
		}
		for h := h0; h < 24; h++ {
			if s.Hour&(1<<uint(h)) == 0 {
				continue
			}
			for m := 0; m < 60; m++ {
				if s.Minute&(1<<uint(m)) == 0 {
					continue
				}
				wall := day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
				if wall.Before(from) {
					continue
				}
				if at := resolve(wall, tm.loc); at.After(t) {
					return at
				}
			}
		}
	}
	return time.Time{}
}

func dayMatches(s *cron.SpecSchedule, d time.Time) bool {
	if s.Month&(1<<uint(d.Month())) == 0 {
		return false
	}
	dom := s.Dom&(1<<uint(d.Day())) != 0
	dow := s.Dow&(1<<uint(d.Weekday())) != 0
	if s.Dom&starBit != 0 || s.Dow&starBit != 0 { // cron's rule: a * in either means both must match
		return dom && dow
	}
	return dom || dow
}

// resolve maps a wall-clock time (given as the same fields in UTC) to the instant it names in
// loc: the first of two, or the end of the gap when the wall time was skipped.
func resolve(wall time.Time, loc *time.Location) time.Time {
	_, before := wall.Add(-24 * time.Hour).In(loc).Zone()
	if _, after := wall.Add(24 * time.Hour).In(loc).Zone(); before == after {
		return wall.Add(-time.Duration(before) * time.Second) // no change of offset near: one instant
	}
	var first, later time.Time
	for _, probe := range []time.Duration{-24 * time.Hour, 0, 24 * time.Hour} {
		_, off := wall.Add(probe).In(loc).Zone()
		at := wall.Add(-time.Duration(off) * time.Second)
		if w := wallOf(at.In(loc)); w.Equal(wall) {
			if first.IsZero() || at.Before(first) {
				first = at
			}
		} else if w.After(wall) && (later.IsZero() || at.Before(later)) {
			later = at
		}
	}
	if !first.IsZero() {
		return first
	}
	start, _ := later.In(loc).ZoneBounds() // the gap ends where the zone after it starts
	if start.IsZero() || wallOf(start.In(loc)).After(wallOf(later.In(loc))) {
		return later
	}
	return start
}

// wallOf is t's wall-clock reading as the same fields in UTC, comparable with a wall time.
func wallOf(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// Jitter is how long after its nominal time a fire starts: a spread in [0, max) that depends
// only on the schedule id and the nominal time, so every replay after a crash picks the same.
func Jitter(id string, nominal time.Time, max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d", id, nominal.UnixNano())
	return time.Duration(h.Sum64() % uint64(max))
}
