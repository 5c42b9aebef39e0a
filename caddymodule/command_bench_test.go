package caddymodule

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/promptwall/promptwall/engine"
)

// BenchmarkJSONL measures `caddy prompt-scan --jsonl` in process over a
// corpus: PROMPTWALL_CORPORA names the folder of the published corpora;
// without it the engine's conformance vectors stand in.
func BenchmarkJSONL(b *testing.B) {
	for _, name := range []string{"benign_prompts.jsonl", "chat_bodies_benign.jsonl", "injection_jailbreak.jsonl"} {
		path := filepath.Join(os.Getenv("PROMPTWALL_CORPORA"), name)
		if os.Getenv("PROMPTWALL_CORPORA") == "" {
			path = filepath.Join("..", "engine", "testdata", "vectors.jsonl")
		}
		data, err := os.ReadFile(path)
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
