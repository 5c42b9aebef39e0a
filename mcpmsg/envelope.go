package mcpmsg

import (
	"bytes"
	"encoding/json"
)

// The envelope is read from JSON that llmreq validated already: a walk of
// the top level members that skips their values, instead of a second full
// decode (encoding/json validates the whole message again, which cost more
// than the rest of the guard). Every index is checked all the same, so a
// caller's unvalidated input gives false, never a panic.

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the end of the string literal at b[i] (its quote), or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		k := bytes.IndexAny(b[j:], "\"\\")
		if k < 0 {
			return -1
		}
		j += k
		if b[j] == '"' {
			return j + 1
		}
		j += 2
	}
	return -1
}

// skipValue returns the end of the value at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < len(b) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(b[i])) {
		i++
	}
	return i
}

// members calls f with each member of the object b, its key decoded; false
// when b is not an object.
func members(b []byte, f func(key string, val []byte)) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) {
		end := skipString(b, i)
		if b[i] != '"' || end < 0 {
			return false
		}
		key := string(b[i+1 : end-1])
		if bytes.IndexByte(b[i:end], '\\') >= 0 && json.Unmarshal(b[i:end], &key) != nil {
			return false
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		vend := skipValue(b, i)
		if vend < 0 {
			return false
		}
		f(key, b[i:vend])
		i = skipSpace(b, vend)
		if i < len(b) && b[i] == '}' {
			return true
		}
		if i >= len(b) || b[i] != ',' {
			return false
		}
		i = skipSpace(b, i+1)
	}
	return false
}

// elements returns the elements of the array b, or false.
func elements(b []byte) ([][]byte, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	var out [][]byte
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return out, true
	}
	for i < len(b) {
		end := skipValue(b, i)
		if end < 0 {
			return nil, false
		}
		out = append(out, b[i:end])
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ']' {
			return out, true
		}
		if i >= len(b) || b[i] != ',' {
			return nil, false
		}
		i = skipSpace(b, i+1)
	}
	return nil, false
}
