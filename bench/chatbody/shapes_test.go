package chatbody

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"
	"testing"
)

var material = sync.OnceValues(func() (*Material, error) { return LoadMaterial(Corpora()) })

func loadMaterial(t *testing.T) *Material {
	t.Helper()
	m, err := material()
	if err != nil {
		t.Fatalf("loading the corpora: %v", err)
	}
	return m
}

type wireBody struct {
	Model    string
	Messages []struct {
		Role       string
		Content    *string
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string
			Type     string
			Function struct{ Name, Arguments string }
		} `json:"tool_calls"`
	}
	Tools []struct {
		Type     string
		Function struct {
			Name       string
			Parameters map[string]any
		}
	}
}

func decode(t *testing.T, name string, b []byte) wireBody {
	t.Helper()
	var w wireBody
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		// temperature is the one other member.
		var loose wireBody
		if err := json.Unmarshal(b, &loose); err != nil || !json.Valid(b) {
			t.Fatalf("%s: not a chat body: %v", name, err)
		}
		w = loose
	}
	if w.Model == "" || len(w.Messages) == 0 {
		t.Fatalf("%s: no model or no messages", name)
	}
	return w
}

func TestAgent(t *testing.T) {
	m := loadMaterial(t)
	for _, tc := range []struct {
		name string
		n    int
		seed uint64
	}{{"4k", 4 << 10, 1}, {"4k-seed2", 4 << 10, 2}, {"64k", 64 << 10, 7}, {"256k", 256 << 10, 1}, {"256k-seed3", 256 << 10, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			b := m.Agent(tc.n, tc.seed)
			if len(b) > tc.n || len(b) < tc.n-64 {
				t.Fatalf("%d bytes, want %d to %d", len(b), tc.n-64, tc.n)
			}
			if !bytes.Equal(b, m.Agent(tc.n, tc.seed)) {
				t.Fatal("not deterministic")
			}
			if bytes.Equal(b, m.Agent(tc.n, tc.seed+100)) {
				t.Fatal("another seed gives the same body")
			}
			w := decode(t, tc.name, b)
			if len(w.Tools) != 4 || w.Tools[0].Function.Parameters["type"] != "object" {
				t.Fatalf("tools %+v", w.Tools)
			}
			if w.Messages[0].Role != "system" || w.Messages[1].Role != "user" {
				t.Fatalf("starts with %s, %s", w.Messages[0].Role, w.Messages[1].Role)
			}
			calls, results := map[string]bool{}, 0
			for i, msg := range w.Messages {
				switch msg.Role {
				case "assistant":
					for _, c := range msg.ToolCalls {
						if c.Type != "function" || !json.Valid([]byte(c.Function.Arguments)) {
							t.Fatalf("message %d: tool call %+v", i, c)
						}
						calls[c.ID] = true
					}
					if len(msg.ToolCalls) == 0 && (msg.Content == nil || *msg.Content == "") {
						t.Fatalf("message %d: an empty answer", i)
					}
				case "tool":
					if !calls[msg.ToolCallID] || msg.Content == nil || *msg.Content == "" {
						t.Fatalf("message %d: a result of no call, or empty", i)
					}
					results++
				}
			}
			if last := w.Messages[len(w.Messages)-1]; last.Role != "tool" {
				t.Fatalf("ends with %s", last.Role)
			}
			if tc.n >= 256<<10 && (results < 10 || len(calls) != results) {
				t.Fatalf("%d calls, %d results", len(calls), results)
			}
			if StampAt(b) < 0 {
				t.Fatal("no place for a stamp")
			}
		})
	}
}

func TestChat(t *testing.T) {
	m := loadMaterial(t)
	for _, tc := range []struct {
		n    int
		seed uint64
	}{{256 << 10, 0}, {256 << 10, 700}, {32 << 10, uint64(len(m.Messages))/2 - 1}} {
		b := m.Chat(tc.n, tc.seed)
		w := decode(t, "chat", b)
		if len(b) > tc.n || len(b) < tc.n-24<<10 {
			t.Fatalf("seed %d: %d bytes, want at most %d and not much less", tc.seed, len(b), tc.n)
		}
		if w.Messages[0].Role != "system" || w.Messages[len(w.Messages)-1].Role != "user" {
			t.Fatalf("seed %d: not from a system prompt to a question", tc.seed)
		}
		// The corpus's messages, in order, from the seed's pair on.
		for i, msg := range w.Messages[1:] {
			want := m.Messages[(int(tc.seed)*2+i)%len(m.Messages)]
			if msg.Role != want.Role || *msg.Content != want.Content {
				t.Fatalf("seed %d: message %d is not the corpus's", tc.seed, i+1)
			}
		}
		if StampAt(b) < 0 {
			t.Fatal("no place for a stamp")
		}
	}
}

// TestResent: each request is the previous one's messages and two more,
// the answer to its last question and the next question, except where the
// history is trimmed: then it is the system prompt and a suffix of them,
// and the two. The sizes stay within the bounds.
func TestResent(t *testing.T) {
	m := loadMaterial(t)
	const lo, hi = 200 << 10, 312 << 10
	c := m.Resent(lo, hi, 5)
	type msgT struct{ role, content string }
	var prev []msgT
	var buf []byte
	total, trims := 0, 0
	const n = 250
	for k := range n {
		buf = c.Next(buf)
		w := decode(t, "resent", buf)
		cur := make([]msgT, len(w.Messages))
		for i, msg := range w.Messages {
			cur[i] = msgT{msg.Role, *msg.Content}
		}
		if cur[0] != (msgT{"system", ChatSystem}) || cur[len(cur)-1].role != "user" {
			t.Fatalf("request %d: not from the system prompt to a question", k)
		}
		if len(buf) > hi || (k > 0 || len(buf) < lo) && len(buf) < lo-24<<10 {
			t.Fatalf("request %d: %d bytes, want %d to %d", k, len(buf), lo, hi)
		}
		total += len(buf)
		if k > 0 {
			added := cur[len(cur)-2:]
			if added[0].role != "assistant" || added[1].role != "user" {
				t.Fatalf("request %d: adds %s and %s", k, added[0].role, added[1].role)
			}
			// The answer is the one to the last question.
			last := prev[len(prev)-1].content
			i := slices.IndexFunc(m.Messages, func(x Message) bool { return x.Content == last })
			if m.Messages[(i+1)%len(m.Messages)].Content != added[0].content {
				t.Fatalf("request %d: the answer is not the one to its question", k)
			}
			kept := cur[:len(cur)-2]
			if slices.Equal(kept, prev) {
				// resent whole
			} else if len(kept) < len(prev) && slices.Equal(kept[1:], prev[len(prev)-len(kept)+1:]) && len(buf) <= lo+24<<10 {
				trims++
			} else {
				t.Fatalf("request %d: its history is neither the previous request nor a trimmed one", k)
			}
		}
		prev = cur
	}
	if trims == 0 || trims != c.Trims() {
		t.Fatalf("%d trims seen, %d counted: want some in %d requests", trims, c.Trims(), n)
	}
	if mean := total / n; mean < lo || mean > hi {
		t.Fatalf("mean %d bytes", mean)
	}
	t.Logf("%d requests, mean %d bytes, %d trims", n, total/n, trims)
	// Deterministic, and another seed is another conversation.
	a, b := m.Resent(lo, hi, 5).Next(nil), m.Resent(lo, hi, 6).Next(nil)
	if !bytes.Equal(a, m.Resent(lo, hi, 5).Next(nil)) || bytes.Equal(a, b) {
		t.Fatal("seeds do not give their own conversations")
	}
}

func TestWithout(t *testing.T) {
	m := loadMaterial(t)
	long := func(s string) bool { return len(s) > 2000 }
	w := m.Without(long)
	if len(w.Messages) == 0 || len(w.Messages) >= len(m.Messages) || len(w.Prompts) >= len(m.Prompts) {
		t.Fatalf("kept %d of %d messages, %d of %d prompts", len(w.Messages), len(m.Messages), len(w.Prompts), len(m.Prompts))
	}
	for i, msg := range w.Messages {
		if long(msg.Content) || msg.Role != [2]string{"user", "assistant"}[i%2] {
			t.Fatalf("message %d: kept, or out of turn", i)
		}
	}
	for _, p := range w.Prompts {
		if long(p) {
			t.Fatal("a dropped prompt is kept")
		}
	}
	// Answers still follow their questions: the pairs are the corpus's,
	// in order.
	j := 0
	for i := 0; i < len(w.Messages); i += 2 {
		for j+1 < len(m.Messages) && (m.Messages[j] != w.Messages[i] || m.Messages[j+1] != w.Messages[i+1]) {
			j += 2
		}
		if j+1 >= len(m.Messages) {
			t.Fatalf("pair %d is not the corpus's", i/2)
		}
		j += 2
	}
}
