package engine

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// text is a scanned input as UTF-16 code units (docs/SPEC.md section 1). For an
// all-ASCII input (the common case) units and byte offsets are the bytes
// themselves, and only the list of leetspeak positions is kept. For any
// other, the units are made only for a caller that reads them (widen): a
// scan reads the bytes (encodeRaw), and making 2 bytes a unit of a long
// text, then reading them back, was a tenth of its scan.
type text struct {
	raw   []byte
	ascii bool
	n     int      // units, when not ascii
	units []uint16 // empty when ascii, or until widen
	leet  []int32  // positions of the leetspeak characters
	// leetAt, when not ascii, holds the byte offset of each of leet's
	// characters.
	leetAt []int32
	noPct  bool // decodeText learned that raw has no '%'
	// tokens is where a base64 token can first start, as decodeText
	// learned it: findTokens need look no earlier.
	tokens int
}

func (t *text) len() int {
	if t.ascii {
		return len(t.raw)
	}
	return t.n
}

// at returns unit i; a text that is not ASCII must have been widened.
func (t *text) at(i int) uint16 {
	if t.ascii {
		return uint16(t.raw[i])
	}
	return t.units[i]
}

// A textCursor maps positions of a text between units and bytes, in
// increasing order, counting the units from the last position on: its
// users (sanitize, the base64 tokens of a text that is not ASCII) go
// through a text once. A table of every unit's byte offset, which it
// replaces, cost a long text a pass of its own and four bytes a unit.
type textCursor struct {
	t    *text
	b, u int // the byte offset and unit position of a character's start
}

// byteAt returns the byte offset where the character of unit position u
// (0..len) begins; len maps to the end of the input. u may not be before
// the last position asked.
func (c *textCursor) byteAt(u int) int {
	if c.t.ascii {
		return u
	}
	raw := c.t.raw
	for c.u < u && c.b < len(raw) {
		if c.u+32 <= u && c.b+32 <= len(raw) && asciiWords32(raw[c.b:c.b+32]) {
			c.b, c.u = c.b+32, c.u+32
			continue
		}
		if c.u+8 <= u && c.b+8 <= len(raw) && binary.LittleEndian.Uint64(raw[c.b:])&0x8080808080808080 == 0 {
			c.b, c.u = c.b+8, c.u+8
			continue
		}
		size, units := charAt(raw, c.b)
		if c.u+units > u {
			break // u is the low surrogate of this character
		}
		c.b, c.u = c.b+size, c.u+units
	}
	return c.b
}

// unitAt returns the unit position of byte offset b, where a character
// begins or len(raw): byteAt's inverse, with the same order.
func (c *textCursor) unitAt(b int) int {
	if c.t.ascii {
		return b
	}
	raw := c.t.raw
	for c.b < b {
		if c.b+32 <= b && asciiWords32(raw[c.b:c.b+32]) {
			c.b, c.u = c.b+32, c.u+32
			continue
		}
		if c.b+8 <= b && binary.LittleEndian.Uint64(raw[c.b:])&0x8080808080808080 == 0 {
			c.b, c.u = c.b+8, c.u+8
			continue
		}
		size, units := charAt(raw, c.b)
		c.b, c.u = c.b+size, c.u+units
	}
	return c.u
}

// asciiWords32 reports whether the 32 bytes of w are ASCII: the cursors
// skip a long text's ASCII stretches four words a step (a word a step was
// most of the base64 tokens' cost in a long text that is not ASCII).
func asciiWords32(w []byte) bool {
	w = w[:32]
	return (binary.LittleEndian.Uint64(w)|binary.LittleEndian.Uint64(w[8:])|
		binary.LittleEndian.Uint64(w[16:])|binary.LittleEndian.Uint64(w[24:]))&0x8080808080808080 == 0
}

// surrogates returns the two units of a character from U+10000 up.
func surrogates(r rune) (hi, lo uint16) {
	r -= 0x10000
	return uint16(0xD800 + r>>10), uint16(0xDC00 + r&0x3FF)
}

// charAt returns the size in bytes of the character at raw[i], decoded as
// decodeText decodes it, and its units: two for one from U+10000 up.
func charAt(raw []byte, i int) (size, units int) {
	if raw[i] < utf8.RuneSelf {
		return 1, 1
	}
	r, size := utf8.DecodeRune(raw[i:])
	if r >= 0x10000 {
		return size, 2
	}
	return size, 1
}

// decodeText decodes raw as Go's utf8.DecodeRune does: a well-formed
// sequence is its character, anything else one U+FFFD for one byte. Its
// units are made (widen).
func decodeText(raw []byte, t *text) {
	decodeLazy(raw, t)
	t.widen()
}

// decodeLazy is decodeText without making the units of a text that is not
// ASCII: it counts them, and lists its leetspeak characters as units and
// as bytes.
func decodeLazy(raw []byte, t *text) {
	t.raw = raw
	leet, stop, ascii, noPct, tokens := asciiLeetPrefix(t.leet[:0], raw)
	t.noPct, t.tokens = noPct, tokens
	// Keep the buffers for the next text.
	t.units, t.leetAt = t.units[:0], t.leetAt[:0]
	if ascii {
		t.ascii, t.leet = true, leet
		return
	}
	// Up to stop, raw is ASCII and its leetspeak characters are listed:
	// their units are their bytes.
	t.ascii, t.tokens, t.noPct = false, 0, false
	at := append(t.leetAt, leet...)
	k := stop
	for i := stop; i < len(raw); {
		stop := len(raw)
		if hasAVX2 && len(raw)-i >= 64 {
			// Whole blocks of ASCII bytes, up to one that is not: their
			// units are as many after k as their bytes after i. The loop
			// below takes the block the kernel stopped at.
			leet = slices.Grow(leet, 64)
			n, end, _, _ := leetAVX2(leet[len(leet):cap(leet)], raw, i)
			found := leet[len(leet) : len(leet)+n]
			at = append(at, found...)
			for j := range found {
				found[j] += int32(k - i)
			}
			leet, k, i = leet[:len(leet)+n], k+end-i, end
			stop = min(i+64, len(raw))
		}
		for i < stop {
			// Eight ASCII bytes at a time: non-ASCII texts are mostly ASCII.
			if i+8 <= len(raw) {
				if w := binary.LittleEndian.Uint64(raw[i:]); w&0x8080808080808080 == 0 {
					if m := leetCandidates(w); m != 0 {
						n := len(leet)
						leet = appendLeetWord(leet, m, raw[i:i+8], k)
						for _, u := range leet[n:] {
							at = append(at, u-int32(k)+int32(i))
						}
					}
					i, k = i+8, k+8
					continue
				}
			}
			b := raw[i]
			if b < utf8.RuneSelf {
				if isLeet(b) {
					leet, at = append(leet, int32(k)), append(at, int32(i))
				}
				i, k = i+1, k+1
				continue
			}
			size, units := charAt(raw, i)
			i, k = i+size, k+units
		}
	}
	t.n, t.leet, t.leetAt = k, leet, at
}

// widen makes the units of a text decodeLazy read, if not yet made.
func (t *text) widen() {
	if t.ascii || len(t.units) == t.n {
		return
	}
	raw := t.raw
	// A byte is at most one unit (a 4-byte character is two), so the
	// buffer is sized once and written by index.
	units := grow(t.units, len(raw))
	k := 0
	for i := 0; i < len(raw); {
		// Whole stretches of ASCII bytes, 32 a step, with widenAVX2; the
		// loop below takes the block it stopped at.
		i, k = widenASCII(units, raw, i, k)
		for stop := min(i+32, len(raw)); i < stop; {
			if i+8 <= len(raw) {
				if w := binary.LittleEndian.Uint64(raw[i:]); w&0x8080808080808080 == 0 {
					u, r := units[k:k+8:k+8], raw[i:i+8:i+8]
					u[0], u[1], u[2], u[3] = uint16(r[0]), uint16(r[1]), uint16(r[2]), uint16(r[3])
					u[4], u[5], u[6], u[7] = uint16(r[4]), uint16(r[5]), uint16(r[6]), uint16(r[7])
					i, k = i+8, k+8
					continue
				}
			}
			if b := raw[i]; b < utf8.RuneSelf {
				units[k] = uint16(b)
				i, k = i+1, k+1
				continue
			}
			r, size := utf8.DecodeRune(raw[i:])
			if r >= 0x10000 {
				units[k], units[k+1] = surrogates(r)
				k += 2
			} else {
				units[k] = uint16(r)
				k++
			}
			i += size
		}
	}
	t.units = units[:k]
}

// asciiLeet appends the positions of the leetspeak characters of raw to
// dst and reports whether raw is all ASCII: the one pass over every scanned
// text that both need (digits are common enough that a byte loop was most
// of the leetspeak view's work on chat bodies). A vector kernel, where the
// CPU has one, takes texts of a block (64 bytes) or more, and a loop over
// words the others. When raw is not all ASCII, dst holds what was found
// before the first block or word that is not (asciiLeetPrefix).
// noPct reports that raw has no '%', when the kernel read all of it (it
// looks at every byte anyway: a search of its own was 5% of a long text's
// scan); tokens, from where findTokens need look (see asciiLeetBlocks).
func asciiLeet(dst []int32, raw []byte) (_ []int32, ascii, noPct bool, tokens int) {
	dst, _, ascii, noPct, tokens = asciiLeetPrefix(dst, raw)
	return dst, ascii, noPct, tokens
}

// asciiLeetPrefix is asciiLeet, and also returns how far raw is known to
// be ASCII with its leetspeak characters in dst: len(raw) when it is, else
// the start of the block or word where it stopped, from which decodeLazy
// goes on.
func asciiLeetPrefix(dst []int32, raw []byte) (_ []int32, stop int, ascii, noPct bool, tokens int) {
	dst, i, ascii, pct, tokens := asciiLeetBlocks(dst, raw)
	if !ascii {
		return dst, i, false, false, 0
	}
	// The kernel read every byte of a text it took whole.
	noPct = i == len(raw) && i > 0 && !pct
	dst, i, ascii = asciiLeetWords(dst, raw, i)
	return dst, i, ascii, noPct, tokens
}

// leetCandidates has the high bit set in each byte of a word of eight
// ASCII bytes that may be a leetspeak character: every '0' to '7', '@' or
// '$' (with '2' and '6', which isLeet turns down), and maybe a byte 1
// above one of them; the candidates are checked.
func leetCandidates(v uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(x uint64) uint64 { return (x - ones) &^ x & highs }
	return zero(v&(ones*0xF8)^(ones*'0')) | zero(v^(ones*'@')) | zero(v^(ones*'$'))
}

// appendLeetWord appends at+j to dst for each leetspeak character w[j] of
// a word of eight ASCII bytes, given its leetCandidates m (called only when
// there are some: most words have none).
func appendLeetWord(dst []int32, m uint64, w []byte, at int) []int32 {
	for ; m != 0; m &= m - 1 {
		if j := bits.TrailingZeros64(m) / 8; isLeet(w[j]) {
			dst = append(dst, int32(at+j))
		}
	}
	return dst
}

// asciiLeetWords is asciiLeet from raw[i:], eight bytes at a time; it also
// returns where it stopped.
func asciiLeetWords(dst []int32, raw []byte, i int) ([]int32, int, bool) {
	for ; i+8 <= len(raw); i += 8 {
		v := binary.LittleEndian.Uint64(raw[i:])
		if v&0x8080808080808080 != 0 {
			return dst, i, false
		}
		if m := leetCandidates(v); m != 0 {
			dst = appendLeetWord(dst, m, raw[i:i+8], i)
		}
	}
	for ; i < len(raw); i++ {
		if raw[i] >= utf8.RuneSelf {
			return dst, i, false
		}
		if isLeet(raw[i]) {
			dst = append(dst, int32(i))
		}
	}
	return dst, i, true
}

func isLeet[U byte | uint16](u U) bool { return u < 128 && unitFlags[u&127]&fLeet != 0 }
