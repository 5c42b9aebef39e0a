package engine

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestScanASCIIChains checks that the four-chain scan finds exactly the
// literals and view flags that one chain over the whole text finds, around
// the quarters' boundaries too, and that the flags are the text's unitFlags.
func TestScanASCIIChains(t *testing.T) {
	c := Default().c
	words := strings.Fields("ignore IGNORE all previous instructions system prompt you are now DAN developer mode " +
		"1gn0r3 pr3v10us %69gnore aGVsbG8= the a of < > [ ] { } # $ @ 0 7 \n \t zzz jailbreak act as override")
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 3000; n++ {
		var b strings.Builder
		size := rng.IntN(2000)
		for b.Len() < size {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(" \n"[rng.IntN(2)])
		}
		text := []byte(b.String())
		got := make([]uint64, (c.litCount+63)/64)
		want := make([]uint64, len(got))
		gotFlags := c.ac.scanASCII(text, &c.colRaw, c.maxLit, got)
		wantFlags := c.ac.resume(text, 0, &c.colRaw, want)
		var flags uint8
		for _, u := range text {
			flags |= unitFlags[u]
		}
		if !slices.Equal(got, want) || gotFlags != wantFlags || wantFlags != flags {
			t.Fatalf("%q: four chains %x flags %b, one chain %x flags %b, unitFlags %b", text, got, gotFlags, want, wantFlags, flags)
		}
	}
	// Every literal across every quarter boundary, in texts of many lengths.
	var fromByte [128]byte
	for u := 127; u >= 0; u-- {
		fromByte[c.ascii[u]] = byte(u)
	}
	for _, lit := range c.literals {
		word := make([]byte, len(lit))
		for i := range lit {
			word[i] = fromByte[lit[i]]
		}
		for _, size := range []int{64, 100, 203, 517, 1024} {
			q := size / 4
			for _, boundary := range []int{q, 2 * q, 3 * q} {
				for at := max(0, boundary-len(word)); at <= boundary && at+len(word) <= size; at++ {
					text := []byte(strings.Repeat(" ", size))
					copy(text[at:], word)
					got := make([]uint64, (c.litCount+63)/64)
					want := make([]uint64, len(got))
					c.ac.scanASCII(text, &c.colRaw, c.maxLit, got)
					c.ac.resume(text, 0, &c.colRaw, want)
					if !slices.Equal(got, want) {
						t.Fatalf("%q at %d of %d bytes: four chains %x, one chain %x", word, at, size, got, want)
					}
				}
			}
		}
	}
}

// BenchmarkKeywords compares the keyword pass with four chains and with
// one, on benign prose: go test -bench Keywords ./engine/
func BenchmarkKeywords(b *testing.B) {
	c := Default().c
	seen := make([]uint64, (c.litCount+63)/64)
	for _, size := range []int{300, 4 << 10} {
		text := []byte(strings.Repeat(proseWords, size/len(proseWords)+1)[:size])
		b.Run(strconv.Itoa(size)+"B/four", func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				c.ac.scanASCII(text, &c.colRaw, c.maxLit, seen)
			}
		})
		b.Run(strconv.Itoa(size)+"B/one", func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				c.ac.resume(text, 0, &c.colRaw, seen)
			}
		})
	}
}
