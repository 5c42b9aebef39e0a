package jsonstr

import (
	"math/rand/v2"
	"testing"
)

// TestPlainExact compares the eight-bytes-at-a-time Plain with a byte loop
// over the same bytes, from every start, on strings dense in the bytes
// it must stop at and the ones next to them.
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
		for from := 0; from <= len(b); from++ {
			want := from
			for want < len(b) && b[want] >= 0x20 && b[want] != '"' && b[want] != '\\' {
				want++
			}
			if got := Plain(b, from); got != want {
				t.Fatalf("Plain(%q, %d) = %d, want %d", b, from, got, want)
			}
		}
	}
}
