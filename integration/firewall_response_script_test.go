package integration

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// scriptLLM is the upstream of the response tests: it streams the events
// the test scripted, the first ones at once and the rest (if any) only
// once the client has posted to /ack, and counts the API requests.
type scriptLLM struct {
	srv *httptest.Server
	ack chan struct{}

	mu          sync.Mutex
	first, rest []string
	ctype       string // the stream's Content-Type ("": text/event-stream)
	json        string // when set, the answer is this JSON body
	requests    int
	acked       []bool
}

func newScriptLLM(t *testing.T) *scriptLLM {
	u := &scriptLLM{ack: make(chan struct{}, 1)}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

// script sets the next answer: first is sent at once; rest, when not nil,
// only after the client's ack of its first chunk.
func (u *scriptLLM) script(first, rest []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.first, u.rest, u.ctype, u.json, u.requests, u.acked = first, rest, "", "", 0, nil
	select {
	case <-u.ack:
	default:
	}
}

// scriptAs is script for a stream of another Content-Type (Ollama's NDJSON).
func (u *scriptLLM) scriptAs(ctype string, first, rest []string) {
	u.script(first, rest)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.ctype = ctype
}

// scriptJSON sets the next answer to one JSON body.
func (u *scriptLLM) scriptJSON(body string) {
	u.script(nil, nil)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.json = body
}

func (u *scriptLLM) counts() (int, []bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.requests, append([]bool(nil), u.acked...)
}

func (u *scriptLLM) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/ack" {
		select {
		case u.ack <- struct{}{}:
		default:
		}
		return
	}
	io.Copy(io.Discard, r.Body)
	u.mu.Lock()
	u.requests++
	first, rest, body, ctype := u.first, u.rest, u.json, u.ctype
	u.mu.Unlock()
	if body != "" {
		writeJSON(w, body)
		return
	}
	if ctype == "" {
		ctype = "text/event-stream"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	send := func(evs []string) {
		for _, s := range evs {
			io.WriteString(w, s)
			w.(http.Flusher).Flush()
		}
	}
	send(first)
	if rest == nil {
		return
	}
	awaitAck(u.ack, &u.mu, &u.acked)
	send(rest)
}
