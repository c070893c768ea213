package kit

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

var out = struct {
	sync.Mutex
	w *bufio.Writer
}{w: bufio.NewWriter(os.Stdout)}

// send writes one line: replies come from the loop, events from any goroutine.
func send(message map[string]any) {
	line, err := json.Marshal(message)
	if err != nil {
		line = []byte(fmt.Sprintf(`{"type":"error","error":%q}`, err.Error()))
	}
	out.Lock()
	defer out.Unlock()
	out.w.Write(append(line, '\n'))
	out.w.Flush()
}

// Event sends an unasked line: Event("lost") when the library reports a lost lock.
func Event(name string, fields map[string]any) {
	message := map[string]any{"type": "event", "event": name}
	for k, v := range fields {
		message[k] = v
	}
	send(message)
}

// Logger takes what a library logs (go-redis: redis.SetLogger(kit.Logger{})) and
// sends it as `log` events, which the harness ignores: on stderr it would
// interleave with locklab's own lines.
type Logger struct{}

// Printf is go-redis's internal.Logging.
func (Logger) Printf(_ context.Context, format string, v ...any) {
	Event("log", map[string]any{"level": "info", "text": oneLine(fmt.Sprintf(format, v...))})
}

type server[H any] struct {
	a       Adapter[H]
	hold    H
	holding bool
	// giveBacks: the late wins still being given back (requests.go); the end of stdin waits for them.
	giveBacks sync.WaitGroup
}

// Serve answers requests from stdin until it ends, then exits 0.
func Serve[H any](a Adapter[H]) {
	s := &server[H]{a: a}
	in := bufio.NewReaderSize(os.Stdin, 64*1024)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			s.handle(line)
		}
		if err == io.EOF {
			s.close()
			os.Exit(0)
		} else if err != nil {
			fmt.Fprintf(os.Stderr, "adapter %s: reading stdin: %v\n", a.Library, err)
			os.Exit(1)
		}
	}
}

// close waits for the give-backs under way (os.Exit would end them: the late win's key would stay
// held until its ttl), then runs the adapter's Close, if any: both within CloseWithin.
func (s *server[H]) close() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.giveBacks.Wait()
		if s.a.Close != nil {
			s.a.Close()
		}
	}()
	select {
	case <-done:
	case <-time.After(CloseWithin):
	}
}

func (s *server[H]) handle(line []byte) {
	text := strings.TrimSpace(string(line))
	if text == "" {
		return
	}
	var m Request
	var object map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &object); err != nil {
		why := "not JSON: "
		if json.Valid([]byte(text)) { // `null` or `3`: JSON, but not a request
			why = "not a request: "
		}
		send(map[string]any{"id": nil, "type": "error", "error": why + oneLine(text[:min(len(text), 80)])})
		return
	}
	if object == nil || json.Unmarshal([]byte(text), &m) != nil {
		send(map[string]any{"id": nil, "type": "error", "error": "not a request: " + oneLine(text[:min(len(text), 80)])})
		return
	}
	reply := s.answer(m)
	if len(m.ID) > 0 {
		reply["id"] = m.ID
	} else {
		reply["id"] = nil
	}
	send(reply)
}

var replyType = map[string]string{"acquire": "acquire_ok", "release": "release_ok", "extend": "extend_ok"}

func (s *server[H]) answer(m Request) map[string]any {
	var r Reply
	switch m.Type {
	case "noop":
		return map[string]any{"type": "noop_ok"}
	case "init":
		return s.init(m)
	case "acquire":
		r = s.acquire(m)
	case "release":
		r = s.release()
	case "extend":
		r = s.extend(m)
	default:
		return map[string]any{"type": "error", "error": "unknown request type " + m.Type}
	}
	reply := map[string]any{"type": replyType[m.Type], "outcome": r.Outcome}
	if r.BlockedMs > 0 {
		reply["blocked_ms"] = r.BlockedMs
	}
	if r.Error != "" {
		reply["error"] = r.Error
	}
	return reply
}

func (s *server[H]) init(m Request) map[string]any {
	key, err := s.a.Init(m)
	if err != nil {
		return map[string]any{"type": "error", "error": oneLine(err.Error())}
	}
	return map[string]any{"type": "init_ok", "library": s.a.Library, "version": moduleVersion(s.a.Module),
		"language": "go", "capabilities": s.a.Capabilities, "key": key}
}

// settled is what a handler returned, or the panic it raised.
type settled[H any] struct {
	hold  H
	reply Reply
}

// call runs f on its own goroutine, a panic answered with inDoubt.
func call[H any](inDoubt string, f func() (H, Reply)) <-chan settled[H] {
	done := make(chan settled[H], 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				var zero H
				done <- settled[H]{zero, Reply{Outcome: inDoubt, Error: oneLine(fmt.Sprint("panic: ", p))}}
			}
		}()
		hold, reply := f()
		done <- settled[H]{hold, reply}
	}()
	return done
}
