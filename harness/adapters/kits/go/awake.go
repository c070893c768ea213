package kit

// Bounds counted in the time this process could run (docs/adapters.md, "A stop
// is not silence"). A holder-pause SIGSTOPs a client with its adapter, and Go's
// clocks (monotonic readings, timers, context deadlines) run on meanwhile: a
// plain deadline would pass during the pause and answer "timed out" or
// "unknown" for the reply that comes right after SIGCONT. So a bound is counted
// in steps of AwakeStep, a step that took longer than two (the process was
// stopped) counting as two, as AdapterLock counts its own
// (harness/support/awake_time.h; kits/js/protocol.js, awakeTimer).

import (
	"context"
	"time"
)

// AwakeStep is the longest wait between two looks at the clock.
const AwakeStep = 50 * time.Millisecond

// awakeWait returns true once d of awake time has passed, false if stop closed first.
func awakeWait(d time.Duration, stop <-chan struct{}) bool {
	left, last := d, time.Now()
	timer := time.NewTimer(min(max(left, 0), AwakeStep))
	defer timer.Stop()
	for left > 0 {
		select {
		case <-stop:
			return false
		case <-timer.C:
		}
		now := time.Now()
		left -= min(now.Sub(last), 2*AwakeStep)
		last = now
		timer.Reset(min(max(left, 0), AwakeStep))
	}
	return true
}

// within waits for a value on ch for at most d of awake time; ok is false when the bound ran out.
func within[T any](d time.Duration, ch <-chan T) (value T, ok bool) {
	stop := make(chan struct{})
	expired := make(chan struct{})
	go func() {
		if awakeWait(d, stop) {
			close(expired)
		}
	}()
	defer close(stop)
	select {
	case value = <-ch:
		return value, true
	case <-expired:
		select { // a value that came in the same instant still counts
		case value = <-ch:
			return value, true
		default:
			return value, false
		}
	}
}

// waitContext is done once its awake bound has passed (or it was cancelled).
// Deadline() names the wall-clock time the bound would end without a stop: a
// library that sets its own deadline when the context has none (bsm/redislock's
// Obtain: one ttl) must see that the caller bounded it; the end itself is Done.
type waitContext struct {
	context.Context
	deadline time.Time
	expired  chan struct{}
}

func (c *waitContext) Deadline() (time.Time, bool) { return c.deadline, true }

// Err is DeadlineExceeded once the bound ran out, as a context with a deadline says.
func (c *waitContext) Err() error {
	select {
	case <-c.expired:
		return context.DeadlineExceeded
	default:
		return c.Context.Err()
	}
}

// WaitContext is done after d of awake time: the acquire's wait_ms, handed to the library.
func WaitContext(d time.Duration) (context.Context, context.CancelFunc) {
	inner, cancel := context.WithCancel(context.Background())
	ctx := &waitContext{Context: inner, deadline: time.Now().Add(d), expired: make(chan struct{})}
	go func() {
		if awakeWait(d, inner.Done()) {
			close(ctx.expired)
			cancel()
		}
	}()
	return ctx, cancel
}

// WaitOver says whether ctx (from WaitContext) ended because its bound ran out.
func WaitOver(ctx context.Context) bool {
	c, ok := ctx.(*waitContext)
	if !ok {
		return false
	}
	select {
	case <-c.expired:
		return true
	default:
		return false
	}
}
