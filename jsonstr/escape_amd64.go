//go:build !purego

package jsonstr

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useEscapes says whether the escape-passing kernels may run: they test
// 32 or 64 bytes a step with AVX2 and cut masks with BMI2's BZHI.
var useEscapes = cpu.X86.HasAVX2 && cpu.X86.HasBMI2

// appendRunsOn says whether Append calls appendRuns.
var appendRunsOn = useEscapes

// escapeSeq and escapeLen are what Append writes for each ASCII byte it
// escapes, little-endian in the word, and its length: \n for a newline,
// \u001f for 0x1F, \u003c for '<' (with html); 0 for the bytes it does not
// escape. The AVX2 kernel stores the whole word and advances by the length.
var escapeSeq, escapeLen = func() (seq [128]uint64, n [128]uint8) {
	set := func(c byte, s string) {
		for i := len(s) - 1; i >= 0; i-- {
			seq[c] = seq[c]<<8 | uint64(s[i])
		}
		n[c] = uint8(len(s))
	}
	for c := byte(0); c < 0x20; c++ {
		set(c, `\u00`+string(hexDigits[c>>4])+string(hexDigits[c&0xF]))
	}
	for c, e := range map[byte]byte{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'} {
		set(c, `\`+string(e))
	}
	set('<', `\u003c`)
	set('>', `\u003e`)
	set('&', `\u0026`)
	return seq, n
}()

// scanAVX2 is PlainEscapes from b's start over the whole 64-byte blocks
// of b: it returns the offset of the first byte PlainEscapes stops at, or
// an offset less than 64 bytes from b's end where the blocks ran out (then
// of a backslash whose escape crosses their end, if one does: never inside
// an escape); whether a byte from 0x80 up precedes it; and whether it
// passed an escape. It finds escapes with bit masks, no branch on each:
// real text has one every line. It reads nothing past the blocks.
//
//go:noescape
func scanAVX2(b []byte) (n int, high, esc bool)

// unquoteAVX2 is unescapeRunsIndex over the 32-byte windows that fit in s:
// each window is stored whole at dst's write offset o, which advances to
// the first backslash, whose escape's value is then written. An escape
// reads two bytes and writes one, so o is at most the read offset and a
// store ends at most at len(s): dst must have room for len(s) bytes and not
// overlap s. It returns the bytes written and read, stopping where
// unescapeRunsIndex would stop or less than 32 bytes from s's end.
//
//go:noescape
func unquoteAVX2(dst, s []byte) (nd, ns int)

// appendAVX2 copies s to dst, escaping as Append does, over the 32-byte
// windows that fit in s: each window is stored whole at dst's write
// offset, which advances to the first byte to escape, whose escape
// (escapeSeq, escapeLen) is stored as a whole word. It stops at a byte from
// 0x80 up (Append's caller decodes it), less than 32 bytes from s's end, or
// when dst has fewer than 40 bytes of room left at the write offset (a
// window and a word). It returns the bytes written and read.
//
//go:noescape
func appendAVX2(dst, s []byte, html bool) (nd, ns int)

// plainEscapes is PlainEscapes: a short literal ends in its first word, as
// in plainASCII; a longer one goes to the kernel, its last bytes to the
// SWAR loop.
func plainEscapes(b []byte, i int) (int, bool, bool) {
	if i+8 <= len(b) {
		v := binary.LittleEndian.Uint64(b[i:])
		if m := stopWord(v); m != 0 && b[i+bits.TrailingZeros64(m)/8] != '\\' {
			n := bits.TrailingZeros64(m) / 8
			return i + n, v&0x8080808080808080&(1<<(8*n)-1) == 0, false
		}
	}
	if !useEscapes || len(b)-i < 64 { // no block for the kernel
		return plainEscapesSWAR(b, i)
	}
	n, high, esc := scanAVX2(b[i:])
	j, ascii, esc2 := plainEscapesSWAR(b, i+n)
	return j, ascii && !high, esc || esc2
}

// unescapeRuns is unescapeRunsIndex with the kernel over all but the last
// bytes.
func unescapeRuns(dst, s []byte) ([]byte, int) {
	if !useEscapes || len(s) < 32 {
		return unescapeRunsIndex(dst, s)
	}
	dst = slices.Grow(dst, len(s))
	room := dst[len(dst) : len(dst)+len(s)]
	if overlap(room, s) {
		return unescapeRunsIndex(dst, s)
	}
	nd, ns := unquoteAVX2(room, s)
	dst = dst[:len(dst)+nd]
	if ns < len(s) && s[ns] == '\\' && (ns+1 >= len(s) || escapeByte[s[ns+1]] == 0) {
		return dst, ns
	}
	dst, n := unescapeRunsIndex(dst, s[ns:])
	return dst, ns + n
}

// appendRuns appends the start of s to dst escaped as Append does, up to
// a byte from 0x80 up or s's last 31 bytes, growing dst as it goes; it
// returns dst and how much of s it read.
func appendRuns[S string | []byte](dst []byte, str S, html bool) ([]byte, int) {
	// The kernel only reads s: a string's bytes are not written.
	s := unsafe.Slice(unsafe.StringData(*(*string)(unsafe.Pointer(&str))), len(str))
	n := 0
	for len(s)-n >= 32 && s[n] < 0x80 {
		// Room for the rest unescaped, as a caller that sized dst may
		// have given: an escape-dense rest gets another call, append's
		// growth (not this) keeping the grows few.
		dst = slices.Grow(dst, len(s)-n+64)
		room := dst[len(dst):cap(dst)]
		if overlap(room, s) {
			break
		}
		nd, ns := appendAVX2(room, s[n:], html)
		dst, n = dst[:len(dst)+nd], n+ns
	}
	return dst, n
}

// overlap reports whether a and b share a byte: a kernel's stores must not
// reach the bytes it has still to read.
func overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}
