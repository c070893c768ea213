package kit

import (
	"context"
	"time"
)

// acquire: the library waits on ctx (wait_ms, awake); the kit's own bound is
// wait_ms + Grace, after which the acquire is `unknown` and a hold that comes
// later is given back. An acquire that fails leaves the hold it had untouched.
func (s *server[H]) acquire(m Request) Reply {
	ctx, cancel := context.Context(context.Background()), context.CancelFunc(func() {})
	if m.WaitMs > 0 {
		ctx, cancel = WaitContext(m.Wait())
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	done := call("unknown", func() (H, Reply) { return s.a.Acquire(ctx, m) })
	got, ok := within(m.Wait()+Grace, done)
	cancel()
	if !ok {
		go func() { // a late win: the harness was told `unknown`, so the lock goes back
			if late := <-done; late.reply.Outcome == "acquired" {
				release, stop := context.WithTimeout(context.Background(), AnswerWithin)
				defer stop()
				s.a.Release(release, late.hold)
			}
		}()
		return Reply{Outcome: "unknown", Error: "the library was still acquiring " + Grace.String() + " after wait_ms"}
	}
	if got.reply.Outcome == "acquired" {
		s.hold, s.holding = got.hold, true
	}
	return got.reply
}

// bounded runs f with a context done at AnswerWithin (awake), answering `error` when it is still running then.
func (s *server[H]) bounded(name string, f func(ctx context.Context) Reply) Reply {
	ctx, cancel := WaitContext(AnswerWithin)
	defer cancel()
	var zero H
	done := call("error", func() (H, Reply) { return zero, f(ctx) })
	got, ok := within(AnswerWithin, done)
	if !ok {
		return Reply{Outcome: "error", Error: "no answer to " + name + " in " + AnswerWithin.String()}
	}
	return got.reply
}

// release ends the last acquire's hold (already_expired when there is none).
func (s *server[H]) release() Reply {
	if !s.holding {
		return Reply{Outcome: "already_expired", Error: "no hold to release"}
	}
	hold := s.hold
	var zero H
	s.hold, s.holding = zero, false
	return s.bounded("release", func(ctx context.Context) Reply { return s.a.Release(ctx, hold) })
}

// extend lengthens the hold, where the library has an extend.
func (s *server[H]) extend(m Request) Reply {
	if s.a.Extend == nil {
		return Reply{Outcome: "error", Error: s.a.Library + " has no extend"}
	}
	if !s.holding {
		return Reply{Outcome: "not_owner", Error: "no hold to extend"}
	}
	hold, ttl := s.hold, time.Duration(m.TTLMs)*time.Millisecond
	return s.bounded("extend", func(ctx context.Context) Reply { return s.a.Extend(ctx, hold, ttl) })
}
