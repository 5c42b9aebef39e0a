package llmresp

import (
	"fmt"
	"strings"
	"testing"
)

// A realistic token stream: 1,000 Chat Completions chunks of one token each, fed in 4 KiB reads,
// each event framed and read.
func BenchmarkChatStream(b *testing.B) {
	var sb strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&sb, "data: {\"id\":\"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT\",\"object\":\"chat.completion.chunk\",\"created\":1741569952,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok%d\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n", i)
	}
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var ps []Piece
	for b.Loop() {
		fr := NewFramer(OpenAIChat, FormatSSE, 0)
		emit := func(e *Event) error {
			var err error
			ps, _, err = Pieces(OpenAIChat, e, ps[:0])
			return err
		}
		for p := body; len(p) > 0; p = p[min(4096, len(p)):] {
			if err := fr.Feed(p[:min(4096, len(p))], emit); err != nil {
				b.Fatal(err)
			}
		}
		if err := fr.Close(emit); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/event")
}
