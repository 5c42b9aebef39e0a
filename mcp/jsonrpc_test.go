package mcp

import (
	"strings"
	"testing"
)

func TestParseMessage(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		wantKind kind
		wantCode int // 0: no error
		wantID   string
		method   string
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, kindRequest, 0, "1", "ping"},
		{"string id", `{"jsonrpc":"2.0","id":"a-1","method":"ping","params":{}}`, kindRequest, 0, `"a-1"`, "ping"},
		{"null params", `{"jsonrpc":"2.0","id":2,"method":"ping","params":null}`, kindRequest, 0, "2", "ping"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, kindNotification, 0, "", "notifications/initialized"},
		{"response", `{"jsonrpc":"2.0","id":7,"result":{}}`, kindResponse, 0, "7", ""},
		{"error response", `{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"x"}}`, kindResponse, 0, "7", ""},
		{"whitespace around", " \n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n", kindRequest, 0, "1", "ping"},

		{"empty", ``, 0, CodeParseError, "", ""},
		{"not json", `{"jsonrpc":`, 0, CodeParseError, "", ""},
		{"two values", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, 0, CodeParseError, "", ""},
		{"invalid utf-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}", 0, CodeParseError, "", ""},
		{"too deep", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}}`, 0, CodeParseError, "", ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 0, CodeInvalidRequest, "", ""},
		{"broken batch", `[{"jsonrpc":"2.0"`, 0, CodeParseError, "", ""},
		{"not an object", `"ping"`, 0, CodeInvalidRequest, "", ""},
		{"null", `null`, 0, CodeInvalidRequest, "", ""},
		{"no jsonrpc", `{"id":1,"method":"ping"}`, 0, CodeInvalidRequest, "1", ""},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, 0, CodeInvalidRequest, "1", ""},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, 0, CodeInvalidRequest, "", ""},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, 0, CodeInvalidRequest, "", ""},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, 0, CodeInvalidRequest, "", ""},
		{"numeric method", `{"jsonrpc":"2.0","id":1,"method":5}`, 0, CodeInvalidRequest, "1", ""},
		{"method case", `{"jsonrpc":"2.0","id":1,"Method":"ping"}`, 0, CodeInvalidRequest, "1", ""},
		{"array params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}`, 0, CodeInvalidRequest, "1", ""},
		{"request and response", `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, 0, CodeInvalidRequest, "1", ""},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, 0, CodeInvalidRequest, "", ""},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, 0, CodeInvalidRequest, "1", ""},
		{"nothing", `{"jsonrpc":"2.0","id":1}`, 0, CodeInvalidRequest, "1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := parseMessage([]byte(tt.body), DefaultMaxDepth)
			if tt.wantCode != 0 {
				if err == nil || err.Code != tt.wantCode {
					t.Fatalf("error = %v, want code %d", err, tt.wantCode)
				}
			} else {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if msg.kind != tt.wantKind || msg.method != tt.method {
					t.Fatalf("kind %d method %q, want %d %q", msg.kind, msg.method, tt.wantKind, tt.method)
				}
			}
			if string(msg.id) != tt.wantID {
				t.Fatalf("id = %s, want %s", msg.id, tt.wantID)
			}
		})
	}
}

func TestDepth(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{`1`, 0},
		{`{}`, 1},
		{`{"a":[{"b":[]}]}`, 4},
		{`{"a":"[[[[{{{"}`, 1},
		{`{"a":"\"[[["}`, 1},
		{`{"a":"\\"}`, 1},
		{`]]]][`, 1},
	}
	for _, tt := range tests {
		if got := depth([]byte(tt.in)); got != tt.want {
			t.Errorf("depth(%s) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestEncodeResponse(t *testing.T) {
	tests := []struct {
		name   string
		id     string
		result any
		err    *Error
		want   string
	}{
		{"result", "1", struct{}{}, nil, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"error wins", `"x"`, struct{}{}, &Error{Code: -32601, Message: "m"}, `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"m"}}`},
		{"no id", "", nil, &Error{Code: -32700, Message: "p"}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}}`},
		{"unencodable", "3", map[string]any{"f": func() {}}, nil, `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"the result could not be encoded"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var id []byte
			if tt.id != "" {
				id = []byte(tt.id)
			}
			got, ok := encodeResponse(id, tt.result, tt.err)
			if string(got) != tt.want || ok != (tt.name != "unencodable") {
				t.Fatalf("got  %s (ok %v)\nwant %s", got, ok, tt.want)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"}, // never cuts a character in half
	}
	for _, tt := range tests {
		if got := truncate(tt.in, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
