// locklab adapter (docs/adapters.md): bsm/redislock (github.com/bsm/redislock)
// on one go-redis v9 client at its defaults, as its README shows:
// redislock.New(client), Obtain(ctx, key, ttl, &Options{RetryStrategy}),
// lock.Refresh(ctx, ttl, nil), lock.Release(ctx). The README's caller
// refreshes the lock itself; this adapter does what such a caller does: while
// it holds the lock, a goroutine refreshes it by ttl every ttl/2, and reports
// `lost` when a refresh finds the lock no longer its own.
//
// What the source says (module cache, github.com/bsm/redislock@v0.9.4/redislock.go):
//   - Obtain (lines 56-105): one script per attempt (luaObtain, line 21: SET NX
//     PX, or re-SET a key that already holds this token); a Redis error ends
//     Obtain at once (line 81); ErrNotObtained when the strategy says stop
//     (line 89); ctx.Err() when ctx is done between attempts (line 101). A ctx
//     without a deadline gets one of one ttl (line 72): the kit's wait context
//     has one, so the wait is wait_ms (awake), retried every retry_ms
//     (LinearBackoff); wait_ms 0 is NoRetry: exactly one attempt.
//   - Refresh (line 178): luaRefresh (GET == value, then PEXPIRE): ErrNotObtained unless 1.
//   - Release (line 191): luaRelease (GET == value, then DEL): ErrLockNotHeld
//     for another's value and for no key alike (line 203).
package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	kit "locklab/kits/go"
)

var (
	locker *redislock.Client
	key    string
)

// held is a lock and its refresh.
type held struct {
	lock *redislock.Lock
	stop chan struct{}
	once sync.Once
}

func (h *held) stopRefresh() { h.once.Do(func() { close(h.stop) }) }

func (h *held) stopped() bool {
	select {
	case <-h.stop:
		return true
	default:
		return false
	}
}

// refresh renews the lease every ttl/2 until stopped; a Redis error is tried
// again at the next tick, as a caller's ticker would; a lock found gone is `lost`.
func (h *held) refresh(ttl time.Duration) {
	ticker := time.NewTicker(ttl / 2)
	defer ticker.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-ticker.C:
		}
		err := h.lock.Refresh(context.Background(), ttl, nil)
		if errors.Is(err, redislock.ErrNotObtained) && !h.stopped() {
			kit.Event("lost", nil)
			return
		}
	}
}

func initialize(m kit.Request) (string, error) {
	redis.SetLogger(kit.Logger{})
	locker, key = redislock.New(redis.NewClient(&redis.Options{Addr: m.Servers[0].Addr()})), m.Key
	return key, nil
}

func acquire(ctx context.Context, m kit.Request) (*held, kit.Reply) {
	strategy := redislock.LinearBackoff(m.Retry())
	if m.WaitMs == 0 {
		strategy = redislock.NoRetry()
	}
	lock, err := locker.Obtain(ctx, key, m.TTL(), &redislock.Options{RetryStrategy: strategy})
	switch {
	case err == nil:
		h := &held{lock: lock, stop: make(chan struct{})}
		go h.refresh(m.TTL())
		return h, kit.Say("acquired")
	case errors.Is(err, redislock.ErrNotObtained), kit.WaitOver(ctx):
		return nil, kit.Fail("timed_out", err)
	default:
		return nil, kit.Fail("unknown", err) // the obtain script may have run; its answer was lost
	}
}

func release(ctx context.Context, h *held) kit.Reply {
	h.stopRefresh()
	err := h.lock.Release(ctx)
	switch {
	case err == nil:
		return kit.Say("released")
	case errors.Is(err, redislock.ErrLockNotHeld):
		return kit.Fail("not_owner", err) // the library does not tell a missing key from another's value
	default:
		return kit.Fail("error", err)
	}
}

func extend(ctx context.Context, h *held, ttl time.Duration) kit.Reply {
	err := h.lock.Refresh(ctx, ttl, nil)
	switch {
	case err == nil:
		return kit.Say("extended")
	case errors.Is(err, redislock.ErrNotObtained):
		return kit.Fail("not_owner", err)
	default:
		return kit.Fail("error", err)
	}
}

func main() {
	kit.Serve(kit.Adapter[*held]{
		Library: "bsm/redislock",
		Module:  "github.com/bsm/redislock",
		Capabilities: map[string]bool{"expires": true, "owner_checked_release": true, "reentrant": false,
			"fencing": false, "multi_node": false, "notifies_waiters": false, "auto_extends": true},
		Init:    initialize,
		Acquire: acquire,
		Release: release,
		Extend:  extend,
	})
}
