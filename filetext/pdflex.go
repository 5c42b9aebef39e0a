package filetext

import (
	"strconv"
	"unicode/utf16"
)

// The content-stream and CMap lexer. The library has one, but it offers it only over
// streams it decodes itself, without bounds; this one reads bytes already charged to the
// budget and never allocates more than its input.

type tokKind int

const (
	tEOF tokKind = iota
	tNum
	tStr
	tName
	tOp
	tArrOpen
	tArrClose
	tDictOpen
	tDictClose
)

type token struct {
	kind tokKind
	s    string // string bytes, name or operator
	num  float64
}

type lexer struct {
	data   []byte
	pos    int
	unread []token
}

// back makes t the next token again; tokens put back come out last first.
func (l *lexer) back(t token) { l.unread = append(l.unread, t) }

func (l *lexer) next() token {
	if n := len(l.unread); n > 0 {
		t := l.unread[n-1]
		l.unread = l.unread[:n-1]
		return t
	}
	for {
		l.pos = skipSpace(l.data, l.pos)
		if l.pos >= len(l.data) {
			return token{kind: tEOF}
		}
		c := l.data[l.pos]
		switch c {
		case '(':
			return token{kind: tStr, s: l.literal()}
		case '<':
			if l.pos+1 < len(l.data) && l.data[l.pos+1] == '<' {
				l.pos += 2
				return token{kind: tDictOpen}
			}
			return token{kind: tStr, s: l.hex()}
		case '>':
			l.pos++
			if l.pos < len(l.data) && l.data[l.pos] == '>' {
				l.pos++
				return token{kind: tDictClose}
			}
			continue
		case '[':
			l.pos++
			return token{kind: tArrOpen}
		case ']':
			l.pos++
			return token{kind: tArrClose}
		case '/':
			name, end := lexName(l.data, l.pos+1)
			l.pos = end
			return token{kind: tName, s: name}
		case ')', '{', '}':
			l.pos++
			continue
		}
		start := l.pos
		for l.pos < len(l.data) && isRegular(l.data[l.pos]) {
			l.pos++
		}
		word := string(l.data[start:l.pos])
		if c == '+' || c == '-' || c == '.' || c >= '0' && c <= '9' {
			if f, err := strconv.ParseFloat(word, 64); err == nil {
				return token{kind: tNum, num: f}
			}
		}
		return token{kind: tOp, s: word}
	}
}

// literal reads a (string) with its escapes; an unterminated string ends at the end.
func (l *lexer) literal() string {
	var b []byte
	depth := 0
	for l.pos++; l.pos < len(l.data); l.pos++ {
		c := l.data[l.pos]
		switch c {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				l.pos++
				return string(b)
			}
			depth--
		case '\\':
			l.pos++
			if l.pos >= len(l.data) {
				return string(b)
			}
			c = l.data[l.pos]
			switch c {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r':
				if l.pos+1 < len(l.data) && l.data[l.pos+1] == '\n' {
					l.pos++
				}
				continue
			case '\n':
				continue
			default:
				if c >= '0' && c <= '7' {
					v := int(c - '0')
					for k := 0; k < 2 && l.pos+1 < len(l.data) && l.data[l.pos+1] >= '0' && l.data[l.pos+1] <= '7'; k++ {
						l.pos++
						v = v*8 + int(l.data[l.pos]-'0')
					}
					c = byte(v)
				}
			}
		}
		b = append(b, c)
	}
	return string(b)
}

// hex reads a <hex string>; whitespace is ignored and an odd last digit is followed by 0.
func (l *lexer) hex() string {
	var b []byte
	var hi byte
	half := false
	for l.pos++; l.pos < len(l.data); l.pos++ {
		c := l.data[l.pos]
		var v byte
		switch {
		case c == '>':
			l.pos++
			if half {
				b = append(b, hi<<4)
			}
			return string(b)
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			continue
		}
		if half {
			b = append(b, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	return string(b)
}

// textString decodes a PDF text string: UTF-16BE after a BOM, else PDFDocEncoding,
// read as latin-1 (they differ only in a few punctuation marks).
func textString(s string) string {
	if len(s) >= 2 && s[0] == 0xFE && s[1] == 0xFF {
		return utf16BE(s[2:])
	}
	return decodeSingleByte([]byte(s), nil)
}

func utf16BE(s string) string {
	u := make([]uint16, len(s)/2)
	for i := range u {
		u[i] = uint16(s[2*i])<<8 | uint16(s[2*i+1])
	}
	return string(utf16.Decode(u))
}

// Lexing helpers shared with the pre-check.

func isSpace(c byte) bool {
	switch c {
	case 0, '\t', '\n', '\f', '\r', ' ':
		return true
	}
	return false
}

func isDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func isRegular(c byte) bool { return !isSpace(c) && !isDelim(c) }

// skipSpace skips whitespace and comments.
func skipSpace(data []byte, pos int) int {
	for pos < len(data) {
		switch {
		case isSpace(data[pos]):
			pos++
		case data[pos] == '%':
			for pos < len(data) && data[pos] != '\n' && data[pos] != '\r' {
				pos++
			}
		default:
			return pos
		}
	}
	return pos
}

// lexInt reads a non-negative integer token at pos; it fails on reals and signs, which
// the library's counts never take as integers.
func lexInt(data []byte, pos int) (int64, int, bool) {
	end := pos
	for end < len(data) && data[end] >= '0' && data[end] <= '9' {
		end++
	}
	if end == pos || end < len(data) && isRegular(data[end]) {
		return 0, pos, false
	}
	v, err := strconv.ParseInt(string(data[pos:min(end, pos+19)]), 10, 64)
	if err != nil || end-pos > 18 {
		v = 1<<63 - 1
	}
	return v, end, true
}

// lexName reads a name after its slash, decoding #xx escapes as the library does.
func lexName(data []byte, pos int) (string, int) {
	var b []byte
	for pos < len(data) && isRegular(data[pos]) && len(b) < 128 {
		c := data[pos]
		if c == '#' && pos+2 < len(data) {
			if v, err := strconv.ParseUint(string(data[pos+1:pos+3]), 16, 8); err == nil {
				c = byte(v)
				pos += 2
			}
		}
		b = append(b, c)
		pos++
	}
	return string(b), pos
}
