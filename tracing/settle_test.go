package tracing

import "time"

// settle waits until o's span builder has taken every queued event.
func settle(o *Observer) {
	for len(o.queue) > 0 {
		time.Sleep(100 * time.Microsecond)
	}
}
