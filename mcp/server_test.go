package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// testServer has tools that show what they were given.
func testServer(onErr *[]string) *Server {
	return &Server{
		Name: "test", Version: "1.2.3", Instructions: "be kind",
		MaxBodyBytes: 1024,
		OnError:      func(tool string, err error) { *onErr = append(*onErr, tool+": "+err.Error()) },
		Tools: []Tool{
			{
				Name: "echo", Title: "Echo", Description: "echoes",
				InputSchema:  json.RawMessage(`{"type":"object","properties":{"s":{"type":"string"}}}`),
				OutputSchema: json.RawMessage(`{"type":"object"}`),
				Call: func(ctx context.Context, args, meta json.RawMessage) (*Result, error) {
					if HTTPRequest(ctx) == nil {
						return nil, errors.New("no HTTP request in the context")
					}
					return &Result{
						Content:           []Content{TextContent(string(args))},
						StructuredContent: map[string]any{"args": args, "meta": meta},
						Meta:              map[string]any{"k": "v"},
					}, nil
				},
			},
			{Name: "empty", Call: func(context.Context, json.RawMessage, json.RawMessage) (*Result, error) {
				return &Result{IsError: true}, nil
			}},
			{Name: "rpcerr", Call: func(context.Context, json.RawMessage, json.RawMessage) (*Result, error) {
				return nil, InvalidParams("bad %s", "thing")
			}},
			{Name: "fails", Call: func(context.Context, json.RawMessage, json.RawMessage) (*Result, error) {
				return nil, errors.New("secret detail")
			}},
		},
	}
}

type exchange struct {
	method string
	body   string
	header map[string]string
}

func (s *Server) exchange(t *testing.T, ex exchange) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(nonEmpty(ex.method, http.MethodPost), "http://svc.example/mcp", strings.NewReader(ex.body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range ex.header {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

func nonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestServeHTTP(t *testing.T) {
	const v0618 = Version20250618
	tests := []struct {
		name   string
		ex     exchange
		status int
		want   string // the exact body; "" for none
	}{
		{"initialize newest", exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
			200, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"test","version":"1.2.3"},"instructions":"be kind"}}`},
		{"initialize older", exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`},
			200, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"test","version":"1.2.3"},"instructions":"be kind"}}`},
		{"initialize unknown version gets the newest", exchange{body: `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2024-11-05"}}`},
			200, `{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"test","version":"1.2.3"},"instructions":"be kind"}}`},
		{"initialize without version", exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`},
			200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"initialize needs a string \"protocolVersion\""}}`},
		{"initialize numeric version", exchange{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":2025}}`},
			200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"initialize needs a string \"protocolVersion\""}}`},
		{"initialized notification", exchange{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`}, 202, ""},
		{"unknown notification", exchange{body: `{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}`}, 202, ""},
		{"response from the client", exchange{body: `{"jsonrpc":"2.0","id":9,"result":{}}`}, 202, ""},
		{"ping", exchange{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, header: map[string]string{HeaderProtocolVersion: v0618}},
			200, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{"tools/list 2025-06-18", exchange{body: `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, header: map[string]string{HeaderProtocolVersion: v0618}},
			200, `{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"echo","title":"Echo","description":"echoes","inputSchema":{"type":"object","properties":{"s":{"type":"string"}}},"outputSchema":{"type":"object"}},{"name":"empty","inputSchema":{"type":"object"}},{"name":"rpcerr","inputSchema":{"type":"object"}},{"name":"fails","inputSchema":{"type":"object"}}]}}`},
		{"tools/list 2025-03-26 has no 06-18 fields", exchange{body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`},
			200, `{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"echo","description":"echoes","inputSchema":{"type":"object","properties":{"s":{"type":"string"}}}},{"name":"empty","inputSchema":{"type":"object"}},{"name":"rpcerr","inputSchema":{"type":"object"}},{"name":"fails","inputSchema":{"type":"object"}}]}}`},
		{"tools/list cursor", exchange{body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"x"}}`},
			200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"unknown cursor"}}`},
		{"tools/call", exchange{body: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"s":"hi"},"_meta":{"x402/payment":{"a":1}}}}`},
			200, `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{\"s\":\"hi\"}"}],"structuredContent":{"args":{"s":"hi"},"meta":{"x402/payment":{"a":1}}},"_meta":{"k":"v"}}}`},
		{"tools/call without arguments", exchange{body: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo"}}`},
			200, `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{}"}],"structuredContent":{"args":{},"meta":null},"_meta":{"k":"v"}}}`},
		{"tools/call empty result", exchange{body: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"empty"}}`},
			200, `{"jsonrpc":"2.0","id":5,"result":{"content":[],"isError":true}}`},
		{"tools/call unknown tool", exchange{body: `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}}`},
			200, `{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"unknown tool: nope"}}`},
		{"tools/call no name", exchange{body: `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{}}`},
			200, `{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"tools/call needs a string \"name\""}}`},
		{"tools/call array arguments", exchange{body: `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":[1]}}`},
			200, `{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"\"arguments\" must be an object"}}`},
		{"tools/call string meta", exchange{body: `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","_meta":"x"}}`},
			200, `{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"\"_meta\" must be an object"}}`},
		{"tools/call rpc error", exchange{body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"rpcerr"}}`},
			200, `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad thing"}}`},
		{"tools/call failing tool hides its error", exchange{body: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"fails"}}`},
			200, `{"jsonrpc":"2.0","id":8,"error":{"code":-32603,"message":"the tool failed"}}`},
		{"unknown method", exchange{body: `{"jsonrpc":"2.0","id":9,"method":"resources/list"}`},
			200, `{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"method not found: resources/list"}}`},
		{"parse error", exchange{body: `{"jsonrpc":"2.0",`},
			400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the body is not JSON"}}`},
		{"invalid request keeps its id", exchange{body: `{"jsonrpc":"1.0","id":10,"method":"ping"}`},
			400, `{"jsonrpc":"2.0","id":10,"error":{"code":-32600,"message":"\"jsonrpc\" must be \"2.0\""}}`},
		{"batch", exchange{body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`},
			400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batches are not supported; send one JSON-RPC message per POST"}}`},
		{"GET", exchange{method: http.MethodGet, header: map[string]string{"Accept": "text/event-stream"}},
			405, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"this MCP endpoint takes POST only"}}`},
		{"DELETE", exchange{method: http.MethodDelete, header: map[string]string{"Mcp-Session-Id": "abc"}},
			405, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"this MCP endpoint takes POST only"}}`},
		{"unsupported protocol version header", exchange{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, header: map[string]string{HeaderProtocolVersion: "2099-01-01"}},
			400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"unsupported Mcp-Protocol-Version; supported: 2025-06-18, 2025-03-26"}}`},
		{"session id is ignored", exchange{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, header: map[string]string{"Mcp-Session-Id": "whatever"}},
			200, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{"wrong content type", exchange{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, header: map[string]string{"Content-Type": "text/plain"}},
			415, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the body must be Content-Type: application/json"}}`},
		{"content type with charset", exchange{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, header: map[string]string{"Content-Type": "application/json; charset=utf-8"}},
			200, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{"encoded body", exchange{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, header: map[string]string{"Content-Encoding": "gzip"}},
			415, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"send the body unencoded (identity)"}}`},
		{"accept excludes json", exchange{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, header: map[string]string{"Accept": "text/event-stream"}},
			406, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the answer is application/json; the Accept header excludes it"}}`},
		{"accept json with q=0", exchange{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, header: map[string]string{"Accept": "application/json;q=0, text/event-stream"}},
			406, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the answer is application/json; the Accept header excludes it"}}`},
		{"no accept header", exchange{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, header: map[string]string{"Accept": ""}},
			200, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{"body too large", exchange{body: `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"` + strings.Repeat("a", 1024) + `"}}`},
			413, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the body is over 1024 bytes"}}`},
		{"foreign origin", exchange{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, header: map[string]string{"Origin": "http://evil.example"}},
			403, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the request's Origin is not allowed"}}`},
		{"own origin", exchange{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, header: map[string]string{"Origin": "https://svc.example"}},
			200, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{"allowed origin", exchange{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, header: map[string]string{"Origin": "https://app.example"}},
			200, `{"jsonrpc":"2.0","id":2,"result":{}}`},
	}
	anyOrigin := map[string]bool{"any origin allowed": true}
	tests = append(tests, struct {
		name   string
		ex     exchange
		status int
		want   string
	}{"any origin allowed", exchange{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, header: map[string]string{"Origin": "http://evil.example"}},
		200, `{"jsonrpc":"2.0","id":2,"result":{}}`})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errs []string
			s := testServer(&errs)
			s.AllowedOrigins = []string{"https://app.example"}
			if anyOrigin[tt.name] {
				s.AllowedOrigins = []string{"*"}
			}
			w := s.exchange(t, tt.ex)
			body, _ := io.ReadAll(w.Body)
			if w.Code != tt.status || string(body) != tt.want {
				t.Fatalf("got %d %s\nwant %d %s", w.Code, body, tt.status, tt.want)
			}
			if tt.want != "" && w.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("Content-Type %q", w.Header().Get("Content-Type"))
			}
			if w.Header().Get("Mcp-Session-Id") != "" {
				t.Fatal("a stateless server handed out a session id")
			}
			if tt.status == 405 && w.Header().Get("Allow") != "POST" {
				t.Fatalf("Allow %q", w.Header().Get("Allow"))
			}
		})
	}
}

func TestOnErrorHearsFailedTools(t *testing.T) {
	var errs []string
	s := testServer(&errs)
	s.exchange(t, exchange{body: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"fails"}}`})
	s.exchange(t, exchange{body: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"rpcerr"}}`})
	if len(errs) != 1 || errs[0] != "fails: secret detail" {
		t.Fatalf("OnError got %q, want only the failing tool's error", errs)
	}
}

func TestDefaults(t *testing.T) {
	s := &Server{Name: "d", Version: "0"}
	deep := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + strings.Repeat("[", DefaultMaxDepth) + strings.Repeat("]", DefaultMaxDepth) + `}}`
	if w := s.exchange(t, exchange{body: deep}); w.Code != 400 || !strings.Contains(w.Body.String(), "-32700") {
		t.Fatalf("nesting past DefaultMaxDepth: %d %s", w.Code, w.Body)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"` + strings.Repeat("x", DefaultMaxBodyBytes) + `"}}`
	if w := s.exchange(t, exchange{body: big}); w.Code != 413 {
		t.Fatalf("body past DefaultMaxBodyBytes: %d", w.Code)
	}
	if w := s.exchange(t, exchange{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`}); w.Body.String() != `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}` {
		t.Fatalf("empty table: %s", w.Body)
	}
}

func TestChunkedBodyTooLarge(t *testing.T) {
	var errs []string
	s := testServer(&errs)
	body := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"` + strings.Repeat("a", 2000) + `"}}`
	r := httptest.NewRequest(http.MethodPost, "http://svc.example/mcp", io.MultiReader(strings.NewReader(body)))
	r.ContentLength = -1 // as a chunked request arrives
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", w.Code)
	}
}

// brokenWriter is a connection whose client has gone.
type brokenWriter struct{ *httptest.ResponseRecorder }

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestSentTellsWhetherTheResultWentOut(t *testing.T) {
	tests := []struct {
		name       string
		structured any
		broken     bool
		want       bool
	}{
		{"written", map[string]any{"ok": true}, false, true},
		{"client gone", map[string]any{"ok": true}, true, false},
		{"unencodable result", map[string]any{"f": func() {}}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var told []bool
			s := &Server{Tools: []Tool{{Name: "once", Call: func(context.Context, json.RawMessage, json.RawMessage) (*Result, error) {
				// No Content: the server's copy with [] must keep Sent.
				return &Result{StructuredContent: tt.structured, Sent: func(ok bool) { told = append(told, ok) }}, nil
			}}}}
			r := httptest.NewRequest(http.MethodPost, "http://svc.example/mcp",
				strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"once"}}`))
			r.Header.Set("Content-Type", "application/json")
			var w http.ResponseWriter = httptest.NewRecorder()
			if tt.broken {
				w = brokenWriter{httptest.NewRecorder()}
			}
			s.ServeHTTP(w, r)
			if len(told) != 1 || told[0] != tt.want {
				t.Fatalf("Sent got %v, want one call with %v", told, tt.want)
			}
		})
	}
}
