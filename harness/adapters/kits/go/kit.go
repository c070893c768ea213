// Package kit is locklab's Go adapter kit (docs/adapters.md): the adapter
// protocol's JSON-lines loop and the bounds every adapter needs, so that an
// adapter (harness/adapters/go/NAME/main.go) is only its library's calls. It
// imports the standard library alone; the libraries are pinned by the adapters'
// module (harness/adapters/go/go.mod, go.sum) and built once by ./install.
//
// Serve(Adapter[H]) answers one request at a time, in order: init -> init_ok
// (the library module's version, read from this binary's build info), acquire
// -> acquire_ok, release -> release_ok, extend -> extend_ok, noop -> noop_ok.
// The kit keeps the hold H that the last acquire returned: a release or extend
// without one is answered here (already_expired, not_owner). A handler that
// panics answers "when in doubt": acquire `unknown`, release and extend
// `error`. When stdin ends the adapter answers what it has read and exits,
// holding or not: its goroutines (a refresh) stop with it, as a crashed client's would.
package kit

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"
	"time"
)

const (
	// RetryDefault is the pause between attempts when the acquire request carries no retry_ms.
	RetryDefault = 5 * time.Millisecond
	// Grace: a library still silent wait_ms + Grace later is stuck: the acquire is `unknown`.
	Grace = 1000 * time.Millisecond
	// AnswerWithin bounds release and extend, under AdapterLock's 2000 ms margin.
	AnswerWithin = 1500 * time.Millisecond
	// CloseWithin bounds Close at the end of stdin, under AdapterLock's 1000 ms exit grace.
	CloseWithin = 500 * time.Millisecond
)

// Server is one address of init's servers (through the fault proxy in a run).
type Server struct {
	Host string `json:"host"`
	Port int    `json:"port"`
}

// Addr is "host:port".
func (s Server) Addr() string { return fmt.Sprintf("%s:%d", s.Host, s.Port) }

// Request is any request; each type reads its own fields.
type Request struct {
	ID      json.RawMessage `json:"id"`
	Type    string          `json:"type"`
	Servers []Server        `json:"servers"`
	Key     string          `json:"key"`
	Client  int             `json:"client"`
	TTLMs   int             `json:"ttl_ms"`
	WaitMs  int             `json:"wait_ms"`
	RetryMs int             `json:"retry_ms"`
}

// TTL is the request's ttl_ms.
func (m Request) TTL() time.Duration { return time.Duration(m.TTLMs) * time.Millisecond }

// Wait is the acquire's wait_ms (0: exactly one attempt).
func (m Request) Wait() time.Duration { return time.Duration(m.WaitMs) * time.Millisecond }

// Retry is the run's --retry, else RetryDefault (which also stands in for 0:
// a library told to retry without pause would spin until its bound).
func (m Request) Retry() time.Duration {
	if m.RetryMs > 0 {
		return time.Duration(m.RetryMs) * time.Millisecond
	}
	return RetryDefault
}

// Reply is an outcome word and, for a failure, one line saying why.
type Reply struct {
	Outcome string
	Error   string
	// BlockedMs: the awake ms the library's call went on past its bound (acquire: wait_ms + Grace,
	// release and extend: AnswerWithin); the harness judges such a hang liveness (docs/adapters.md).
	BlockedMs int64
}

// Say is an outcome without an error line.
func Say(outcome string) Reply { return Reply{Outcome: outcome} }

// Fail is an outcome with the error that decided it.
func Fail(outcome string, err error) Reply {
	return Reply{Outcome: outcome, Error: oneLine(err.Error())}
}

// Adapter is one library's calls. H is what an acquire holds (a mutex, a lock and its refresh).
type Adapter[H any] struct {
	Library      string          // init_ok's library: the name its users know it by
	Module       string          // the Go module whose version init_ok names
	Capabilities map[string]bool // the registry's words plus auto_extends, as the catalog says
	// Init connects; it returns the Redis key the library holds for init's key.
	Init func(m Request) (key string, err error)
	// Acquire gets ctx, done after wait_ms of awake time (never, for wait_ms 0):
	// the wait is the harness's. The kit answers `unknown` at wait_ms + Grace and
	// gives back a hold that comes later.
	Acquire func(ctx context.Context, m Request) (H, Reply)
	// Release and Extend get ctx, done at AnswerWithin, and the hold of the last acquire.
	Release func(ctx context.Context, hold H) Reply
	Extend  func(ctx context.Context, hold H, ttl time.Duration) Reply // nil: the library has none
	// Close runs once stdin has ended, bounded by CloseWithin (nil: nothing to do).
	Close func()
}

// moduleVersion is the version of module linked into this binary ("unknown" if none).
func moduleVersion(module string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path != module {
			continue
		}
		if dep.Replace != nil {
			dep = dep.Replace
		}
		return strings.TrimPrefix(dep.Version, "v")
	}
	return "unknown"
}

func oneLine(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > 300 {
		text = text[:300]
	}
	return text
}
