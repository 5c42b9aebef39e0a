package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeLLM is the upstream behind reverse_proxy: it records every request
// byte for byte and answers in the shape of the API the path names
// (OpenAI chat and Responses, Anthropic messages), streamed when asked.
//
// A streamed answer sends its first text chunk, then holds the rest until
// the client posts to /ack (or ackWait passes), so a test can prove the
// first chunk crossed the proxy while the upstream was still writing.
type fakeLLM struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []upstreamRequest
	ack      chan struct{}
	acked    []bool // per streamed answer: did the client ack chunk 1 in time
}

type upstreamRequest struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// ackWait is generous: a loaded CI machine may be slow to start node, and a
// buffering proxy fails the test either way (the ack never comes in time).
const ackWait = 15 * time.Second

// awaitAck waits for the client's ack of a stream's first chunk, at most
// ackWait, and records in acked (under mu) whether it came.
func awaitAck(ack <-chan struct{}, mu *sync.Mutex, acked *[]bool) {
	came := false
	select {
	case <-ack:
		came = true
	case <-time.After(ackWait):
	}
	mu.Lock()
	*acked = append(*acked, came)
	mu.Unlock()
}

func newFakeLLM(t *testing.T) *fakeLLM {
	u := &fakeLLM{ack: make(chan struct{}, 1)}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

// reset forgets the requests recorded so far.
func (u *fakeLLM) reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.requests, u.acked = nil, nil
	select {
	case <-u.ack:
	default:
	}
}

func (u *fakeLLM) recorded() []upstreamRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]upstreamRequest(nil), u.requests...)
}

func (u *fakeLLM) streamAcks() []bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]bool(nil), u.acked...)
}

func (u *fakeLLM) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/ack" {
		select {
		case u.ack <- struct{}{}:
		default:
		}
		return
	}
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.requests = append(u.requests, upstreamRequest{r.Method, r.URL.Path, r.Header.Clone(), body})
	u.mu.Unlock()

	var req struct {
		Stream bool `json:"stream"`
	}
	json.Unmarshal(body, &req)
	switch {
	case strings.HasSuffix(r.URL.Path, "/chat/completions") && req.Stream:
		u.sse(w, []string{
			chatChunk(`{"role":"assistant","content":"Hel"}`, "null"),
		}, []string{
			chatChunk(`{"content":"lo"}`, "null"),
			chatChunk(`{}`, `"stop"`),
			"data: [DONE]\n\n",
		})
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		writeJSON(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	case strings.HasSuffix(r.URL.Path, "/responses"):
		writeJSON(w, `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-4o",`+
			`"output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant",`+
			`"content":[{"type":"output_text","text":"pong","annotations":[]}]}],`+
			`"parallel_tool_calls":true,"tool_choice":"auto","tools":[],"error":null,"incomplete_details":null,`+
			`"instructions":null,"metadata":{},"temperature":1,"top_p":1,`+
			`"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`)
	case strings.HasSuffix(r.URL.Path, "/messages") && req.Stream:
		u.sse(w, []string{
			anthropicEvent("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":0}}}`),
			anthropicEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
			anthropicEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`),
		}, []string{
			anthropicEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}`),
			anthropicEvent("content_block_stop", `{"type":"content_block_stop","index":0}`),
			anthropicEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`),
			anthropicEvent("message_stop", `{"type":"message_stop"}`),
		})
	case strings.HasSuffix(r.URL.Path, "/messages"):
		writeJSON(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude",`+
			`"content":[{"type":"text","text":"pong"}],"stop_reason":"end_turn","stop_sequence":null,`+
			`"usage":{"input_tokens":1,"output_tokens":1}}`)
	default:
		writeJSON(w, `{"ok":true}`)
	}
}

// sse writes first, flushes, waits for the client's ack of the first
// chunk, then writes rest.
func (u *fakeLLM) sse(w http.ResponseWriter, first, rest []string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	for _, s := range first {
		io.WriteString(w, s)
	}
	w.(http.Flusher).Flush()
	awaitAck(u.ack, &u.mu, &u.acked)
	for _, s := range rest {
		io.WriteString(w, s)
		w.(http.Flusher).Flush()
	}
}

func chatChunk(delta, finish string) string {
	return fmt.Sprintf("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\","+
		"\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, finish)
}

func anthropicEvent(name, data string) string {
	return "event: " + name + "\ndata: " + data + "\n\n"
}

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, body)
}
