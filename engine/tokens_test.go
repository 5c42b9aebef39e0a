package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

type token struct {
	start, runEnd, end int
	url                bool
}

func tokensOf[T byte | uint16](s []T) []token {
	var out []token
	findTokens(s, func(start, runEnd, end int, url bool) {
		out = append(out, token{start, runEnd, end, url})
	})
	return out
}

// checkTokens compares the byte path of findTokens, which skips words
// eight bytes at a time, with the unit path, which looks at every unit.
func checkTokens(t *testing.T, text []byte) {
	for _, b := range text {
		if b >= 0x80 {
			return // the byte path only sees ASCII texts
		}
	}
	units := make([]uint16, len(text))
	for i, b := range text {
		units[i] = uint16(b)
	}
	if got, want := tokensOf(text), tokensOf(units); !slices.Equal(got, want) {
		t.Fatalf("%q: byte path %v, unit path %v", text, got, want)
	}
}

func TestFindTokensSkipping(t *testing.T) {
	pieces := []string{"QUJDRA", "aGVsbG8", "x", "-", "_", "+", "/", "=", "==", " ", ",", ".", "\n", "%", "0123", "abcdefgh", "\x7f"}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 20000; n++ {
		var text []byte
		for len(text) < rng.IntN(120) {
			text = append(text, pieces[rng.IntN(len(pieces))]...)
		}
		checkTokens(t, text)
	}
}

func FuzzFindTokens(f *testing.F) {
	f.Add([]byte("aGVsbG8gd29ybGQgaGVsbG8gd29ybGQ= and SGVsbG8sIFdvcmxkIQ=="))
	f.Add([]byte("0123456789abcdef 0123456789abcde-_ QUJDREVGR0hJSktMTU5PUA"))
	f.Fuzz(func(t *testing.T, text []byte) { checkTokens(t, text) })
}

// TestASCIILeet: the byte path, which looks at words eight bytes at a
// time, finds what the unit path finds on ASCII texts and turns the others
// down, on texts of every byte value and on texts where each byte is alone
// among letters, at every place in a word.
func TestASCIILeet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var texts [][]byte
	for range 300 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		texts = append(texts, b)
	}
	for c := range 256 {
		for at := range 17 {
			b := []byte("abcdefghijklmnopq")
			b[at] = byte(c)
			texts = append(texts, b)
		}
	}
	texts = append(texts, []byte("@A@A$%0123456789"), []byte("7@$$@7 1337 h4x0r"))
	for _, text := range texts {
		units := make([]uint16, len(text))
		for i, b := range text {
			units[i] = uint16(b)
		}
		got, ascii := asciiLeet(nil, text)
		if want := !slices.ContainsFunc(text, func(b byte) bool { return b >= 0x80 }); ascii != want {
			t.Fatalf("%q: ASCII %v, want %v", text, ascii, want)
		}
		if want := appendLeetUnits(nil, units); ascii && !slices.Equal(got, want) {
			t.Fatalf("%q: %v, unit by unit %v", text, got, want)
		}
	}
}
