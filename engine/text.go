package engine

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// text is a scanned input as UTF-16 code units (SPEC section 1). For an
// all-ASCII input (the common case) units and byte offsets are the bytes
// themselves, and only the list of leetspeak positions is kept.
type text struct {
	raw   []byte
	ascii bool
	units []uint16 // empty when ascii
	leet  []int32  // positions of the leetspeak characters
	// off holds the byte offset where each unit's character begins, made
	// on the first byteOffset call (only a text with matches needs it).
	off   []int32
	offOK bool
	noPct bool // decodeText learned that raw has no '%'
	// tokens is where a base64 token can first start, as decodeText
	// learned it: findTokens need look no earlier.
	tokens int
}

func (t *text) len() int {
	if t.ascii {
		return len(t.raw)
	}
	return len(t.units)
}

func (t *text) at(i int) uint16 {
	if t.ascii {
		return uint16(t.raw[i])
	}
	return t.units[i]
}

// byteOffset maps a unit position (0..len) to the byte offset where that
// unit's character begins; len maps to the end of the input.
func (t *text) byteOffset(i int) int {
	if t.ascii {
		return i
	}
	if i >= len(t.units) {
		return len(t.raw)
	}
	return int(t.offsets()[i])
}

// unitAt maps a byte offset where a character begins, or len(raw), to its
// unit position: byteOffset's inverse.
func (t *text) unitAt(b int) int {
	if t.ascii {
		return b
	}
	if b >= len(t.raw) {
		return len(t.units)
	}
	u, _ := slices.BinarySearch(t.offsets(), int32(b))
	return u
}

// offsets returns off, made on first use.
func (t *text) offsets() []int32 {
	if !t.offOK {
		t.off, t.offOK = appendOffsets(t.off[:0], t.raw), true
	}
	return t.off
}

// appendOffsets appends the byte offset of each unit of raw, decoded as
// decodeText decodes it, to off.
func appendOffsets(off []int32, raw []byte) []int32 {
	// A text has no more units than bytes: room for them once (a 256 KiB
	// text's table grew by doubling, a tenth of its scan).
	off = slices.Grow(off, len(raw))
	for i := 0; i < len(raw); {
		if i+8 <= len(raw) && binary.LittleEndian.Uint64(raw[i:])&0x8080808080808080 == 0 {
			off = append(off, int32(i), int32(i+1), int32(i+2), int32(i+3), int32(i+4), int32(i+5), int32(i+6), int32(i+7))
			i += 8
			continue
		}
		off = append(off, int32(i))
		if raw[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		if r >= 0x10000 {
			off = append(off, int32(i)) // the low surrogate
		}
		i += size
	}
	return off
}

// decodeText decodes raw as Go's utf8.DecodeRune does: a well-formed
// sequence is its character, anything else one U+FFFD for one byte.
func decodeText(raw []byte, t *text) {
	t.raw = raw
	t.offOK = false
	leet, ascii, noPct, tokens := asciiLeet(t.leet[:0], raw)
	t.noPct, t.tokens = noPct, tokens
	if ascii {
		// Keep the buffers for the next non-ASCII text.
		t.ascii, t.units, t.leet = true, t.units[:0], leet
		return
	}
	t.ascii, t.tokens = false, 0
	// A byte is at most one unit (a 4-byte character is two), so the
	// buffer is sized once and written by index. The leetspeak characters
	// are listed on the way, as units: a second pass over the units, one
	// at a time, was a third of a long non-ASCII text's scan.
	units := grow(t.units, len(raw))
	leet = leet[:0]
	k := 0
	for i := 0; i < len(raw); {
		stop := len(raw)
		if hasVBMI && len(raw)-i >= 64 {
			// Whole blocks of ASCII bytes, 64 a step (eight at a time,
			// below, were most of a long text's conversion); the loop
			// below takes the block the kernel stopped at, and the kernel
			// the blocks after it.
			var n int
			leet = slices.Grow(leet, 64)
			i, k, n = widenVBMI(units, raw, leet[len(leet):cap(leet)], i, k)
			leet, stop = leet[:len(leet)+n], min(i+64, len(raw))
		}
		for i < stop {
			// Eight ASCII bytes at a time: non-ASCII texts are mostly ASCII.
			if i+8 <= len(raw) {
				if w := binary.LittleEndian.Uint64(raw[i:]); w&0x8080808080808080 == 0 {
					u, r := units[k:k+8:k+8], raw[i:i+8:i+8]
					u[0], u[1], u[2], u[3] = uint16(r[0]), uint16(r[1]), uint16(r[2]), uint16(r[3])
					u[4], u[5], u[6], u[7] = uint16(r[4]), uint16(r[5]), uint16(r[6]), uint16(r[7])
					if m := leetCandidates(w); m != 0 {
						leet = appendLeetWord(leet, m, r, k)
					}
					i, k = i+8, k+8
					continue
				}
			}
			b := raw[i]
			if b < utf8.RuneSelf {
				if isLeet(b) {
					leet = append(leet, int32(k))
				}
				units[k] = uint16(b)
				k++
				i++
				continue
			}
			r, size := utf8.DecodeRune(raw[i:])
			if r >= 0x10000 {
				r -= 0x10000
				units[k], units[k+1] = uint16(0xD800+(r>>10)), uint16(0xDC00+(r&0x3FF))
				k += 2
			} else {
				units[k] = uint16(r)
				k++
			}
			i += size
		}
	}
	t.units, t.leet = units[:k], leet
}

// asciiLeet appends the positions of the leetspeak characters of raw to
// dst and reports whether raw is all ASCII: the one pass over every scanned
// text that both need (digits are common enough that a byte loop was most
// of the leetspeak view's work on chat bodies). A vector kernel, where the
// CPU has one, takes texts of a block (64 bytes) or more, and a loop over
// words the others. When raw is not all ASCII, dst holds what was found
// before the first block or word that is not, for the caller to throw away.
// noPct reports that raw has no '%', when the kernel read all of it (it
// looks at every byte anyway: a search of its own was 5% of a long text's
// scan); tokens, from where findTokens need look (see asciiLeetBlocks).
func asciiLeet(dst []int32, raw []byte) (_ []int32, ascii, noPct bool, tokens int) {
	dst, i, ascii, pct, tokens := asciiLeetBlocks(dst, raw)
	if !ascii {
		return dst, false, false, 0
	}
	// The kernel read every byte of a text it took whole.
	noPct = i == len(raw) && i > 0 && !pct
	dst, ascii = asciiLeetWords(dst, raw, i)
	return dst, ascii, noPct, tokens
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

// asciiLeetWords is asciiLeet from raw[i:], eight bytes at a time.
func asciiLeetWords(dst []int32, raw []byte, i int) ([]int32, bool) {
	for ; i+8 <= len(raw); i += 8 {
		v := binary.LittleEndian.Uint64(raw[i:])
		if v&0x8080808080808080 != 0 {
			return dst, false
		}
		if m := leetCandidates(v); m != 0 {
			dst = appendLeetWord(dst, m, raw[i:i+8], i)
		}
	}
	for ; i < len(raw); i++ {
		if raw[i] >= utf8.RuneSelf {
			return dst, false
		}
		if isLeet(raw[i]) {
			dst = append(dst, int32(i))
		}
	}
	return dst, true
}

func isLeet[U byte | uint16](u U) bool { return u < 128 && unitFlags[u&127]&fLeet != 0 }
