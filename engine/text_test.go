package engine

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// mixedText returns pieces of ASCII, other scripts, 4-byte characters,
// invalid bytes and leetspeak in a random mix: a dozen pieces, or up to
// 300 (long, past the kernels' blocks).
func mixedText(rng *rand.Rand, long bool) []byte {
	pieces := []string{"a", "hello world, ", "0123456789abcdefg", "h4x0r $@ 1337", "é", "€", "😀", "\xff", "\xed\xa0\x80", "\xe2\x82", "\u200b",
		"прив3т", "日本語", strings.Repeat("The quick brown f0x 1337 @ $ jumps. ", 3)}
	count := rng.IntN(12)
	if long {
		count = rng.IntN(300)
	}
	var b []byte
	for range count {
		b = append(b, pieces[rng.IntN(len(pieces))]...)
	}
	return b
}

// unitsRef decodes b as utf8.DecodeRune and utf16.Encode do, and returns
// its units and each one's byte offset.
func unitsRef(b []byte) (units []uint16, offs []int) {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		for _, u := range utf16.Encode([]rune{r}) {
			units, offs = append(units, u), append(offs, i)
		}
		i += size
	}
	return units, offs
}

// TestDecodeText: the units are Go's decoding of the bytes (a U+FFFD per
// invalid byte) in UTF-16, and the byte offsets where each unit's
// character begins, on texts that mix ASCII runs of every length with
// multi-byte, four-byte and invalid sequences; the long ones have ASCII
// runs of several blocks, which the kernel widens where it runs.
func TestDecodeText(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var tx text
	for n := range 3000 {
		b := mixedText(rng, n >= 2000)
		decodeText(b, &tx)
		want, offs := unitsRef(b)
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
		// The cursor, asked in increasing order and skipping ahead by
		// random steps (over ASCII words, four at a time, and within surrogate
		// pairs).
		offs = append(offs, len(b)) // the end
		for range 3 {
			bytesAt, unitsAt := textCursor{t: &tx}, textCursor{t: &tx}
			step := func() int {
				if rng.IntN(4) == 0 {
					return 1 + rng.IntN(200) // past stretches of ASCII words
				}
				return 1 + rng.IntN(12)
			}
			for i := 0; i < len(offs); i += step() {
				if g := bytesAt.byteAt(i); g != offs[i] {
					t.Fatalf("%q: unit %d at byte %d, want %d", b, i, g, offs[i])
				}
				first := i // the unit where the character at offs[i] begins
				for first > 0 && offs[first-1] == offs[i] {
					first--
				}
				if g := unitsAt.unitAt(offs[i]); g != first {
					t.Fatalf("%q: byte %d at unit %d, want %d", b, offs[i], g, first)
				}
			}
		}
	}
}

// TestNoPct: decodeText says a text has no '%' only when it has none, and
// says so of every ASCII text of a block or more without one where the
// kernel runs (texts up to 300 bytes, half of them ASCII, a '%' in about
// one in three).
func TestNoPct(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	var tx text
	for k := range 5000 {
		b := make([]byte, rng.IntN(300))
		for i := range b {
			const plain = " a.,;:!?\n\xff\xc3\xa9"
			b[i] = plain[rng.IntN(len(plain)-3*(k%2))]
		}
		if len(b) > 0 && rng.IntN(3) == 0 {
			b[rng.IntN(len(b))] = '%'
		}
		decodeText(b, &tx)
		has := bytes.IndexByte(b, '%') >= 0
		if tx.noPct && has {
			t.Fatalf("%q: no '%%', says decodeText", b)
		}
		if hasAVX2 && tx.ascii && len(b) >= 64 && !has && !tx.noPct { // the kernel takes a block or more
			t.Fatalf("%q: decodeText does not know it has no '%%'", b)
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

// leetRef is asciiLeet as a byte loop.
func leetRef(raw []byte) ([]int32, bool) {
	var pos []int32
	for i, b := range raw {
		if b >= 0x80 {
			return nil, false
		}
		switch b {
		case '0', '1', '3', '4', '5', '7', '@', '$':
			pos = append(pos, int32(i))
		}
	}
	return pos, true
}

// checkASCIILeet compares asciiLeet, which gives a text of a block or more
// to the kernel, and its word loop alone with the byte loop, appending to
// a list that holds a position already. On a text that is not all ASCII
// only the answer counts.
func checkASCIILeet(t *testing.T, raw []byte) {
	t.Helper()
	want, wantASCII := leetRef(raw)
	for _, f := range []struct {
		name string
		leet func(dst []int32, raw []byte) ([]int32, bool)
	}{
		{"asciiLeet", func(dst []int32, raw []byte) ([]int32, bool) {
			dst, ascii, _, tokens := asciiLeet(dst, raw)
			if first := firstWindow(raw, 0); ascii && tokens != first && (tokens != 0 || hasVBMI && len(raw) >= 64) {
				t.Fatalf("asciiLeet(%q): tokens from %d, want %d", raw, tokens, first)
			}
			return dst, ascii
		}},
		{"asciiLeetWords", func(dst []int32, raw []byte) ([]int32, bool) {
			dst, _, ascii := asciiLeetWords(dst, raw, 0)
			return dst, ascii
		}},
		{"asciiLeetPrefix", func(dst []int32, raw []byte) ([]int32, bool) {
			// Up to where it stopped, raw is ASCII and dst has its positions.
			n := len(dst)
			dst, stop, ascii, _, _ := asciiLeetPrefix(dst, raw)
			p, pre := leetRef(raw[:stop])
			if !pre || ascii && stop != len(raw) || !slices.Equal(dst[n:], p) {
				t.Fatalf("asciiLeetPrefix(%q): to %d (ASCII %v), %v; the bytes before %v, %v", raw, stop, ascii, dst[n:], pre, p)
			}
			return dst, ascii
		}},
	} {
		got, ascii := f.leet([]int32{-1}, raw)
		if ascii != wantASCII {
			t.Fatalf("%s(%q): ASCII %v, want %v", f.name, raw, ascii, wantASCII)
		}
		if got[0] != -1 || ascii && !slices.Equal(got[1:], want) {
			t.Fatalf("%s(%q): %v, want [-1] and %v", f.name, raw, got, want)
		}
	}
}

// TestASCIILeet: on texts of every byte value, and on texts where each
// byte is alone among letters or among leetspeak characters at every place
// in a word or in a few blocks, asciiLeet lists what the byte loop and the
// unit path list.
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
		for at := range 200 {
			b := bytes.Repeat([]byte("13@$"), 50)
			b[at] = byte(c)
			texts = append(texts, b)
		}
	}
	texts = append(texts, []byte("@A@A$%0123456789"), []byte("7@$$@7 1337 h4x0r"))
	for _, text := range texts {
		checkASCIILeet(t, text)
		units := make([]uint16, len(text))
		for i, b := range text {
			units[i] = uint16(b)
		}
		got, ascii, _, _ := asciiLeet(nil, text)
		if want := appendLeetUnits(nil, units); ascii && !slices.Equal(got, want) {
			t.Fatalf("%q: %v, unit by unit %v", text, got, want)
		}
	}
}

// TestASCIILeetPlaces: each leetspeak character, a near miss or a byte of
// 0x80 or above, alone among letters, at every place of texts of every
// length up to 300, from every start alignment; and random texts of up to
// 20,000 bytes, whose lists grow on the way.
func TestASCIILeetPlaces(t *testing.T) {
	buf := make([]byte, 300+64)
	bytesAt := []byte("013457@$2689/:?#%\x00\x7f\x80\xc3\xff")
	for n := 0; n <= 300; n++ {
		for at := 0; at < n; at++ {
			align := (n + at) % 64
			text := buf[align : align+n]
			for i := range text {
				text[i] = "The quick brown fox, jumps."[i%27]
			}
			for _, c := range bytesAt {
				text[at] = c
				checkASCIILeet(t, text)
			}
		}
	}
	rng := rand.New(rand.NewPCG(12, 13))
	for range 300 {
		checkASCIILeet(t, randomText(rng, rng.IntN(20000), "abc de0f1.3@$\n", 3))
	}
}

// randomText returns n bytes drawn from alphabet, one of which, in one text
// of highOneIn, is replaced by a byte from 0x80 up.
func randomText(rng *rand.Rand, n int, alphabet string, highOneIn int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	if n > 0 && rng.IntN(highOneIn) == 0 {
		b[rng.IntN(n)] = 0x80 | byte(rng.IntN(128))
	}
	return b
}

// longText repeats a fuzzed text, as long as it is not empty, up to
// longTextMin bytes or more, so that the kernels take it too.
func longText(text []byte) []byte {
	if len(text) == 0 || len(text) >= longTextMin {
		return text
	}
	return bytes.Repeat(text, longTextMin/len(text)+1)
}

// longTextMin is longer than the shortest texts that the kernels take
// (TestKernelMins).
const longTextMin = 300

func FuzzASCIILeet(f *testing.F) {
	f.Add([]byte("7@$$@7 1337 h4x0r"))
	f.Add([]byte("{\"max_tokens\":256,\"model\":\"gpt-4o\"} caf\xc3\xa9"))
	f.Fuzz(func(t *testing.T, text []byte) {
		checkASCIILeet(t, text)
		checkASCIILeet(t, longText(text))
	})
}

// appendLeetUnits appends the positions of the leetspeak characters of
// units to dst: the definition decodeText's lists are checked against.
func appendLeetUnits(dst []int32, units []uint16) []int32 {
	for i, u := range units {
		if isLeet(u) {
			dst = append(dst, int32(i))
		}
	}
	return dst
}

// TestDecodeLazy: a text decodeLazy read has the reference decoding's
// length and leetspeak positions, without units, and each position's byte
// holds its character; encodeRaw gives what encodeUnits gives of the
// reference units, the bytes units from 128 up read as included; widen
// then gives those units.
func TestDecodeLazy(t *testing.T) {
	c := Default().c
	rng := rand.New(rand.NewPCG(31, 32))
	var tx text
	var enc, want []byte
	wide := 0
	for n := range 4000 {
		b := mixedText(rng, n >= 2000)
		units, _ := unitsRef(b)
		leet := appendLeetUnits(nil, units)
		decodeLazy(b, &tx)
		if tx.len() != len(units) || !slices.Equal(tx.leet, leet) {
			t.Fatalf("%q: %d units, leetspeak at %v; want %d, %v", b, tx.len(), tx.leet, len(units), leet)
		}
		if tx.ascii {
			continue
		}
		wide++
		if len(tx.units) != 0 {
			t.Fatalf("%q: %d units made", b, len(tx.units))
		}
		if len(tx.leetAt) != len(tx.leet) {
			t.Fatalf("%q: %d byte offsets for %d positions", b, len(tx.leetAt), len(tx.leet))
		}
		for j, u := range tx.leet {
			if got := uint16(b[tx.leetAt[j]]); got != units[u] {
				t.Fatalf("%q: leetspeak unit %d is %#x, its byte %d %#x", b, u, units[u], tx.leetAt[j], got)
			}
		}
		var held, wantHeld byteSet
		enc = c.encodeRaw(enc, &tx, &held)
		want = c.encodeUnits(want, units, &wantHeld)
		if !bytes.Equal(enc, want) || held != wantHeld {
			t.Fatalf("%q: encoded %x, held %x; from the units %x, %x", b, enc, held, want, wantHeld)
		}
		tx.widen()
		if !slices.Equal(tx.units, units) {
			t.Fatalf("%q: widened %x, want %x", b, tx.units, units)
		}
	}
	if wide < 3000 {
		t.Errorf("only %d of the texts are not ASCII", wide)
	}
}
