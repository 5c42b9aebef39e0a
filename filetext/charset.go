package filetext

import "strings"

// Charset is a character encoding the package decodes.
type Charset int

const (
	// UnknownCharset is a label the package does not decode.
	UnknownCharset Charset = iota
	// UTF8 is UTF-8, and US-ASCII, and text with no charset declared.
	UTF8
	// UTF16BE is UTF-16, big endian; also UTF-16 labelled without its byte order.
	UTF16BE
	// UTF16LE is UTF-16, little endian.
	UTF16LE
	// Latin1 is ISO-8859-1: every byte is the code point of its value.
	Latin1
	// Windows1252 is windows-1252: ISO-8859-1 but for 0x80-0x9F.
	Windows1252
)

// LookupCharset returns the charset a label (a media type's charset parameter) names:
// case, quotes, spaces, dashes, underscores and colons do not matter, so "UTF-8",
// "utf_8" and "\"utf8\"" are UTF8, and the registered aliases of each name count. The
// empty label is UTF8.
func LookupCharset(label string) Charset {
	switch normalizeCharset(label) {
	case "", "utf8", "usascii", "ascii", "us", "ansix3.41968", "iso646us", "csascii":
		return UTF8
	case "utf16", "utf16be", "unicodefffe":
		return UTF16BE
	case "utf16le":
		return UTF16LE
	case "iso88591", "latin1", "l1", "iso885911987", "isoir100", "cp819", "ibm819",
		"csisolatin1":
		return Latin1
	case "windows1252", "cp1252", "xcp1252":
		return Windows1252
	}
	return UnknownCharset
}

// normalizeCharset lowercases a charset label and drops quotes, dashes, underscores,
// colons and spaces.
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

// BOMCharset names the UTF-16 or UTF-32 byte order mark data starts with ("utf-16be",
// "utf-16le", "utf-32be", "utf-32le"), or is "". A UTF-8 BOM is not named: a UTF-8
// reader reads past it.
func BOMCharset(data []byte) string {
	switch {
	case len(data) >= 4 && string(data[:4]) == "\x00\x00\xFE\xFF":
		return "utf-32be"
	case len(data) >= 4 && string(data[:4]) == "\xFF\xFE\x00\x00":
		return "utf-32le"
	case len(data) >= 2 && string(data[:2]) == "\xFE\xFF":
		return "utf-16be"
	case len(data) >= 2 && string(data[:2]) == "\xFF\xFE":
		return "utf-16le"
	}
	return ""
}

// DecodeLatin1 decodes ISO-8859-1 to UTF-8.
func DecodeLatin1(data []byte) string { return decodeSingleByte(data, nil) }

// DecodeWindows1252 decodes windows-1252 to UTF-8. Its five undefined bytes (0x81, 0x8D,
// 0x8F, 0x90, 0x9D) become the C1 controls of the same value, as WHATWG's decoder does,
// so that no byte is lost and EncodeWindows1252 gives it back.
func DecodeWindows1252(data []byte) string { return decodeSingleByte(data, &cp1252) }

// EncodeLatin1 encodes s in ISO-8859-1; a character beyond U+00FF becomes '?'.
func EncodeLatin1(s string) []byte { return encodeSingleByte(s, nil) }

// EncodeWindows1252 encodes s in windows-1252, the inverse of DecodeWindows1252; a
// character windows-1252 lacks becomes '?'.
func EncodeWindows1252(s string) []byte { return encodeSingleByte(s, &cp1252) }

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

// encodeSingleByte is decodeSingleByte's inverse, with '?' for a rune it cannot encode.
func encodeSingleByte(s string, high *[32]rune) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		c := byte('?')
		switch {
		case r < 0x80 || r < 0x100 && (high == nil || r >= 0xA0):
			c = byte(r)
		case high != nil:
			for i, h := range high {
				if h == r {
					c = byte(0x80 + i)
					break
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// cp1252 is windows-1252 at 0x80-0x9F; the five undefined codes map to the C1 controls
// of the same value, as WHATWG's decoder does.
var cp1252 = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
}
