package sdk

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// tryContext is a try's context.Context, made on first use. A lane must read the stream while
// a try runs only so that a Cancel from the host reaches the try's context; a handler that
// never looks at its context cannot be told to stop, so until it does the lane starts no
// receiver for the try and the try costs no goroutine.
type tryContext struct {
	parent   context.Context
	deadline time.Time
	// onMake is called, under mu, when the context is made before the try ended: a lane starts
	// its receiver there.
	onMake func(cancel context.CancelCauseFunc)

	made   atomic.Pointer[context.Context] // set once made: later uses take no lock
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelCauseFunc
	stop   context.CancelFunc
	cause  error // a cancel that came before the context was made
	ended  bool
}

func (c *tryContext) get() context.Context {
	if ctx := c.made.Load(); ctx != nil {
		return *ctx
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		ctx, cancel := context.WithCancelCause(c.parent)
		c.ctx, c.cancel = ctx, cancel
		if !c.deadline.IsZero() {
			c.ctx, c.stop = context.WithDeadline(ctx, c.deadline)
		}
		switch {
		case c.ended:
			cancel(nil)
		case c.cause != nil:
			cancel(c.cause)
		case c.onMake != nil:
			c.onMake(cancel)
		}
		made := c.ctx
		c.made.Store(&made)
	}
	return c.ctx
}

func (c *tryContext) Deadline() (time.Time, bool) { return c.get().Deadline() }
func (c *tryContext) Done() <-chan struct{}       { return c.get().Done() }
func (c *tryContext) Err() error                  { return c.get().Err() }
func (c *tryContext) Value(key any) any           { return c.get().Value(key) }

// cancelWith cancels the try with cause, now if its context is made, else once it is.
func (c *tryContext) cancelWith(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		c.cause = cause
		return
	}
	c.cancel(cause)
}

// err is the context's error without making it: a context never made was never cancelled,
// but its deadline may have passed.
func (c *tryContext) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx != nil {
		return c.ctx.Err()
	}
	if !c.deadline.IsZero() && !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// end marks the try over and releases its context; used reports whether it was made before.
func (c *tryContext) end() (used bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	if c.ctx == nil {
		return false
	}
	c.cancel(nil)
	if c.stop != nil {
		c.stop()
	}
	return true
}
