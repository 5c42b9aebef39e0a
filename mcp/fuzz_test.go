package mcp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzParseMessage holds that any body parses or fails with a JSON-RPC
// code, never panics, and that only JSON objects parse.
func FuzzParseMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"s":"x"},"_meta":{"x402/payment":{}}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xed\xa0\x80\"}",
		`{"a":"\"[[[["}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, err := parseMessage(body, 8)
		if err != nil {
			switch err.Code {
			case CodeParseError, CodeInvalidRequest:
			default:
				t.Fatalf("code %d", err.Code)
			}
			return
		}
		if !json.Valid(body) || depth(body) > 8 {
			t.Fatalf("accepted %q", body)
		}
		if msg.kind != kindNotification && !validID(msg.id) {
			t.Fatalf("kind %d with id %q", msg.kind, msg.id)
		}
		if msg.params != nil && msg.params[0] != '{' {
			t.Fatalf("params %q", msg.params)
		}
	})
}

// FuzzServe sends any body through the whole handler: it answers with a
// status of the transport and, when it has a body, one JSON-RPC message.
func FuzzServe(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"s":"hi"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":[]}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
	} {
		f.Add([]byte(seed))
	}
	var errs []string
	s := testServer(&errs)
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "http://svc.example/mcp", strings.NewReader(string(body)))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		switch w.Code {
		case 200, 202, 400, 413:
		default:
			t.Fatalf("status %d", w.Code)
		}
		if w.Code == 202 {
			if w.Body.Len() != 0 {
				t.Fatalf("202 with a body")
			}
			return
		}
		var resp struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   *Error          `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.JSONRPC != "2.0" || (resp.Result == nil) == (resp.Error == nil) {
			t.Fatalf("answer %s", w.Body)
		}
	})
}
