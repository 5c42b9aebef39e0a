package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// TestDecodeText: the units are Go's decoding of the bytes (a U+FFFD per
// invalid byte) in UTF-16, and the byte offsets where each unit's
// character begins, on texts that mix ASCII runs of every length with
// multi-byte, four-byte and invalid sequences.
func TestDecodeText(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"a", "hello world, ", "0123456789abcdefg", "h4x0r $@", "é", "€", "😀", "\xff", "\xed\xa0\x80", "\xe2\x82", "\u200b"}
	var tx text
	for range 2000 {
		var b []byte
		for range rng.IntN(12) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		decodeText(b, &tx)
		var want []uint16
		var offs []int
		for i := 0; i < len(b); {
			r, size := utf8.DecodeRune(b[i:])
			for range utf16.Encode([]rune{r}) {
				offs = append(offs, i)
			}
			want = append(want, utf16.Encode([]rune{r})...)
			i += size
		}
		if tx.ascii != (len(want) == len(b) && utf8.Valid(b) && !slices.ContainsFunc(b, func(c byte) bool { return c >= 0x80 })) {
			t.Fatalf("%q: ascii %v", b, tx.ascii)
		}
		got := make([]uint16, tx.len())
		for i := range got {
			got[i] = tx.at(i)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%q: units %x, want %x", b, got, want)
		}
		if wantLeet := appendLeetUnits(nil, want); !slices.Equal(tx.leet, wantLeet) {
			t.Fatalf("%q: leetspeak at %v, want %v", b, tx.leet, wantLeet)
		}
		for i, o := range offs {
			if g := tx.byteOffset(i); g != o {
				t.Fatalf("%q: unit %d at byte %d, want %d", b, i, g, o)
			}
		}
		if g := tx.byteOffset(len(want)); g != len(b) {
			t.Fatalf("%q: end at %d", b, g)
		}
	}
}

// TestRawFlags: the searches give the union of every byte's flags.
func TestRawFlags(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for range 5000 {
		b := make([]byte, rng.IntN(30))
		for i := range b {
			// Mostly bytes without flags, so that each flag is often absent.
			const plain = " .,;:!?\n\xff\xc3\xa9"
			b[i] = plain[rng.IntN(len(plain))]
			if rng.IntN(10) == 0 {
				b[i] = byte(rng.IntN(256))
			}
		}
		var want uint8
		for _, c := range b {
			want |= unitFlags[c]
		}
		units := make([]uint16, len(b))
		for i, c := range b {
			units[i] = uint16(c)
		}
		if got := rawFlags(b, appendLeetUnits(nil, units)); got != want {
			t.Fatalf("%q: flags %b, want %b", b, got, want)
		}
	}
}

// TestHasPctEscape: the byte search finds a %XX escape exactly when the
// percent view's own test finds one among the units.
func TestHasPctEscape(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	const alphabet = "%%%4aF0g é\xff"
	var tx text
	var p pctView
	for range 5000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		decodeText(b, &tx)
		want := false
		for i := 0; i+2 < tx.len(); i++ {
			want = want || tx.at(i) == '%' && isHex(tx.at(i+1)) && isHex(tx.at(i+2))
		}
		if got := hasPctEscape(b); got != want {
			t.Fatalf("%q: %v, want %v", b, got, want)
		}
		if got := p.build(&tx); got != want {
			t.Fatalf("%q: build %v, want %v", b, got, want)
		}
	}
}
