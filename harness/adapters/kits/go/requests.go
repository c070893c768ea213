package kit

import (
	"context"
	"fmt"
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
	began := time.Now()
	done := call("unknown", func() (H, Reply) { return s.a.Acquire(ctx, m) })
	got, ok := within(m.Wait()+Grace, done)
	cancel()
	if !ok {
		s.giveBacks.Add(1)
		go func() { // a late win: the harness was told `unknown`, so the lock goes back
			defer s.giveBacks.Done()
			if late := <-done; late.reply.Outcome == "acquired" {
				release, stop := context.WithTimeout(context.Background(), AnswerWithin)
				defer stop()
				s.a.Release(release, late.hold)
			}
		}()
		// as the JS kit: the call went on past its wait bound, which the harness judges liveness
		ms := max(time.Since(began)-m.Wait(), Grace).Milliseconds()
		return Reply{Outcome: "unknown", BlockedMs: ms,
			Error: fmt.Sprintf("acquire blocked %d ms past its wait bound (the library still waiting)", ms)}
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
		return Reply{Outcome: "error", BlockedMs: AnswerWithin.Milliseconds(),
			Error: name + " blocked past " + AnswerWithin.String() + " (the library still waiting)"}
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
