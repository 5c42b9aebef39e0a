package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unicode/utf16"
)

type token struct {
	start, runEnd, end int
	url                bool
}

func tokensOf(s []byte) []token { return tokensFrom(s, 0) }

// tokensFrom lists what findTokens finds from position from.
func tokensFrom(s []byte, from int) []token {
	var out []token
	findTokens(s, from, func(start, runEnd, end int, url bool) {
		out = append(out, token{start, runEnd, end, url})
	})
	return out
}

// isB64Ref is the base64 alphabet of docs/SPEC.md section 3.4, spelled out.
func isB64Ref(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-'
}

// tokensRef is findTokens as the definition reads: every whole run of
// base64 characters, taken or not as it is, in bytes or in units.
func tokensRef[T byte | uint16](s []T) []token {
	isB64Ref := func(c T) bool { return c < 128 && isB64Ref(byte(c)) }
	var out []token
	for i := 0; i < len(s); {
		if !isB64Ref(s[i]) {
			i++
			continue
		}
		start, std, url := i, false, false
		for ; i < len(s) && isB64Ref(s[i]); i++ {
			std = std || s[i] == '+' || s[i] == '/'
			url = url || s[i] == '-' || s[i] == '_'
		}
		end := i
		for end < len(s) && end-i < 2 && s[end] == '=' {
			end++
		}
		if n := i - start; n >= 16 && !(std && url) && n%4 != 1 {
			out = append(out, token{start, i, end, url})
		}
	}
	return out
}

// firstWindow is the first position from i where 16 base64 bytes start,
// len(s) when there is none.
func firstWindow(s []byte, i int) int {
	for run := 0; i < len(s); i++ {
		if run++; !isB64Ref(s[i]) {
			run = 0
		} else if run == 16 {
			return i - 15
		}
	}
	return len(s)
}

// checkTokens compares the byte path of findTokens, which skips blocks and
// words, from the start and from where decodeText says the first token can
// start, with the unit path, which looks at every unit, and with the
// definition.
func checkTokens(t *testing.T, text []byte) {
	t.Helper()
	want := tokensRef(text)
	tx := decoded(text)
	if got := tokensOf(text); !slices.Equal(got, want) {
		t.Fatalf("%q: byte path %v, definition %v", text, got, want)
	}
	if tx.ascii {
		if got := tokensFrom(text, tx.tokens); !slices.Equal(got, want) {
			t.Fatalf("%q: byte path from %d %v, definition %v", text, tx.tokens, got, want)
		}
	}
	checkTextTokens(t, text)
}

// checkTextTokens compares the tokens eachToken finds in text, decoded, with
// the definition over its units: a text that is not ASCII is searched in
// its bytes, and the places mapped to units.
func checkTextTokens(t *testing.T, raw []byte) {
	t.Helper()
	tx := decoded(raw)
	units := tx.units
	if tx.ascii {
		units = make([]uint16, len(raw))
		for i, b := range raw {
			units[i] = uint16(b)
		}
	}
	var got []token
	at := textCursor{t: &tx}
	tx.eachToken(func(start, runEnd, end int, url bool) {
		s, r, e := at.unitAt(start), at.unitAt(runEnd), at.unitAt(end)
		if string(raw[start:runEnd]) != string(utf16.Decode(units[s:r])) {
			t.Fatalf("%q: token bytes %q are not its units", raw, raw[start:runEnd])
		}
		got = append(got, token{s, r, e, url})
	})
	if want := tokensRef(units); !slices.Equal(got, want) {
		t.Fatalf("%q: %v, definition over its units %v", raw, got, want)
	}
}

// TestTokensNotASCII: base64 runs, '=' and spaces among non-ASCII
// characters of two, three and four bytes (two units) and invalid bytes,
// at random, in texts of up to 2,000 bytes.
func TestTokensNotASCII(t *testing.T) {
	pieces := []string{"QUJD", "REVG", "+/", "-_", "09", "=", "==", " ", "é", "—", "😀", "\xff", "\xe2\x80", "a", "Z"}
	rng := rand.New(rand.NewPCG(20, 21))
	for range 5000 {
		var b []byte
		for n := rng.IntN(2000); len(b) < n; {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		checkTextTokens(t, b)
	}
}

func decoded(raw []byte) (t text) {
	decodeText(raw, &t)
	return t
}

// checkSkips: each way of skipping, from position i of text, stops at or
// before the first place a token can start.
func checkSkips(t *testing.T, text []byte, i int) {
	t.Helper()
	w := firstWindow(text, i)
	if k := skipWords(text, i); k < i || k > w {
		t.Fatalf("%q: skipWords from %d: %d, first window at %d", text, i, k, w)
	}
	if k := skipBlocks(text, i); k < i || k > w {
		t.Fatalf("%q: skipBlocks from %d: %d, first window at %d", text, i, k, w)
	}
}

func TestFindTokensSkipping(t *testing.T) {
	pieces := []string{"QUJDRA", "aGVsbG8", "x", "-", "_", "+", "/", "=", "==", " ", ",", ".", "\n", "%", "0123", "abcdefgh", "\x7f"}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 20000; n++ {
		var text []byte
		// Mostly short texts, for the words; some long ones, for the blocks.
		size := rng.IntN(120)
		if n%10 == 0 {
			size = rng.IntN(1000)
		}
		for len(text) < size {
			text = append(text, pieces[rng.IntN(len(pieces))]...)
		}
		checkTokens(t, text)
		for i := range len(text) + 1 {
			checkSkips(t, text, i)
		}
	}
}

// TestFindTokensPlaces: a run of 15 to 17 base64 bytes among spaces, and
// each byte near the alphabet's edges alone among base64 bytes, at every
// place of texts of every length up to 300 (past where the blocks start),
// from every start alignment.
func TestFindTokensPlaces(t *testing.T) {
	buf := make([]byte, 300+64)
	edges := []byte{'+', '/', '-', '_', '=', ' ', '*', ',', '.', '0', '9', ':', '@', 'A', 'Z', '[', '`', 'a', 'z', '{', 0x7f, 0x80, 0xff}
	const letters = "aZ09+/QUJDREVGR0hJ"
	for n := 0; n <= 300; n++ {
		for at := 0; at < n; at++ {
			align := (n + at) % 64
			text := buf[align : align+n]
			for run := 15; run <= 17; run++ {
				for i := range text {
					text[i] = ' '
				}
				copy(text[at:min(at+run, n)], letters)
				checkTokens(t, text)
				checkSkips(t, text, 0)
				checkSkips(t, text, at)
			}
			for i := range text {
				text[i] = letters[i%len(letters)%4] // no '+' or '/'
			}
			for _, c := range edges {
				text[at] = c
				checkTokens(t, text)
				checkSkips(t, text, at/2)
			}
		}
	}
}

func FuzzFindTokens(f *testing.F) {
	f.Add([]byte("aGVsbG8gd29ybGQgaGVsbG8gd29ybGQ= and SGVsbG8sIFdvcmxkIQ=="))
	f.Add([]byte("0123456789abcdef 0123456789abcde-_ QUJDREVGR0hJSktMTU5PUA"))
	f.Fuzz(func(t *testing.T, text []byte) {
		for _, text := range [][]byte{text, longText(text)} {
			checkTokens(t, text)
			for i := range len(text) + 1 {
				checkSkips(t, text, i)
			}
		}
	})
}
