// locklab adapter (docs/adapters.md): go-redsync v4 (github.com/go-redsync/redsync/v4)
// with go-redis v9 clients at their defaults, as its README shows: one pool per
// server given, redsync.New(pools...), rs.NewMutex(key, options), LockContext,
// UnlockContext, ExtendContext. `-multi`: a Redlock over every server given (the
// row ext:go-redsync-5); without it, the first server alone (ext:go-redsync).
//
// The harness owns the lease, the wait and the retry interval; everything else
// is the library's default (timeoutFactor 0.05, driftFactor 0.01, no fail-fast,
// no shuffle, no setNXOnExtend). What the source says (module cache,
// github.com/go-redsync/redsync/v4@v4.18.1):
//   - mutex.go:75-134, lockContext: `tries` attempts; before every attempt but
//     the first it waits delayFunc(i) or until ctx is done (then ErrFailed).
//     Each attempt is SET NX PX on every node (goredis SetNX, mutex.go:221),
//     counted at a quorum len(pools)/2+1 (redsync.go:72) and valid until
//     now + expiry - elapsed - expiry*driftFactor (mutex.go:115); a failed
//     attempt runs the delete script on every node (mutex.go:121-127).
//   - The wait: tries = wait_ms/retry_ms + 1, retried every retry_ms, and no
//     deadline: LockContext(context.Background()), as the README's Lock() does.
//     The delays alone add up to wait_ms (each attempt adds its round trips, up
//     to expiry*timeoutFactor each, mutex.go:107; the kit answers `unknown` at
//     wait_ms + 1 s); wait_ms 0 is tries 1: exactly one attempt. Not a context
//     that ends at wait_ms: a failed attempt deletes its votes under the caller's
//     context (mutex.go:121-127), so once that context is done the cleanup is
//     not even sent, and a SET NX whose answer came after the deadline stays on
//     its node for a whole expiry, refusing the client's own next attempts
//     (docs/peers.md, "The Go rows": with a 30 ms context, contenders did not
//     get back in after a restarted majority until the holder's keys expired).
//   - Errors (error.go): a node's error is a *RedisError; ErrTaken when a quorum
//     refused. Only the last attempt's error comes back (mutex.go:128); an
//     attempt ended by ctx comes back as ErrFailed.
//   - UnlockContext (mutex.go:142): the delete script (scripts.go:5, SHA
//     e950836e...) on every node: -1 no key (ErrLockAlreadyExpired), 0 another's
//     value (ErrNodeTaken), errors joined; released at a quorum.
//   - ExtendContext (mutex.go:158): the touch script (GET == value, then PEXPIRE) by the mutex's expiry.
package main

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"

	kit "locklab/kits/go"
)

var (
	rs  *redsync.Redsync
	key string
)

func initialize(m kit.Request, multi bool) (string, error) {
	goredislib.SetLogger(kit.Logger{})
	servers := m.Servers
	if !multi && len(servers) > 1 {
		servers = servers[:1]
	}
	pools := make([]redsyncredis.Pool, 0, len(servers))
	for _, s := range servers {
		pools = append(pools, goredis.NewPool(goredislib.NewClient(&goredislib.Options{Addr: s.Addr()})))
	}
	rs, key = redsync.New(pools...), m.Key
	return key, nil
}

func acquire(_ context.Context, m kit.Request) (*redsync.Mutex, kit.Reply) {
	tries := m.WaitMs/int(m.Retry()/time.Millisecond) + 1
	mutex := rs.NewMutex(key, redsync.WithExpiry(m.TTL()), redsync.WithTries(tries), redsync.WithRetryDelay(m.Retry()))
	err := mutex.LockContext(context.Background()) // not ctx: see the header

	var nodeError *redsync.RedisError
	switch {
	case err == nil:
		return mutex, kit.Say("acquired")
	case errors.As(err, &nodeError):
		return nil, kit.Fail("unknown", err) // a SET may have landed on a node whose answer was lost
	default:
		return nil, kit.Fail("timed_out", err) // ErrTaken, ErrFailed: every answer in, no quorum
	}
}

func release(ctx context.Context, mutex *redsync.Mutex) kit.Reply {
	ok, err := mutex.UnlockContext(ctx)
	var nodeError *redsync.RedisError
	var taken *redsync.ErrNodeTaken
	switch {
	case ok:
		return kit.Say("released")
	case errors.As(err, &nodeError):
		return kit.Fail("error", err)
	case errors.As(err, &taken):
		return kit.Fail("not_owner", err)
	case err != nil:
		return kit.Fail("already_expired", err)
	default:
		return kit.Say("already_expired")
	}
}

func extend(ctx context.Context, mutex *redsync.Mutex, ttl time.Duration) kit.Reply {
	// The mutex extends by its own expiry (mutex.go:161): ttl_ms is the acquire's.
	ok, err := mutex.ExtendContext(ctx)
	var nodeError *redsync.RedisError
	switch {
	case ok:
		return kit.Say("extended")
	case errors.As(err, &nodeError):
		return kit.Fail("error", err)
	case err != nil:
		return kit.Fail("not_owner", err)
	default:
		return kit.Say("not_owner")
	}
}

func main() {
	multi := len(os.Args) > 1 && os.Args[1] == "-multi"
	kit.Serve(kit.Adapter[*redsync.Mutex]{
		Library: "go-redsync",
		Module:  "github.com/go-redsync/redsync/v4",
		Capabilities: map[string]bool{"expires": true, "owner_checked_release": true, "reentrant": false,
			"fencing": false, "multi_node": multi, "notifies_waiters": false, "auto_extends": false},
		Init:    func(m kit.Request) (string, error) { return initialize(m, multi) },
		Acquire: acquire,
		Release: release,
		Extend:  extend,
	})
}
