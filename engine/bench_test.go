package engine

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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

// proseWords are benign English sentences (the firewall load test's).
const proseWords = `The quarterly report shows that revenue grew in every region, with the strongest gains coming from
subscription renewals and new enterprise contracts. Please summarise the main points for a non-technical audience and
suggest three follow-up questions we could ask the finance team. Our hiking group plans a weekend trip to the mountains;
we need a packing list that covers rain, cold nights and a long climb on the second day. How do I convert a list of
dictionaries into a table in Python without pulling in a large dependency? The recipe calls for two cups of flour,
one egg and a pinch of salt, but I only have oat milk at home. Explain the difference between a mutex and a
semaphore with a short example in Go. Write a polite email to a landlord asking when the heating will be repaired. `

// BenchmarkScanProse scans benign prose of 4 KiB and 256 KiB: the texts a
// firewall sees in chat and long-context requests.
func BenchmarkScanProse(b *testing.B) {
	e := Default()
	for _, size := range []int{512, 4 << 10, 256 << 10} {
		text := []byte(strings.Repeat(proseWords, size/len(proseWords)+1)[:size])
		b.Run(strconv.Itoa(size)+"B", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for i := 0; i < b.N; i++ {
				e.Scan(text)
			}
		})
	}
}
