package jsonstr

import "bytes"

// Real text has an escape every line: a document's newlines are \n in its
// literal, one every 48 bytes or so, and its quotes \". A loop that left its
// vector (or word) loop at each of them and came back through a call spent
// more on the calls than on the bytes. The functions here pass over the
// two-byte escapes within their loops, and stop only at what their caller
// must look at: a \u escape, an invalid one, the literal's end.

// escapeByte is the value of each two-byte escape, by its second byte:
// escapeByte['n'] is '\n'; 0 for a byte that does not make one ('u' among
// them, whose escape is six bytes).
var escapeByte = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// PlainEscapes is PlainASCII that passes over the two-byte escapes (\" \\
// \/ \b \f \n \r \t): it returns the offset of the first byte at or after i
// that is '"', a control character, or a backslash that does not start one
// (a \u escape, an invalid escape, a backslash at b's end); len(b) if there
// is none. The offset is never inside an escape. ascii reports whether the
// bytes it passed over are all below 0x80, escaped whether one of them was
// an escape. A parser reads a literal of prose in one call, not one call a
// line. On amd64 with AVX2 a kernel finds a block's escapes with bit
// masks, 64 bytes a step, without a branch on each.
func PlainEscapes(b []byte, i int) (end int, ascii, escaped bool) {
	return plainEscapes(b, i)
}

// plainEscapesSWAR is PlainEscapes with plainSWAR, the portable loop.
func plainEscapesSWAR(b []byte, i int) (j int, ascii, escaped bool) {
	ascii = true
	for {
		j = plainSWAR(b, i)
		ascii = ascii && asciiPrefixWords(b[i:j]) == j-i
		if j+1 >= len(b) || b[j] != '\\' || escapeByte[b[j+1]] == 0 {
			return j, ascii, escaped
		}
		i, escaped = j+2, true
	}
}

// unescapeRunsIndex appends the start of s, a literal's content, to dst
// with its two-byte escapes resolved, up to the first \u or invalid escape
// (or a backslash that ends s): it returns dst and how much of s it read.
// It copies the bytes as they are: the caller knows they are valid UTF-8.
func unescapeRunsIndex(dst, s []byte) ([]byte, int) {
	for i := 0; ; {
		k := bytes.IndexByte(s[i:], '\\')
		if k < 0 {
			return append(dst, s[i:]...), len(s)
		}
		dst = append(dst, s[i:i+k]...)
		if i += k; i+1 >= len(s) || escapeByte[s[i+1]] == 0 {
			return dst, i
		}
		dst = append(dst, escapeByte[s[i+1]])
		i += 2
	}
}
