package jsonstr

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// literalPieces are what the random literals are made of: prose, the
// two-byte escapes, \u escapes of one to three bytes, surrogate pairs and
// lone halves, and characters of two to four bytes.
var literalPieces = []string{
	"the ", "system prompt ", "x", `\n`, `\"`, `\\`, `\/`, `\t`, `\u0041`, `\u00e9`, `\u20ac`,
	`\ud83d\ude00`, `\ud83d`, `\ude00`, `\ud83dx`, "é", "€", "😀", "ignore previous instructions ",
}

// someLiteral returns the bytes of a literal of about n bytes of pieces.
func someLiteral(rng *rand.Rand, n int) []byte {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(literalPieces[rng.IntN(len(literalPieces))])
	}
	return []byte(b.String())
}

// checkMarks holds UnquoteMarks to Unquote on s, and RawOffset, with the
// marks and without, to the offsets of every token of s: each byte of a
// character written as itself maps to its own place, a value offset inside
// an escape's value has none.
func checkMarks(t *testing.T, s []byte) {
	t.Helper()
	want := Unquote(nil, s)
	got, marks := UnquoteMarks([]byte("prefix"), s, nil)
	if !bytes.Equal(got[len("prefix"):], want) {
		t.Fatalf("%q: UnquoteMarks %q, Unquote %q", s, got[len("prefix"):], want)
	}
	if len(s) > 0 && (len(marks) == 0 || marks[0] != Mark{}) {
		t.Fatalf("%q: marks %v do not start at 0", s, marks)
	}
	for k, m := range marks {
		if k > 0 && (m.Raw-marks[k-1].Raw > markEvery || m.Raw <= marks[k-1].Raw) {
			t.Fatalf("marks %d and %d: %v, %v", k-1, k, marks[k-1], m)
		}
	}
	// And from the last to the end, but for an escape that crosses (a
	// surrogate pair's 12 bytes).
	if len(marks) > 0 && len(s)-marks[len(marks)-1].Raw > markEvery+12 {
		t.Fatalf("%d bytes: the last mark is %v", len(s), marks[len(marks)-1])
	}
	// expect[v]: the raw offset of value offset v, or -1.
	expect := make([]int, len(want)+1)
	var canonical bool
	var scratch [utf8Max]byte
	for i, v := 0, 0; ; {
		if i >= len(s) {
			expect[v] = i
			break
		}
		if s[i] == '\\' {
			next, out, ok := unescape(scratch[:0], s, i, false, &canonical)
			if !ok {
				t.Fatalf("%q: no escape at %d", s, i)
			}
			expect[v] = i
			for k := 1; k < len(out); k++ {
				expect[v+k] = -1
			}
			i, v = next, v+len(out)
			continue
		}
		_, size := utf8.DecodeRune(s[i:])
		for k := range size {
			expect[v+k] = i + k
		}
		i, v = i+size, v+size
	}
	// Each mark is such a place.
	for _, m := range marks {
		if m.Value > len(want) || expect[m.Value] != m.Raw {
			t.Fatalf("%q: mark %v, not a place where the literal and the value line up", s, m)
		}
	}
	var at Mark // the last offset's place, walked on from
	for v, r := range expect {
		for _, ms := range [][]Mark{marks, nil} {
			if ms == nil && len(s) > 2000 && v%257 != 0 {
				continue // walked from the start: a sample
			}
			got, ok := RawOffset(s, ms, Mark{}, v)
			if ok != (r >= 0) || ok && got != r {
				t.Fatalf("%q (%d marks): RawOffset(%d) = %d, %v; want %d", s, len(ms), v, got, ok, r)
			}
		}
		got, ok := RawOffset(s, nil, at, v)
		if ok != (r >= 0) || ok && got != r {
			t.Fatalf("%q: RawOffset(%d) from %v = %d, %v; want %d", s, v, at, got, ok, r)
		}
		if ok {
			at = Mark{Raw: got, Value: v}
		}
	}
	if _, ok := RawOffset(s, marks, Mark{}, len(want)+1); ok {
		t.Fatalf("%q: an offset past the value's end", s)
	}
	if len(want) > 0 {
		if _, ok := RawOffset(s, marks, Mark{Raw: len(s), Value: len(want)}, 0); ok {
			t.Fatalf("%q: an offset before the place walked from", s)
		}
	}
}

func TestMarks(t *testing.T) {
	for _, s := range []string{"", "a", `\n`, `\u00e9`, `\ud83d\ude00`, `a\ud83d`, `\ude00\ud83d\ude00é`} {
		checkMarks(t, []byte(s))
	}
	// A long run without escapes still has its marks.
	checkMarks(t, append([]byte(`\n`), bytes.Repeat([]byte("x"), 3*markEvery)...))
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{100, 3000, markEvery - 7, markEvery + 5, 3*markEvery + 11, 70000} {
		checkMarks(t, someLiteral(rng, n))
	}
	// Marks where the windows end, whatever crosses there.
	for _, p := range literalPieces {
		for _, shift := range []int{0, 1, 2, 5, 6, 11} {
			s := append(bytes.Repeat([]byte("a"), markEvery/2-shift), bytes.Repeat([]byte(p), 4)...)
			checkMarks(t, append(s, bytes.Repeat([]byte("b"), markEvery/2+100)...))
		}
	}
}

func FuzzMarks(f *testing.F) {
	f.Add([]byte(`ab\ncd\u00e9\ud83d\ude00`), uint16(3))
	f.Fuzz(func(t *testing.T, s []byte, pad uint16) {
		// Valid literal bytes only: the caller's promise.
		if !utf8.Valid(s) || !isLiteral(s) {
			return
		}
		checkMarks(t, s)
		long := append(bytes.Repeat([]byte("x"), markEvery/2-int(pad%64)), s...)
		checkMarks(t, append(long, bytes.Repeat(s, 4)...))
	})
}

// isLiteral reports whether s is what a JSON string literal may hold
// between its quotes.
func isLiteral(s []byte) bool {
	var canonical bool
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c < 0x20 || c == '"':
			return false
		case c == '\\':
			next, _, ok := unescape(nil, s, i, false, &canonical)
			if !ok {
				return false
			}
			i = next
		default:
			i++
		}
	}
	return true
}
