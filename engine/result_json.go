package engine

import (
	"encoding/base64"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends r in the shape of SPEC section 8, byte for byte what
// encoding/json writes for it (HTML-safe escapes, category_counts keys
// sorted), without reflection: the command line writes one per input line.
// With sanitizedBase64 the sanitized copy is written as "sanitized_base64",
// for inputs given as raw bytes whose copy may not be valid UTF-8.
func AppendJSON(dst []byte, r Result, sanitizedBase64 bool) []byte {
	dst = append(dst, `{"verdict":`...)
	dst = appendString(dst, string(r.Verdict))
	dst = append(dst, `,"matches":[`...)
	for i, m := range r.Matches {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"rule":`...)
		dst = appendString(dst, m.Rule)
		dst = append(dst, `,"category":`...)
		dst = appendString(dst, m.Category)
		dst = append(dst, `,"severity":`...)
		dst = appendString(dst, string(m.Severity))
		dst = append(dst, `,"start":`...)
		dst = strconv.AppendInt(dst, int64(m.Start), 10)
		dst = append(dst, `,"end":`...)
		dst = strconv.AppendInt(dst, int64(m.End), 10)
		dst = append(dst, `,"views":[`...)
		for j, v := range m.Views {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, v)
		}
		dst = append(dst, "]}"...)
	}
	dst = append(dst, `],"category_counts":{`...)
	keys := make([]string, 0, len(r.CategoryCounts))
	for k := range r.CategoryCounts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, int64(r.CategoryCounts[k]), 10)
	}
	if sanitizedBase64 {
		dst = append(dst, `},"sanitized_base64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, r.Sanitized)
		return append(dst, `"}`...)
	}
	dst = append(dst, `},"sanitized":`...)
	dst = appendString(dst, string(r.Sanitized))
	return append(dst, '}')
}

const hexDigits = "0123456789abcdef"

// plainByte marks the ASCII bytes encoding/json writes as they are.
var plainByte = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// appendString writes s as encoding/json does with HTML escaping on.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if plainByte[b] {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
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
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
