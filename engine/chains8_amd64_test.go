//go:build !purego

package engine

import (
	"testing"

	"github.com/promptwall/promptwall/bench/chatbody"
)

// BenchmarkUnionDocument: one union automaton pass over the corpus
// document, as findLiterals makes it, with the eight chains of column
// bytes and with walk's four.
func BenchmarkUnionDocument(b *testing.B) {
	doc := []byte(chatbody.Document(corpusTexts(b, "chat_bodies_benign.jsonl"), 256<<10, false))
	c := Default().c
	u := c.union
	seen := make([]uint64, (len(c.literals)+63)/64)
	sc := new(unionScratch)
	var hits []hitAt
	var kept []litHit
	kw := keptHits{c.reachLit, &kept}
	for _, eight := range []bool{true, false} {
		name := "eight"
		if !eight {
			name = "four"
		}
		b.Run(name, func(b *testing.B) {
			if eight && !hasColWalk {
				b.Skip("no AVX2 for the column text")
			}
			defer func(was bool) { hasColWalk = was }(hasColWalk)
			hasColWalk = eight
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				hits, kept = hits[:0], kept[:0]
				u.scan(doc, 0, viewASCII, seen, &hits, sc, kw)
			}
		})
	}
}
