package jsonstr

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// TestPlainExact: checkPlain on short strings dense in the bytes Plain
// must stop at and the ones next to them.
func TestPlainExact(t *testing.T) {
	alphabet := []byte{'a', ' ', '"', '\\', 0x00, 0x1F, 0x20, 0x21, 0x5B, 0x5D, 0x7F, 0x80, 0xA2, 0xDC, 0xFF}
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 5000; n++ {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			if rng.IntN(4) == 0 {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[i] = 'a' + byte(rng.IntN(26))
			}
		}
		checkPlain(t, b)
	}
}

// plainRef is Plain as a byte loop, the reference for the fast ones.
func plainRef(b []byte, i int) int {
	for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
		i++
	}
	return i
}

// checkPlain compares Plain, PlainASCII and plainSWAR with plainRef from
// every start, and PlainASCII's answer with a byte loop's.
func checkPlain(t *testing.T, b []byte) {
	t.Helper()
	want := -1
	// high[i]: the first byte from 0x80 up at or after i.
	high := make([]int, len(b)+1)
	high[len(b)] = len(b)
	for i := len(b) - 1; i >= 0; i-- {
		if high[i] = high[i+1]; b[i] >= 0x80 {
			high[i] = i
		}
	}
	for from := 0; from <= len(b); from++ {
		if want < from { // else the next stop is still the one at want
			want = plainRef(b, from)
		}
		if got := Plain(b, from); got != want {
			t.Fatalf("Plain(%q, %d) = %d, want %d", b, from, got, want)
		}
		if got := plainSWAR(b, from); got != want {
			t.Fatalf("plainSWAR(%q, %d) = %d, want %d", b, from, got, want)
		}
		checkPlainASCII(t, b, from, want, high[from] >= want)
	}
}

func checkPlainASCII(t *testing.T, b []byte, from, want int, wantASCII bool) {
	t.Helper()
	if got, ascii := PlainASCII(b, from); got != want || ascii != wantASCII {
		t.Fatalf("PlainASCII(%q, %d) = %d, %v, want %d, %v", b, from, got, ascii, want, wantASCII)
	}
}

// TestPlainASCIIEverywhere: a byte from 0x80 up and a stop byte, each at
// every place of strings of every length up to 200 (or not there), read
// from the start and from the second byte.
func TestPlainASCIIEverywhere(t *testing.T) {
	for n := 0; n <= 200; n++ {
		b := bytes.Repeat([]byte{'a'}, n)
		for h := 0; h <= n; h++ {
			for s := 0; s <= n; s++ {
				for i := range b {
					b[i] = 'a'
				}
				if h < n {
					b[h] = 0xC3
				}
				if s < n {
					b[s] = '"'
				}
				for _, from := range []int{0, 1} {
					if from > n {
						continue
					}
					want := plainRef(b, from)
					checkPlainASCII(t, b, from, want, asciiRef(b[from:want]))
				}
			}
		}
	}
}

// plainNearMisses are plain bytes next to the stop bytes' values, or
// theirs with the high bit set.
var plainNearMisses = []byte{0x20, 0x21, 0x7F, 0x80, 0x9F, 0xA2, 0xDC, 0xFF, 0x5B, 0x5D, 0x23, 'a'}

// TestPlainStopEverywhere puts each stop byte at each position of strings
// of every length up to 200 (three of the kernel's 64-byte steps, a lone
// 32-byte block, a tail) among near misses, so that every lane of every
// block sees each stop byte.
func TestPlainStopEverywhere(t *testing.T) {
	for n := 0; n <= 200; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = plainNearMisses[i%len(plainNearMisses)]
		}
		checkPlain(t, b)
		for _, stop := range []byte{'"', '\\', 0x00, 0x1F} {
			for pos := range b {
				old := b[pos]
				b[pos] = stop
				checkPlain(t, b)
				b[pos] = old
			}
		}
	}
}

// TestPlainRandom compares Plain with plainRef on random strings dense in
// near misses, with runs between stops from a few bytes to a few hundred.
func TestPlainRandom(t *testing.T) {
	stops := []byte{'"', '\\', 0x00, 0x01, 0x1E, 0x1F}
	rng := rand.New(rand.NewPCG(7, 8))
	for n := 0; n < 2000; n++ {
		b := make([]byte, rng.IntN(300))
		run := 1 + rng.IntN(200) // mean distance between stops
		for i := range b {
			switch c := byte(rng.IntN(256)); {
			case rng.IntN(run) == 0:
				b[i] = stops[rng.IntN(len(stops))]
			case rng.IntN(2) == 0:
				b[i] = plainNearMisses[rng.IntN(len(plainNearMisses))]
			case c >= 0x20 && c != '"' && c != '\\':
				b[i] = c
			default:
				b[i] = 'x'
			}
		}
		checkPlain(t, b)
	}
}

// TestPlainLongRuns: strings whose bytes are mostly plain ones from 0x80
// up, so that runs are long, through Plain and the SWAR loop alone (which
// a machine with AVX2 runs only for the last bytes of a long string).
func TestPlainLongRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for n := 0; n < 3000; n++ {
		b := make([]byte, rng.IntN(100))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(8) != 0 && (b[i] < 0x20 || b[i] == '"' || b[i] == '\\') {
				b[i] = 0x80 | b[i]
			}
		}
		checkPlain(t, b)
	}
}

// FuzzPlain compares Plain, PlainASCII and plainSWAR with plainRef.
func FuzzPlain(f *testing.F) {
	f.Add([]byte(`"abc"`), uint(0))
	f.Add([]byte(`a long string literal that spans more than sixty-four bytes, with an \"escape\" and`+"\x01\x1f\x7f\x80\xff"), uint(3))
	f.Add(make([]byte, 100), uint(40))
	f.Fuzz(func(t *testing.T, b []byte, from uint) {
		i := int(from % uint(len(b)+1))
		want := plainRef(b, i)
		if got := Plain(b, i); got != want {
			t.Fatalf("Plain(%q, %d) = %d, want %d", b, i, got, want)
		}
		if got := plainSWAR(b, i); got != want {
			t.Fatalf("plainSWAR(%q, %d) = %d, want %d", b, i, got, want)
		}
		checkPlainASCII(t, b, i, want, asciiRef(b[i:want]))
	})
}

// BenchmarkPlain scans runs of plain text up to a closing quote, with the
// SWAR loop alone, called as Plain was before it had the AVX2 kernel,
// alongside for comparison.
func BenchmarkPlain(b *testing.B) {
	for _, n := range []int{16, 256, 4 << 10, 256 << 10} {
		text := make([]byte, n)
		for i := range text {
			text[i] = "Lorem ipsum dolor sit amet, \xc3\xa9t\xc3\xa9 "[i%34]
		}
		text[n-1] = '"'
		b.Run(fmt.Sprintf("Plain/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				if Plain(text, 0) != n-1 {
					b.Fatal("wrong offset")
				}
			}
		})
		b.Run(fmt.Sprintf("SWAR/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				if plainSWARCall(text, 0) != n-1 {
					b.Fatal("wrong offset")
				}
			}
		})
	}
}

// plainSWARCall is plainSWAR as Plain was before the AVX2 kernel: one call.
//
//go:noinline
func plainSWARCall(b []byte, i int) int {
	return plainSWAR(b, i)
}

// asciiRef is ASCII as a byte loop.
func asciiRef(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// checkASCII checks ASCII, ValidUTF8, and both ASCII prefixes (the
// kernel's and the words') on every suffix of b: a prefix is ASCII, and all
// of the suffix exactly when the suffix is.
func checkASCII(t *testing.T, b []byte) {
	t.Helper()
	for from := 0; from <= len(b); from++ {
		s := b[from:]
		want := asciiRef(s)
		if got := ASCII(s); got != want {
			t.Fatalf("ASCII(%q) = %v, want %v", s, got, want)
		}
		if got := ValidUTF8(s); got != utf8.Valid(s) {
			t.Fatalf("ValidUTF8(%q) = %v", s, got)
		}
		for name, n := range map[string]int{"asciiPrefix": asciiPrefix(s), "asciiPrefixWords": asciiPrefixWords(s)} {
			if n < 0 || n > len(s) || !asciiRef(s[:n]) || (n == len(s)) != want {
				t.Fatalf("%s(%q) = %d", name, s, n)
			}
		}
	}
}

// TestASCIIEverywhere puts one byte from 0x80 (a lone continuation byte,
// a lead byte, or 0xFF) at each position of strings of every length up to
// 200 (so in every block, word and tail).
func TestASCIIEverywhere(t *testing.T) {
	for n := 0; n <= 200; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = "a\x7f \x00~"[i%5]
		}
		checkASCII(t, b)
		for i := range b {
			for _, c := range []byte{0x80, 0xC3, 0xFF} {
				old := b[i]
				b[i] = c
				checkASCII(t, b)
				b[i] = old
			}
			if i+1 < n { // and valid UTF-8 that is not ASCII
				c := append([]byte(nil), b...)
				copy(c[i:], "\u00e9")
				checkASCII(t, c)
			}
		}
	}
}

// FuzzASCII: checkASCII on any bytes.
func FuzzASCII(f *testing.F) {
	f.Add([]byte("plain ASCII text that is longer than one block of sixty-four bytes."))
	f.Add([]byte("caf\xc3\xa9"))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkASCII(t, b)
	})
}

// BenchmarkASCII: ASCII against utf8.Valid, which the request parser
// called on every unescaped text before.
func BenchmarkASCII(b *testing.B) {
	for _, n := range []int{16, 256, 4 << 10, 256 << 10} {
		text := bytes.Repeat([]byte("Lorem ipsum dolor sit amet. "), n/28+1)[:n]
		b.Run(fmt.Sprintf("ASCII/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				if !ASCII(text) {
					b.Fatal("not ASCII")
				}
			}
		})
		b.Run(fmt.Sprintf("utf8.Valid/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				if !utf8.Valid(text) {
					b.Fatal("not valid")
				}
			}
		})
	}
}
