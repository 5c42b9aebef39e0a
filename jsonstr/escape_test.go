package jsonstr

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// plainEscapesRef is PlainEscapes as a byte loop, the reference for the
// fast ones.
func plainEscapesRef(b []byte, i int) (end int, ascii, escaped bool) {
	ascii = true
	for i < len(b) {
		switch c := b[i]; {
		case c == '\\' && i+1 < len(b) && strings.IndexByte(`"\/bfnrt`, b[i+1]) >= 0:
			i, escaped = i+2, true
		case c < 0x20 || c == '"' || c == '\\':
			return i, ascii, escaped
		default:
			ascii = ascii && c < 0x80
			i++
		}
	}
	return i, ascii, escaped
}

// unquoteRef is Unquote by encoding/json.
func unquoteRef(t testing.TB, s []byte) []byte {
	var v string
	if err := json.Unmarshal(append(append([]byte{'"'}, s...), '"'), &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return []byte(v)
}

// escapeDense are the bytes the escape-passing loops decide on, and their
// near misses: two-byte escapes' second bytes, 'u' and bad ones after a
// backslash, controls, quotes, high bytes.
var escapeDense = []byte{'\\', '\\', '\\', '"', 'n', 't', '/', 'u', 'q', 'b', 'r', 'f', 0x00, 0x0A, 0x1F, 0x20, 0x7F, 0x80, 0xE2, 0xFF, '<', '&', 'a'}

// denseString returns n random bytes: one in every run (on average) of
// escapeDense, the others lowercase letters.
func denseString(rng *rand.Rand, n, run int) []byte {
	b := make([]byte, n)
	for i := range b {
		if rng.IntN(run) == 0 {
			b[i] = escapeDense[rng.IntN(len(escapeDense))]
		} else {
			b[i] = 'a' + byte(rng.IntN(26))
		}
	}
	return b
}

// checkEscapes compares PlainEscapes with plainEscapesRef from every start
// of b, and Unquote and Append with encoding/json on b's valid literal
// contents.
func checkEscapes(t *testing.T, b []byte) {
	t.Helper()
	for from := 0; from <= len(b); from++ {
		we, wa, wx := plainEscapesRef(b, from)
		if e, a, x := PlainEscapes(b, from); e != we || a != wa || x != wx {
			t.Fatalf("PlainEscapes(%q, %d) = %d, %v, %v, want %d, %v, %v", b, from, e, a, x, we, wa, wx)
		}
		if e, a, x := plainEscapesSWAR(b, from); e != we || a != wa || x != wx {
			t.Fatalf("plainEscapesSWAR(%q, %d) = %d, %v, %v, want %d, %v, %v", b, from, e, a, x, we, wa, wx)
		}
	}
	lit := append(append([]byte{'"'}, b...), '"')
	if End(lit, 0) == len(lit) {
		checkUnquote(t, b)
	}
	checkAppend(t, string(b))
}

func checkUnquote(t *testing.T, s []byte) {
	t.Helper()
	want := unquoteRef(t, s)
	dst := []byte("dst")
	if got := Unquote(dst, s); string(got[3:]) != string(want) || string(got[:3]) != "dst" {
		t.Fatalf("Unquote(%q) = %q, want %q", s, got, want)
	}
	if utf8.Valid(s) {
		if got := UnquoteValid(nil, s); string(got) != string(want) {
			t.Fatalf("UnquoteValid(%q) = %q, want %q", s, got, want)
		}
	}
}

func checkAppend(t *testing.T, s string) {
	t.Helper()
	m, _ := json.Marshal(s)
	if got := Append([]byte("x"), s, true); string(got[1:]) != string(m) {
		t.Fatalf("Append(%q, html) = %s, want %s", s, got[1:], m)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if got := Append(nil, []byte(s), false); string(got) != string(want) {
		t.Fatalf("Append(%q) = %s, want %s", s, got, want)
	}
}

// TestEscapesEverywhere puts an escape, a backslash run, a \u escape, a
// bad escape, a quote and a control at each position of strings of every
// length up to 140 (the kernels' 32-byte windows, windows restarted just
// past an escape, the tails), so that an escape straddles every window
// edge.
func TestEscapesEverywhere(t *testing.T) {
	marks := []string{`\n`, `\\`, `\\\`, `\\\\`, `\"`, `\u00e9`, `\ud800`, `\q`, `"`, "\x01", "\n", `\`, "\xe2\x80\xa8", "\xff"}
	for n := 0; n <= 140; n++ {
		for _, m := range marks {
			for pos := 0; pos+len(m) <= n; pos++ {
				b := bytes.Repeat([]byte{'a'}, n)
				copy(b[pos:], m)
				checkEscapes(t, b)
			}
		}
	}
}

// TestEscapesRandom: random strings dense in escapes and their near
// misses, with runs between them from one byte to a few hundred.
func TestEscapesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for n := 0; n < 3000; n++ {
		b := denseString(rng, rng.IntN(400), 1+rng.IntN(100))
		checkEscapes(t, b)
	}
}

// TestUnquoteDense: valid literals made of escapes and text only, so that
// Unquote's fast path runs over all of them: every two-byte escape, \u
// escapes of every kind, backslash runs, non-ASCII text.
func TestUnquoteDense(t *testing.T) {
	pieces := []string{`\n`, `\\`, `\"`, `\/`, `\b`, `\f`, `\r`, `\t`, `\u00e9`, `\uD83D\uDE00`, `\ud800`, `\udc00`, `\u0000`, "é", "東京", "a", "bc", "defghij", strings.Repeat("k", 31)}
	rng := rand.New(rand.NewPCG(13, 14))
	for n := 0; n < 3000; n++ {
		var b []byte
		for k := rng.IntN(60); k > 0; k-- {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		checkUnquote(t, b)
		checkAppend(t, string(unquoteRef(t, b)))
	}
}

// TestAppendLong: long texts with escapes of every kind at random, through
// Append's kernel and its grows (a text all newlines doubles; one of
// controls grows sixfold).
func TestAppendLong(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, density := range []int{1, 2, 8, 48, 1000} {
		for n := 0; n < 30; n++ {
			b := denseString(rng, rng.IntN(5000), density)
			checkAppend(t, string(b))
			lit := Append(nil, b, false)
			if got, want := Unquote(nil, lit[1:len(lit)-1]), Unquote(nil, Append(nil, string(b), true)[1:]); string(got) != string(want[:len(want)-1]) {
				t.Fatalf("%q: the two encodings decode differently", b)
			}
		}
	}
	for _, c := range []byte{'\n', 0x01, '"', '<'} {
		checkAppend(t, strings.Repeat(string(c), 3000))
	}
}

// FuzzEscapes compares PlainEscapes with its reference, and Unquote and
// Append with encoding/json, on escape-dense strings.
func FuzzEscapes(f *testing.F) {
	for _, s := range []string{
		`abc\n`, `\\\"`, strings.Repeat(`line of prose, forty-odd bytes of it\n`, 6),
		strings.Repeat("a", 31) + `\n` + strings.Repeat("b", 30) + `\\\\` + strings.Repeat("c", 29) + `\"`,
		strings.Repeat("a", 63) + `\\` + strings.Repeat("a", 62) + `\\\` + `"`,
		strings.Repeat("x", 40) + `\q` + strings.Repeat("y", 40), strings.Repeat("x", 40) + `\ud800\u0041` + strings.Repeat("y", 40),
		strings.Repeat("x", 40) + "\xff\xfe\xed\xa0\x80" + strings.Repeat(`\n`, 20), strings.Repeat("x", 33) + "\x01\x1f\n" + strings.Repeat("y", 33),
		strings.Repeat("é", 20) + `\n` + strings.Repeat("東", 20) + "\u2028\u2029<>&",
		strings.Repeat(`\`, 70),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1000 {
			return // every start is checked: quadratic
		}
		checkEscapes(t, b)
	})
}
