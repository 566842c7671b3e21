package engine

import (
	"sort"
	"sync"
	"time"
)

// Clock is the engine's time: the real one in production, a virtual one in tests that drive
// timers, timeouts and backoff without sleeping.
type Clock interface {
	Now() time.Time
	// AfterFunc runs f once d has passed; the returned func stops it.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// RealClock is the wall clock, in UTC.
type RealClock struct{}

// Now returns the current time in UTC.
func (RealClock) Now() time.Time { return time.Now().UTC() }

// AfterFunc wraps time.AfterFunc.
func (RealClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// FakeClock is a virtual clock: time moves only when Advance is called.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

// NewFakeClock starts a virtual clock at t.
func NewFakeClock(t time.Time) *FakeClock { return &FakeClock{now: t} }

// Now returns the virtual time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f at Now()+d.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// Advance moves time forward by d, running every timer that falls due, in time order.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
		var due *fakeTimer
		for len(c.timers) > 0 && c.timers[0].stopped {
			c.timers = c.timers[1:]
		}
		if len(c.timers) > 0 && !c.timers[0].at.After(end) {
			due = c.timers[0]
			c.timers = c.timers[1:]
			if due.at.After(c.now) {
				c.now = due.at
			}
		}
		if due == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		due.stopped = true
		c.mu.Unlock()
		due.f()
	}
}
