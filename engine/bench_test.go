package engine

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/promptwall/promptwall/bench/chatbody"
)

// corpusTexts loads the texts of one of the published corpora
// (chatbody.Corpora: PROMPTWALL_CORPORA, else bench/corpora).
func corpusTexts(b *testing.B, name string) [][]byte {
	texts, err := chatbody.ReadCorpus(filepath.Join(chatbody.Corpora(), name))
	if err != nil {
		b.Fatal(err)
	}
	return texts
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

// BenchmarkScanDocument scans one 256 KiB text made of real messages: the
// contents of the benign chat bodies' messages (code, explanations and
// lists; the ASCII ones, and all of them), joined by blank lines, as a
// long-context request of real material would hold them. The load test's
// prose has few newlines, '<' or common prefixes; this text has thousands,
// and costs the matching far more.
func BenchmarkScanDocument(b *testing.B) {
	for _, asciiOnly := range []bool{true, false} {
		doc := []byte(chatbody.Document(corpusTexts(b, "chat_bodies_benign.jsonl"), 256<<10, asciiOnly))
		name := "all"
		if asciiOnly {
			name = "ASCII"
		}
		b.Run(name, func(b *testing.B) {
			e := Default()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				e.Scan(doc)
			}
		})
	}
}

// BenchmarkSanitizeDocument sanitizes BenchmarkScanDocument's text, which
// has a few suspicious matches, from its Cover: the firewall's second step
// on a long document, which rescans windows around the replacements.
func BenchmarkSanitizeDocument(b *testing.B) {
	doc := []byte(chatbody.Document(corpusTexts(b, "chat_bodies_benign.jsonl"), 256<<10, false))
	e := Default()
	res, cov := e.ScanCover(doc)
	if cov == nil {
		b.Fatal("the document has no match to sanitize")
	}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, r, _ := e.SanitizeScan(doc, cov, res.Matches, nil, nil); len(r.Matches) != 0 {
			b.Fatal("the sanitized copy has matches")
		}
	}
}

func BenchmarkScanBenignPrompts(b *testing.B) { benchCorpus(b, "benign_prompts.jsonl") }
func BenchmarkScanChatBodies(b *testing.B)    { benchCorpus(b, "chat_bodies_benign.jsonl") }
func BenchmarkScanInjections(b *testing.B)    { benchCorpus(b, "injection_jailbreak.jsonl") }

// BenchmarkScanProse scans benign prose of 4 KiB and 256 KiB: the texts a
// firewall sees in chat and long-context requests; and the 256 KiB text
// with one em dash in its middle, which makes it not ASCII (a real
// document's curly quote or dash does the same).
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
	text := []byte(chatbody.Prose(256<<10, 0))
	text = slices.Concat(text[:len(text)/2], []byte("\u2014"), text[len(text)/2:])
	b.Run("262144B-dash", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for i := 0; i < b.N; i++ {
			e.Scan(text)
		}
	})
}

// passTexts are the inputs of the per-text pass benchmarks: prose of a
// short message, a paragraph and a long-context body, and digit-heavy
// JSON (chat bodies and tool output carry many numbers).
func passTexts() []struct {
	name string
	text []byte
} {
	digits := func(n int) []byte {
		var b []byte
		for i := 0; len(b) < n; i++ {
			b = fmt.Appendf(b, `{"id":%d,"price":%d.%02d,"sku":"A%05d","tags":["x","y"]}, `, 1700000000+i*7919, i%1000, i%100, i*37%100000)
		}
		return b[:n]
	}
	return []struct {
		name string
		text []byte
	}{
		{"prose64B", []byte(chatbody.Prose(64, 0))},
		{"prose1KiB", []byte(chatbody.Prose(1<<10, 0))},
		{"prose256KiB", []byte(chatbody.Prose(256<<10, 0))},
		{"digits1KiB", digits(1 << 10)},
		{"digits256KiB", digits(256 << 10)},
	}
}

// BenchmarkASCIILeet measures the pass that tells an ASCII text and lists
// its leetspeak positions.
func BenchmarkASCIILeet(b *testing.B) {
	for _, in := range passTexts() {
		b.Run(in.name, func(b *testing.B) {
			dst := make([]int32, 0, len(in.text))
			b.SetBytes(int64(len(in.text)))
			for b.Loop() {
				dst, _, _, _ = asciiLeet(dst[:0], in.text)
			}
		})
	}
}

// BenchmarkFindTokens measures the base64 token search over an ASCII text.
func BenchmarkFindTokens(b *testing.B) {
	for _, in := range passTexts() {
		b.Run(in.name, func(b *testing.B) {
			n := 0
			b.SetBytes(int64(len(in.text)))
			for b.Loop() {
				findTokens(in.text, 0, func(start, runEnd, end int, url bool) { n++ })
			}
		})
	}
}
