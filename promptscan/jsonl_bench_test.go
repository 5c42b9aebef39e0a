package promptscan

import (
	"bufio"
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/promptwall/promptwall/bench/chatbody"
	"github.com/promptwall/promptwall/engine"
)

// BenchmarkJSONL measures the command's --jsonl path in process over each
// published corpus (chatbody.Corpora: PROMPTWALL_CORPORA, else
// bench/corpora).
func BenchmarkJSONL(b *testing.B) {
	for _, name := range []string{"benign_prompts.jsonl", "chat_bodies_benign.jsonl", "injection_jailbreak.jsonl"} {
		f, err := chatbody.OpenCorpus(filepath.Join(chatbody.Corpora(), name))
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				w := bufio.NewWriter(io.Discard)
				if _, bad, err := scanJSONL(engine.Default(), bytes.NewReader(data), w); err != nil || bad > 0 {
					b.Fatal(bad, err)
				}
			}
		})
	}
}
