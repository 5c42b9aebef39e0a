// Package jsonstr reads and writes JSON string literals with encoding/json's
// exact semantics, fast: the engine, the request parser and the command line
// all handle texts that arrive in, or leave as, JSON strings.
package jsonstr

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// End returns the index just past the valid JSON string literal that starts
// at b[i] (a '"'), or -1 when there is none there (a bad escape, a control
// character, no closing quote). Invalid UTF-8 is valid, as for encoding/json,
// and decodes to U+FFFD.
func End(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; ; {
		if i, _, _ = PlainEscapes(b, i); i >= len(b) || b[i] < 0x20 {
			return -1
		}
		if b[i] == '"' {
			return i + 1
		}
		// A backslash.
		if i+1 >= len(b) {
			return -1
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
				return -1
			}
			i += 6
		default:
			return -1
		}
	}
}

// ASCII reports whether every byte of b is below 0x80.
func ASCII(b []byte) bool {
	return asciiPrefix(b) == len(b)
}

// ValidUTF8 is utf8.Valid: the bytes of a literal with no escape are its
// value when they are valid. It reads the ASCII start of b (most texts are
// all ASCII) 64 bytes a step on amd64 with AVX2, twice as fast as
// utf8.Valid, and gives utf8.Valid only the rest.
func ValidUTF8(b []byte) bool {
	n := asciiPrefix(b)
	return n == len(b) || utf8.Valid(b[n:])
}

// asciiPrefixWords returns a length n of b's start that is all ASCII, n
// being len(b) exactly when all of b is: it stops at the first word of
// eight bytes, or in the last few bytes at the first byte, that is not.
func asciiPrefixWords(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 != 0 {
			return i
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= 0x80 {
			return i
		}
	}
	return i
}

// Plain returns the offset of the first byte at or after i that a string
// literal's grammar must look at: '"', '\\' or a control character; len(b)
// if there is none. Bytes from 0x80 are plain: invalid UTF-8 is valid in a
// literal (decoding makes it U+FFFD).
//
// Long-context bodies are mostly string bytes, so on amd64 with AVX2 it
// tests 64 bytes a step in assembly, about eight times as fast as eight
// at a time with SWAR. Fewer than 32 bytes (a key, a long string's last
// bytes) and other machines take the SWAR loop, plainSWAR: for them a call
// to assembly would cost more than it saves.
func Plain(b []byte, i int) int {
	return plain(b, i)
}

// PlainASCII is Plain that also reports whether the bytes it passes over,
// b[i:end], are all below 0x80: the bytes of a long literal are then read
// once, not once for the literal's end and again for utf8.Valid. On amd64
// with AVX-512 one kernel does both, 64 bytes a step.
func PlainASCII(b []byte, i int) (end int, ascii bool) {
	return plainASCII(b, i)
}

// stopWord has the high bit of each byte of the word v that is below 0x20,
// '"' or '\\' set: the classic SWAR tricks. Only its lowest set bit is
// exact (no borrow crosses into a byte from below the first byte that
// hit): it marks the first such byte.
func stopWord(v uint64) uint64 {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	return ((v - ones*0x20) | ((v ^ ones*'"') - ones) | ((v ^ ones*'\\') - ones)) &^ v & highs
}

// plainSWAR is Plain a word at a time (stopWord). It is kept small enough
// to be inlined into the AVX2 dispatch, so that a short string costs one
// call, not two; its byte loop reads a table because three comparisons
// would take it over the inliner's budget.
func plainSWAR(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := stopWord(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(b) && !stopByte[b[i]] {
		i++
	}
	return i
}

// stopByte marks the bytes Plain stops at.
var stopByte = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// Unquote appends the decoded content s of a valid string literal (quotes removed) to dst,
// as encoding/json does: escapes are resolved, a valid surrogate pair becomes its character, a
// lone surrogate escape becomes U+FFFD, and each byte of invalid UTF-8 becomes U+FFFD.
func Unquote(dst, s []byte) []byte {
	// Most literals are valid UTF-8 as a whole: one check of all of it (the
	// vector ASCII start first) instead of one a run. Code has an escape
	// every line, and a utf8.Valid call on each short run between them was a
	// fifth of parsing a body of it.
	return unquote(dst, s, ValidUTF8(s), nil)
}

// UnquoteValid is Unquote for a literal the caller knows to be valid UTF-8
// (a parser that learned it is ASCII on its way): no check of its own.
func UnquoteValid(dst, s []byte) []byte { return unquote(dst, s, true, nil) }

// unquote is Unquote; with valid, s is known to be valid UTF-8. With marks
// (not nil, and valid), it also appends UnquoteMarks's Marks to *marks.
func unquote(dst, s []byte, valid bool, marks *[]Mark) []byte {
	var canonical bool // unescape's report, not wanted here
	base, last := len(dst), -markEvery
	for i := 0; i < len(s); {
		// The top of the loop is never inside an escape.
		if marks != nil && i-last >= markEvery/2 {
			*marks = append(*marks, Mark{Raw: i, Value: len(dst) - base})
			last = i
		}
		if valid {
			// Prose is runs between \n and \" escapes, one a line: copied
			// and resolved in one loop up to a \u escape or the end (with
			// marks, a window's end).
			end := len(s)
			if marks != nil {
				end = min(end, i+markEvery/2)
			}
			var n int
			if dst, n = unescapeRuns(dst, s[i:end]); i+n >= len(s) {
				break
			}
			if i += n; s[i] != '\\' {
				continue // the window ended
			}
		} else {
			// Copy the run up to the next escape in one go when it is
			// valid UTF-8.
			run := bytes.IndexByte(s[i:], '\\')
			if run < 0 {
				run = len(s) - i
			}
			if seg := s[i : i+run]; utf8.Valid(seg) {
				dst = append(dst, seg...)
			} else {
				dst = appendFixUTF8(dst, seg)
			}
			if i += run; i >= len(s) {
				break
			}
		}
		next, out, ok := unescape(dst, s, i, false, &canonical)
		if !ok {
			// Not a valid literal, which the caller promised: keep the rest
			// as it is rather than loop or panic.
			return append(dst, s[i:]...)
		}
		i, dst = next, out
	}
	return dst
}

// appendFixUTF8 appends seg with each byte of invalid UTF-8 replaced by U+FFFD, as
// utf8.DecodeRune reads it (an encoded surrogate is three invalid bytes).
func appendFixUTF8(dst, seg []byte) []byte {
	for i := 0; i < len(seg); {
		if seg[i] < utf8.RuneSelf {
			dst = append(dst, seg[i])
			i++
			continue
		}
		r, size := utf8.DecodeRune(seg[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, seg[i:i+size]...)
		}
		i += size
	}
	return dst
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// DecodeAt reads the JSON string literal that starts at b[i] (a '"') in
// one pass, as End and Unquote would in two: it returns
// the index just past the literal (-1 when there is no valid literal there,
// as for End), the literal's value (a slice of b when it has no escape and
// is valid UTF-8, else appended to dst[:0]; copied says which), and whether
// the literal is canonical: byte for byte what Append(value, html) writes,
// so that a caller that would write the value back unchanged can copy the
// literal instead.
func DecodeAt(dst, b []byte, i int, html bool) (end int, v []byte, copied, canonical bool) {
	if i >= len(b) || b[i] != '"' {
		return -1, nil, false, false
	}
	start := i + 1
	run := start // once copying, b[run:j] is still to be appended
	canonical = true
	checkHTML := html // until the first '<', '>' or '&'
	for j := start; ; {
		if j = nextStop(b, j, checkHTML); j >= len(b) {
			return -1, nil, false, false
		}
		switch c := b[j]; {
		case c == '"':
			if !copied {
				return j + 1, b[start:j], false, canonical
			}
			return j + 1, append(dst, b[run:j]...), true, canonical
		case c == '\\':
			if !copied {
				dst, copied = dst[:0], true
			}
			dst = append(dst, b[run:j]...)
			if j+1 < len(b) && (b[j+1] == '"' || b[j+1] == '\\') {
				// The escapes of a JSON document held as a string, one
				// every 20 bytes or so, are read here without a call.
				dst = append(dst, b[j+1])
				j += 2
			} else {
				var ok bool
				if j, dst, ok = unescape(dst, b, j, html, &canonical); !ok {
					return -1, nil, false, false
				}
			}
			run = j
		case c < 0x20:
			return -1, nil, false, false
		case c < utf8.RuneSelf: // '<', '>' or '&'
			canonical, checkHTML = false, false
			j++
		default:
			// A run of non-ASCII characters (a script other than Latin)
			// is read here, not one nextStop call a character.
			for j < len(b) && b[j] >= utf8.RuneSelf {
				r, size := utf8.DecodeRune(b[j:])
				if r == utf8.RuneError && size == 1 {
					if !copied {
						dst, copied = dst[:0], true
					}
					dst = append(append(dst, b[run:j]...), "\uFFFD"...)
					run = j + 1
				}
				if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
					canonical = false
				}
				j += size
			}
		}
	}
}

// unescape appends the value of the escape at b[j] (a backslash) to dst,
// checking it as End does, and clears canonical unless Append writes it so;
// it returns the index after it. A high surrogate escape followed by an
// escaped low one is their character, any other surrogate escape U+FFFD.
func unescape(dst, b []byte, j int, html bool, canonical *bool) (int, []byte, bool) {
	if j+1 >= len(b) {
		return 0, nil, false
	}
	switch e := b[j+1]; e {
	case '"', '\\':
		return j + 2, append(dst, e), true
	case '/':
		*canonical = false
		return j + 2, append(dst, '/'), true
	case 'b', 'f', 'n', 'r', 't':
		return j + 2, append(dst, "\b\f\n\r\t"[strings.IndexByte("bfnrt", e)]), true
	case 'u':
	default:
		return 0, nil, false
	}
	if j+6 > len(b) || !isHex4(b[j+2:j+6]) {
		return 0, nil, false
	}
	r := hex4(b[j+2:])
	if *canonical && !canonicalEscape(b[j+2:j+6], r, html) {
		*canonical = false
	}
	j += 6
	if r >= 0xD800 && r < 0xE000 {
		*canonical = false // Append writes neither as an escape
		if r < 0xDC00 && j+6 <= len(b) && b[j] == '\\' && b[j+1] == 'u' && isHex4(b[j+2:j+6]) {
			if r2 := hex4(b[j+2:]); r2 >= 0xDC00 && r2 < 0xE000 {
				return j + 6, utf8.AppendRune(dst, 0x10000+(r-0xD800)<<10+(r2-0xDC00)), true
			}
		}
		r = utf8.RuneError
	}
	return j, utf8.AppendRune(dst, r), true
}

// canonicalEscape reports whether Append writes code point r as the \u
// escape with hex digits h.
func canonicalEscape(h []byte, r rune, html bool) bool {
	for _, c := range h {
		if c >= 'A' && c <= 'F' {
			return false // Append writes lower-case hex
		}
	}
	return r < 0x20 && !shortEscape[r] || html && (r == '<' || r == '>' || r == '&') || r == '\u2028' || r == '\u2029'
}

// nextStop returns the index of the first byte at or after j that a
// literal's reader or writer must look at: '"', '\\', a control byte, a
// non-ASCII byte and, with html, '<', '>' and '&'; len(b) if there is none.
// For Append these are exactly the bytes it escapes or decodes. The SWAR
// test is exact for its lowest byte, as in plainSWAR.
func nextStop[S string | []byte](b S, j int, html bool) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for j+8 <= len(b) {
		w := b[j : j+8]
		v := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		t := (v - ones*0x20) | ((v ^ (ones * '"')) - ones) | ((v ^ (ones * '\\')) - ones)
		if html {
			t |= ((v ^ (ones * '<')) - ones) | ((v ^ (ones * '>')) - ones) | ((v ^ (ones * '&')) - ones)
		}
		if m := t&^v&highs | v&highs; m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
		j += 8
	}
	for ; j < len(b); j++ {
		if c := b[j]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf || html && (c == '<' || c == '>' || c == '&') {
			return j
		}
	}
	return j
}

// shortEscape marks the control characters Append writes as \b, \f, \n,
// \r and \t.
var shortEscape = [0x20]bool{'\b': true, '\f': true, '\n': true, '\r': true, '\t': true}

const hexDigits = "0123456789abcdef"

// Append appends s as a JSON string literal, byte for byte what encoding/json writes:
// `"` and `\` and control characters escaped (short forms where JSON has them), invalid UTF-8
// as \ufffd, U+2028 and U+2029 escaped (so the text stays valid JavaScript), and `<`, `>` and
// `&` as \u003c, \u003e, \u0026 when html is set (json.Marshal's default) or as they are
// (SetEscapeHTML(false)).
func Append[S string | []byte](dst []byte, s S, html bool) []byte {
	dst = append(dst, '"')
	start := 0
	kernelAt := 0 // where to call the kernel again
	for i := 0; ; {
		if appendRunsOn && i >= kernelAt && len(s)-i >= 32 {
			// The kernel copies and escapes all but non-ASCII text and
			// the last bytes: no stop here at each newline. Where it reads
			// little before a non-ASCII character (a text with one every
			// few words) the call costs more than it saves: the word loop
			// reads on for a while.
			dst = append(dst, s[start:i]...)
			var n int
			dst, n = appendRuns(dst, s[i:], html)
			if n < 128 {
				kernelAt = i + 512
			}
			i += n
			start = i
		}
		if i = nextStop(s, i, html); i >= len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		// A run of non-ASCII characters (a script other than Latin) is
		// read here, not one call a character.
		for i < len(s) && s[i] >= utf8.RuneSelf {
			r, size := decodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
				i++
				start = i
				continue
			}
			if r == '\u2028' || r == '\u2029' {
				dst = append(dst, s[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
				i += size
				start = i
				continue
			}
			i += size
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// decodeRune is utf8.DecodeRune for a string or a byte slice.
func decodeRune[S string | []byte](s S) (rune, int) {
	if b, ok := any(s).([]byte); ok {
		return utf8.DecodeRune(b)
	}
	return utf8.DecodeRuneInString(string(s))
}
