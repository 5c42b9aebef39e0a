package filetext

import (
	"bytes"
	"fmt"
	"mime"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeText decodes text bytes to UTF-8. A byte-order mark decides the encoding when
// there is one (UTF-8, UTF-16BE, UTF-16LE), as browsers do, and is removed. Otherwise
// charset decides: "" (none declared), UTF-8 and US-ASCII are read as UTF-8; UTF-16 (big
// endian without a BOM), UTF-16BE and UTF-16LE; ISO-8859-1 (latin-1) and windows-1252.
// Any other charset is ErrCharset: an upstream that honours it reads what a scan of
// other bytes would miss.
//
// Bytes that are not valid in the encoding become U+FFFD, one per byte, so that no
// input byte disappears between the scan and the model. Read as UTF-8, bytes that look
// like UTF-16 without a BOM (NULs between ASCII letters) are followed by a newline and
// their UTF-16 reading, so that the scan sees the letters together.
func DecodeText(data []byte, charset string) (string, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return decodeUTF8(data[3:]), nil
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return decodeUTF16(data[2:], true), nil
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return decodeUTF16(data[2:], false), nil
	}
	switch normalizeCharset(charset) {
	case "", "utf8", "usascii", "ascii", "us", "ansix3.41968", "iso646us", "csascii":
		s := decodeUTF8(data)
		if bigEndian, ok := looksUTF16(data); ok {
			// A model reads ASCII text with a NUL between letters; the scan needs
			// it without them.
			s += "\n" + decodeUTF16(data, bigEndian)
		}
		return s, nil
	case "utf16", "utf16be", "unicodefffe":
		return decodeUTF16(data, true), nil
	case "utf16le":
		return decodeUTF16(data, false), nil
	case "iso88591", "latin1", "l1", "iso885911987", "isoir100", "cp819", "ibm819",
		"csisolatin1":
		return decodeSingleByte(data, nil), nil
	case "windows1252", "cp1252", "xcp1252":
		return decodeSingleByte(data, &cp1252), nil
	}
	return "", fmt.Errorf("%w: %q", ErrCharset, charset)
}

// looksUTF16 reports whether data without a BOM looks like UTF-16 text: NUL bytes at
// one parity in at least two pairs of five of the first 4 KiB, hardly any at the other.
func looksUTF16(data []byte) (bigEndian, ok bool) {
	head := data[:min(len(data), 4096)&^1]
	if len(head) < 8 {
		return false, false
	}
	var zeros [2]int
	for i, c := range head {
		if c == 0 {
			zeros[i&1]++
		}
	}
	pairs := len(head) / 2
	switch {
	case zeros[0]*5 >= pairs*2 && zeros[1]*20 <= pairs:
		return true, true
	case zeros[1]*5 >= pairs*2 && zeros[0]*20 <= pairs:
		return false, true
	}
	return false, false
}

// normalizeCharset lowercases a charset label and drops quotes, dashes, underscores and
// colons, so "UTF-8", "utf_8" and "\"utf8\"" compare equal.
func normalizeCharset(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch r {
		case '"', '\'', '-', '_', ':', ' ':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func decodeUTF8(data []byte) string {
	if utf8.Valid(data) {
		return string(data)
	}
	var b strings.Builder
	b.Grow(len(data) + 16)
	for len(data) > 0 {
		r, n := utf8.DecodeRune(data)
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.Write(data[:n])
		}
		data = data[n:]
	}
	return b.String()
}

func decodeUTF16(data []byte, bigEndian bool) string {
	units := make([]uint16, len(data)/2)
	for i := range units {
		hi, lo := data[2*i], data[2*i+1]
		if !bigEndian {
			hi, lo = lo, hi
		}
		units[i] = uint16(hi)<<8 | uint16(lo)
	}
	var b strings.Builder
	b.Grow(len(data) + 4)
	for _, r := range utf16.Decode(units) {
		b.WriteRune(r)
	}
	if len(data)%2 == 1 {
		b.WriteRune(utf8.RuneError)
	}
	return b.String()
}

// decodeSingleByte maps each byte to a rune: latin-1 is the identity; high, when given,
// replaces 0x80-0x9F (windows-1252).
func decodeSingleByte(data []byte, high *[32]rune) string {
	var b strings.Builder
	b.Grow(len(data) + len(data)/4)
	for _, c := range data {
		r := rune(c)
		if high != nil && c >= 0x80 && c < 0xA0 {
			r = high[c-0x80]
		}
		b.WriteRune(r)
	}
	return b.String()
}

// cp1252 is windows-1252 at 0x80-0x9F; the five undefined codes map to the C1 controls
// of the same value, as WHATWG's decoder does.
var cp1252 = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
}

// charsetParam returns the charset parameter of a media type, or "".
func charsetParam(mediaType string) string {
	_, params, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return ""
	}
	return params["charset"]
}

// validPrefix returns the longest length ≤ n at which s can be cut without splitting a
// UTF-8 sequence.
func validPrefix(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return n
}
