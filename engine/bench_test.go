package engine

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/promptwall/promptwall/bench/chatbody"
)

// corpusTexts loads the texts of a JSONL corpus: PROMPTWALL_CORPORA names
// the folder of the published corpora; without it the conformance vectors
// stand in (they are in the repository).
func corpusTexts(b *testing.B, name string) [][]byte {
	dir := os.Getenv("PROMPTWALL_CORPORA")
	path := filepath.Join(dir, name)
	if dir == "" {
		path = "testdata/vectors.jsonl"
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var rec struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Text != "" {
			out = append(out, []byte(rec.Text))
		}
	}
	return out
}

func benchCorpus(b *testing.B, name string) {
	texts := corpusTexts(b, name)
	e := Default()
	total := 0
	for _, t := range texts {
		total += len(t)
	}
	b.SetBytes(int64(total))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, t := range texts {
			e.Scan(t)
		}
	}
}

func BenchmarkScanBenignPrompts(b *testing.B) { benchCorpus(b, "benign_prompts.jsonl") }
func BenchmarkScanChatBodies(b *testing.B)    { benchCorpus(b, "chat_bodies_benign.jsonl") }
func BenchmarkScanInjections(b *testing.B)    { benchCorpus(b, "injection_jailbreak.jsonl") }

// BenchmarkScanProse scans benign prose of 4 KiB and 256 KiB: the texts a
// firewall sees in chat and long-context requests.
func BenchmarkScanProse(b *testing.B) {
	e := Default()
	for _, size := range []int{512, 4 << 10, 256 << 10} {
		text := []byte(chatbody.Prose(size, 0))
		b.Run(strconv.Itoa(size)+"B", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for i := 0; i < b.N; i++ {
				e.Scan(text)
			}
		})
	}
}
