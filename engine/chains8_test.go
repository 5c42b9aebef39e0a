package engine

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestColMap: newColMap takes a table whose bytes from 0x80 up share a
// column, and declines the others.
func TestColMap(t *testing.T) {
	var col byteCols
	for b := range col {
		col[b] = uint32(b % 40)
		if b >= 0x80 {
			col[b] = 7
		}
	}
	if m := newColMap(&col); m.high != 7 {
		t.Fatalf("high %d, want 7", m.high)
	}
	col[0xC3] = 8
	if m := newColMap(&col); m.high != -1 {
		t.Fatalf("two columns from 0x80 up: high %d", m.high)
	}
	col[0xC3] = 7
	col[3] = 300
	if m := newColMap(&col); m.high != -1 {
		t.Fatalf("a column above 255: high %d", m.high)
	}
	for kind, m := range Default().c.union.cmap {
		if m.high < 0 {
			t.Errorf("the published rulebook's union: view %d has no column map", kind)
		}
	}
}

// TestMapCols: the columns mapCols writes are the table's, for every
// length (the kernel's blocks of 32 and the bytes after them) and bytes of
// all kinds, and nothing past. Under purego, or without AVX2, it checks
// the byte loop alone.
func TestMapCols(t *testing.T) {
	u := Default().c.union
	rng := rand.New(rand.NewPCG(8, 9))
	for kind := range u.cmap {
		m, col := &u.cmap[kind], &u.cols[kind]
		for range 3000 {
			src := make([]byte, rng.IntN(200))
			for j := range src {
				src[j] = byte(rng.IntN(128))
				if rng.IntN(10) == 0 {
					src[j] = byte(rng.IntN(256))
				}
			}
			dst := make([]byte, len(src)+8)
			for j := range dst {
				dst[j] = 0xA5
			}
			m.mapCols(dst[:len(src)], src, col)
			for j := range dst {
				w := byte(0xA5)
				if j < len(src) {
					w = byte(col[src[j]])
				}
				if dst[j] != w {
					t.Fatalf("kind %d, %x: byte %d is %#x, want %#x", kind, src, j, dst[j], w)
				}
			}
		}
	}
}

// TestWalkCols: scan over the eight chains of column text (or, without
// AVX2, walk's four) finds what one chain over the text finds, in the same
// order, with occurrences at and across every chain's start and end.
func TestWalkCols(t *testing.T) {
	c := Default().c
	u := c.union
	var words []string
	words = append(words, c.literals...)
	for i := range c.rules {
		for _, p := range c.rules[i].prefixes {
			words = append(words, string(p))
		}
	}
	track := make([]bool, len(c.literals))
	for i := range track {
		track[i] = i%3 == 0
	}
	rng := rand.New(rand.NewPCG(10, 11))
	nwords := (len(c.literals) + 63) / 64
	var sc unionScratch
	for round := range 300 {
		n := 1024 + rng.IntN(5000)
		text := make([]byte, n)
		for j := range text {
			text[j] = "abcdefghijklmnopqrstuvwxyz  \n.,\xc3\xa9"[rng.IntN(32)]
		}
		// Literals at random places and straddling the chains' starts.
		q := colWalkSpan(n, u.ac.ov)
		for k := range 40 {
			w := words[rng.IntN(len(words))]
			at := rng.IntN(n)
			if k < 16 {
				at = max(0, (k%8)*q+rng.IntN(2*u.ac.ov+2)-u.ac.ov-1)
			}
			copy(text[at:], w)
		}
		for kind := range viewKind(3) {
			lo := rng.IntN(3)
			wantSeen, gotSeen := make([]uint64, nwords), make([]uint64, nwords)
			var wantHits, gotHits []hitAt
			var wantKw, gotKw []litHit
			// The reference: one chain, hit by hit.
			col := &u.cols[kind]
			u.ac.resume(text, 0, 0, col, func(row uint32, end int) {
				if u.mark(row, lo+end, wantSeen, keptHits{track, &wantKw}) {
					wantHits = append(wantHits, hitAt{row, int32(lo + end)})
				}
			})
			u.scan(text, lo, kind, gotSeen, &gotHits, &sc, keptHits{track, &gotKw})
			if !slices.Equal(gotSeen, wantSeen) {
				t.Fatalf("round %d, kind %d: keywords %x, want %x", round, kind, gotSeen, wantSeen)
			}
			if !slices.Equal(gotHits, wantHits) {
				t.Fatalf("round %d, kind %d, %d bytes: %d prefix hits, want %d", round, kind, n, len(gotHits), len(wantHits))
			}
			byEnd := func(a, b litHit) int { return cmp.Or(cmp.Compare(a.end, b.end), cmp.Compare(a.id, b.id)) }
			slices.SortFunc(gotKw, byEnd)
			slices.SortFunc(wantKw, byEnd)
			if !slices.Equal(gotKw, wantKw) {
				t.Fatalf("round %d, kind %d: %d keyword hits, want %d", round, kind, len(gotKw), len(wantKw))
			}
		}
	}
}
