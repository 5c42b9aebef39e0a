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
	switch LookupCharset(charset) {
	case UTF8:
		s := decodeUTF8(data)
		if bigEndian, ok := looksUTF16(data); ok {
			// A model reads ASCII text with a NUL between letters; the scan needs
			// it without them.
			s += "\n" + decodeUTF16(data, bigEndian)
		}
		return s, nil
	case UTF16BE:
		return decodeUTF16(data, true), nil
	case UTF16LE:
		return decodeUTF16(data, false), nil
	case Latin1:
		return DecodeLatin1(data), nil
	case Windows1252:
		return DecodeWindows1252(data), nil
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
