package caddymodule

import (
	"unicode/utf16"
	"unicode/utf8"
)

// jsonString decodes a JSON string token as encoding/json does: invalid
// UTF-8 and lone surrogate escapes become U+FFFD, which is how the HTTP
// endpoints read a text too. It reports false for anything that is not a
// valid JSON string. Without escapes the result shares tok's bytes.
func jsonString(tok []byte) ([]byte, bool) { return appendJSONString(nil, tok) }

// appendJSONString is jsonString decoding into dst's storage.
func appendJSONString(dst, tok []byte) ([]byte, bool) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return nil, false
	}
	in := tok[1 : len(tok)-1]
	i := 0
	for i < len(in) {
		b := in[i]
		if b == '\\' || b == '"' || b < 0x20 || b >= utf8.RuneSelf {
			break
		}
		i++
	}
	if i == len(in) {
		return in, true
	}
	out := append(dst[:0], in[:i]...)
	for i < len(in) {
		b := in[i]
		switch {
		case b == '"' || b < 0x20:
			return nil, false
		case b >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(in[i:])
			out = utf8.AppendRune(out, r) // RuneError for an invalid byte
			i += size
			continue
		case b != '\\':
			// Copy the run of plain ASCII up to the next byte that needs care.
			j := i + 1
			for j < len(in) && in[j] != '\\' && in[j] != '"' && in[j] >= 0x20 && in[j] < utf8.RuneSelf {
				j++
			}
			out = append(out, in[i:j]...)
			i = j
			continue
		}
		if i+1 >= len(in) {
			return nil, false
		}
		switch e := in[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+6 > len(in) {
				return nil, false
			}
			r, ok := hex4(in[i+2:])
			if !ok {
				return nil, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(in) && in[i] == '\\' && in[i+1] == 'u' {
					r2, ok := hex4(in[i+2:])
					if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
						out = utf8.AppendRune(out, dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return nil, false
		}
		i += 2
	}
	return out, true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
