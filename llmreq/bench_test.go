package llmreq

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/bench/chatbody"
)

// chatBody builds an OpenAI chat body of about size bytes: a system prompt, turns of
// conversation with a tool call, and (for long context) one user message holding a document
// with the newlines, quotes and non-ASCII text of real prose.
func chatBody(size int) []byte {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	type msg struct {
		Role      string `json:"role"`
		Content   any    `json:"content"`
		ToolCalls []call `json:"tool_calls,omitempty"`
		ToolID    string `json:"tool_call_id,omitempty"`
	}
	msgs := []msg{{Role: "system", Content: "You are a helpful assistant. Answer concisely and cite sources."}}
	turn := 0
	body := func() []byte {
		b, _ := json.Marshal(map[string]any{"model": "gpt-4.1", "messages": msgs, "temperature": 0.2, "stream": true})
		return b
	}
	para := "The quick brown fox jumps over the lazy dog; \"quoted\" text, café, naïve, 東京 — and a newline.\n"
	for len(body()) < size {
		switch {
		case size > 64<<10 && turn == 0:
			doc := strings.Repeat(para, (size-2048)/len(para))
			msgs = append(msgs, msg{Role: "user", Content: []any{
				map[string]any{"type": "text", "text": "Summarize this document:\n\n" + doc},
			}})
		case turn%3 == 1:
			msgs = append(msgs, msg{Role: "assistant", ToolCalls: []call{{ID: fmt.Sprintf("call_%d", turn), Type: "function",
				Function: fn{Name: "search", Arguments: `{"query":"lazy dog facts","limit":5}`}}}})
		case turn%3 == 2:
			msgs = append(msgs, msg{Role: "tool", ToolID: fmt.Sprintf("call_%d", turn-1), Content: "Result: " + para})
		default:
			msgs = append(msgs, msg{Role: "user", Content: "Tell me more about the fox and the dog, in detail please. " + para})
		}
		turn++
	}
	return body()
}

func benchParse(b *testing.B, size int) {
	body := chatBody(size)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := Parse("/v1/chat/completions", body)
		if err != nil || len(r.Texts) == 0 {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseChat4KB(b *testing.B)          { benchParse(b, 4<<10) }
func BenchmarkParseLongContext256KB(b *testing.B) { benchParse(b, 256<<10) }

func BenchmarkRewriteLongContext256KB(b *testing.B) { benchRewrite(b, chatBody(256<<10), "fox", "cat") }

// benchRewrite times Rewrite of body with old replaced by new in its user texts, as
// sanitizing rewrites a body.
func benchRewrite(b *testing.B, body []byte, old, new string) {
	r, err := Parse("/v1/chat/completions", body)
	if err != nil {
		b.Fatal(err)
	}
	repl := map[int]string{}
	for i, x := range r.Texts {
		if x.Role == RoleUser {
			repl[i] = strings.ReplaceAll(x.Value, old, new)
		}
	}
	if len(repl) == 0 {
		b.Fatal("no user text")
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if out := r.Rewrite(repl); len(out) == 0 {
			b.Fatal("empty")
		}
	}
}

// The reference point: what decoding into map[string]any costs for the same bodies.
func benchStdlib(b *testing.B, size int) {
	body := chatBody(size)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStdlibUnmarshalChat4KB(b *testing.B)          { benchStdlib(b, 4<<10) }
func BenchmarkStdlibUnmarshalLongContext256KB(b *testing.B) { benchStdlib(b, 256<<10) }

func TestBenchBodies(t *testing.T) {
	for _, size := range []int{4 << 10, 256 << 10} {
		body := chatBody(size)
		if len(body) < size || len(body) > size+size/4 {
			t.Errorf("body for %d bytes is %d bytes", size, len(body))
		}
		r, err := Parse("/v1/chat/completions", body)
		if err != nil {
			t.Fatal(err)
		}
		checkTexts(t, body, r)
	}
}

// TestParseAllocations pins the cost of the hot path: the Request, its Texts, one string for all
// paths and one for all values, whatever the body's size (the index is pooled); and for a body
// with literals of MinEdited bytes or more, their records and marks (two).
func TestParseAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector empties sync.Pool at random")
	}
	for _, size := range []int{4 << 10, 256 << 10} {
		body := chatBody(size)
		n := testing.AllocsPerRun(50, func() {
			if _, err := Parse("/v1/chat/completions", body); err != nil {
				t.Fatal(err)
			}
		})
		want := 5.0
		if size > MinEdited {
			want += 2
		}
		if n > want {
			t.Errorf("%d-byte body: %.1f allocations per Parse, want at most %.0f", len(body), n, want)
		}
	}
	// Releasing a Request that holds no long values costs nothing.
	r, err := Parse("/v1/chat/completions", chatBody(4<<10))
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(50, func() { c := *r; c.Release() }); n != 0 {
		t.Errorf("Release of a short body's Request: %.1f allocations", n)
	}
}

// TestReleaseReuses: parses whose Requests are released reuse the memory of
// their long values; without Release, each parse allocates them anew.
func TestReleaseReuses(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector empties sync.Pool at random")
	}
	body := longBody(1)
	perParse := func(release bool) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 20 {
			r, err := Parse("/v1/chat/completions", body)
			if err != nil {
				t.Fatal(err)
			}
			if release {
				r.Release()
			}
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / 20
	}
	perParse(true) // the pools filled
	if kept, released := perParse(false), perParse(true); kept < heldValues || released >= heldValues/4 {
		t.Errorf("bytes allocated a parse: %d kept, %d released; want at least %d and under %d", kept, released, heldValues, heldValues/4)
	}
}

// BenchmarkParseChatTurns parses the firewall load test's 4 KiB body: ten
// messages of plain prose, no escapes.
func BenchmarkParseChatTurns(b *testing.B) {
	body := chatbody.Chat4K()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if r, err := Parse("/v1/chat/completions", body); err != nil || len(r.Texts) != 10 {
			b.Fatal(err)
		}
	}
}

// docBody is the firewall load test's 256k-doc body (chatbody.LongDocument256K): real messages
// of the published corpus as one document, with an escaped newline every 48 bytes or so and the
// quotes of real text, the escapes the synthetic bodies above have few of.
func docBody(b *testing.B) []byte {
	body, err := chatbody.LongDocument256K(chatbody.Corpora())
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// BenchmarkParseDocument256K parses the 256k-doc body: the scan finds each literal's end and
// the walker decodes the document, both across its thousands of escapes.
func BenchmarkParseDocument256K(b *testing.B) {
	body := docBody(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if r, err := Parse("/v1/chat/completions", body); err != nil || len(r.Texts) != 2 {
			b.Fatal(err)
		}
	}
}

// BenchmarkRewriteDocument256K rewrites the 256k-doc body's document, as sanitizing does: the
// new text is encoded, its newlines and quotes escaped.
func BenchmarkRewriteDocument256K(b *testing.B) { benchRewrite(b, docBody(b), "the", "teh") }

// TestDocumentBody: the 256k-doc body's texts are encoding/json's, and its document rewritten
// (more escapes, a control character, non-ASCII text) decodes to the replacement.
func TestDocumentBody(t *testing.T) {
	body, err := chatbody.LongDocument256K(chatbody.Corpora())
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse("/v1/chat/completions", body)
	if err != nil || len(r.Texts) != 2 {
		t.Fatalf("%v, %d texts", err, len(r.Texts))
	}
	checkTexts(t, body, r)
	repl := strings.NewReplacer("\n", "\n\n\"\\", "e", "é\x01").Replace(r.Texts[1].Value)
	var req struct {
		Messages []struct{ Content string }
	}
	if err := json.Unmarshal(r.Rewrite(map[int]string{1: repl}), &req); err != nil || len(req.Messages) != 2 {
		t.Fatal(err)
	}
	if req.Messages[1].Content != repl || req.Messages[0].Content != r.Texts[0].Value {
		t.Fatal("the rewritten body does not decode to the replacement")
	}
}
