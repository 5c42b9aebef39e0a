package mcpmsg

import (
	"encoding/json"
	"testing"
)

// FuzzParse: Parse never panics; what it accepts has valid kinds, texts of
// its messages, and rewrites to valid JSON that parses to the same messages.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","description":"d","inputSchema":{"type":"object","properties":{"k":{"type":"string"}}}}]}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="}],"structuredContent":{"a":"b"}}}`,
		`[{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}},{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"m"}}]`,
		`{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"systemPrompt":"s","maxTokens":9}}`,
		`{"jsonrpc":"2.0","id":1,"r\u0065sult":{"data:":"data:text/plain;base64,aGk="}}`,
		`{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}`,
		`[`, `{}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		b, err := Parse(in)
		if err != nil {
			return
		}
		if !json.Valid(in) {
			t.Fatalf("accepted a body that is not JSON")
		}
		if len(b.Messages) == 0 || (!b.Batch && len(b.Messages) != 1) {
			t.Fatalf("%d messages", len(b.Messages))
		}
		for _, m := range b.Messages {
			if m.Kind < Request || m.Kind > ErrorReply {
				t.Fatalf("kind %d", m.Kind)
			}
		}
		if !b.Batch {
			// The envelope walk reads what encoding/json reads (exact keys, the last wins).
			var env map[string]json.RawMessage
			if err := json.Unmarshal(in, &env); err != nil {
				t.Fatalf("accepted what encoding/json refuses: %v", err)
			}
			var method string
			if raw, ok := env["method"]; ok && json.Unmarshal(raw, &method) == nil && method != b.Messages[0].Method {
				t.Fatalf("method %q, encoding/json reads %q", b.Messages[0].Method, method)
			}
		}
		repl := map[int]string{}
		for i := range b.Doc.Texts {
			if n := b.MessageOf(i); n < 0 || n >= len(b.Messages) {
				t.Fatalf("text %d of message %d", i, n)
			}
			repl[i] = "[removed]"
		}
		out := b.Rewrite(repl, nil)
		if !json.Valid(out) {
			t.Fatalf("rewrite is not JSON: %q", out)
		}
		b2, err := Parse(out)
		if err != nil {
			// A rewritten key may collide with the envelope's (a key
			// "[removed]" twice is fine; "id" cannot appear), so only
			// JSON validity is certain.
			return
		}
		if len(b2.Messages) != len(b.Messages) {
			t.Fatalf("rewrite changed the messages: %d, %d", len(b.Messages), len(b2.Messages))
		}
	})
}
