package engine

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/promptwall/promptwall/bench/chatbody"
)

// assistantMessages returns the assistant messages of the benign chat
// bodies: what a model streams back.
func assistantMessages(tb testing.TB) [][]byte {
	bodies, err := chatbody.ReadCorpus(filepath.Join(chatbody.Corpora(), "chat_bodies_benign.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for _, b := range bodies {
		var body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(b, &body) != nil {
			continue
		}
		for _, m := range body.Messages {
			if s, ok := m.Content.(string); ok && m.Role == "assistant" && s != "" {
				out = append(out, []byte(s))
			}
		}
	}
	if len(out) == 0 {
		tb.Fatal("no assistant messages")
	}
	return out
}

// streamChunks streams text in chunks of size bytes and calls held with
// Held after each.
func streamChunks(e *Engine, text []byte, size int, held func(int)) Result {
	s := e.NewStream()
	for i := 0; i < len(text); i += size {
		s.Write(text[i:min(i+size, len(text))])
		s.Ready()
		s.Final()
		if held != nil {
			held(s.Held())
		}
	}
	return s.Close()
}

// BenchmarkStream streams the chat corpus's assistant messages in chunks
// of 20 bytes (a token or a few, as a model's stream sends them) against
// Scan of each whole message, and reports the bytes held back after each
// chunk (p50, p99, max): how far the released sanitized copy trails the
// text.
func BenchmarkStream(b *testing.B) {
	e := Default()
	msgs := assistantMessages(b)
	total := 0
	for _, m := range msgs {
		total += len(m)
	}
	b.Run("scan-whole", func(b *testing.B) {
		b.SetBytes(int64(total))
		for i := 0; i < b.N; i++ {
			for _, m := range msgs {
				e.Scan(m)
			}
		}
	})
	b.Run("stream-20B", func(b *testing.B) {
		var held []int
		for _, m := range msgs {
			streamChunks(e, m, 20, func(h int) { held = append(held, h) })
		}
		slices.Sort(held)
		b.SetBytes(int64(total))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for _, m := range msgs {
				streamChunks(e, m, 20, nil)
			}
		}
		b.ReportMetric(float64(held[len(held)/2]), "held-p50-B")
		b.ReportMetric(float64(held[len(held)*99/100]), "held-p99-B")
		b.ReportMetric(float64(held[len(held)-1]), "held-max-B")
	})
}
