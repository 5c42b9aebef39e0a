package llmresp

import (
	"bytes"
	"strconv"

	"github.com/promptwall/promptwall/jsonstr"
)

// The walkers below read JSON that encoding/json's Valid accepted, so they check nothing.

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// valueEnd returns the index just past the valid JSON value at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return jsonstr.End(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = jsonstr.End(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for i < len(b) && !isWS(b[i]) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
		i++
	}
	return i
}

// members calls fn with each member's key (decoded) and value start of the object at b[i].
func members(b []byte, i int, fn func(key []byte, v int)) {
	if i < 0 || b[i] != '{' {
		return
	}
	var kbuf []byte
	for i = skipWS(b, i+1); i < len(b) && b[i] != '}'; {
		ke := jsonstr.End(b, i)
		key := b[i+1 : ke-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			kbuf = jsonstr.Unquote(kbuf[:0], key)
			key = kbuf
		}
		v := skipWS(b, skipWS(b, ke)+1) // past the colon
		fn(key, v)
		i = skipWS(b, valueEnd(b, v))
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
}

// elems calls fn with each element's position and start in the array at b[i].
func elems(b []byte, i int, fn func(k, v int)) {
	if i < 0 || b[i] != '[' {
		return
	}
	k := 0
	for i = skipWS(b, i+1); i < len(b) && b[i] != ']'; k++ {
		fn(k, i)
		i = skipWS(b, valueEnd(b, i))
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
}

// get returns the value start of the last member key of the object at b[i] (the one JSON.parse
// keeps), or -1.
func get(b []byte, i int, key string) int {
	v := -1
	members(b, i, func(k []byte, at int) {
		if string(k) == key {
			v = at
		}
	})
	return v
}

// each calls fn with the value of every member key of the object at b[i], duplicates included:
// a container of texts is read whole wherever some client might read it.
func each(b []byte, i int, key string, fn func(v int)) {
	members(b, i, func(k []byte, v int) {
		if string(k) == key {
			fn(v)
		}
	})
}

// str returns the decoded string at b[v], if it is one.
func str(b []byte, v int) (string, bool) {
	if v < 0 || b[v] != '"' {
		return "", false
	}
	e := jsonstr.End(b, v)
	return string(jsonstr.Unquote(nil, b[v+1:e-1])), true
}

// num returns the non-negative integer at b[v], or def.
func num(b []byte, v int, def int) int {
	if v < 0 {
		return def
	}
	n, any := 0, false
	for i := v; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if n > 1<<30 {
			return def
		}
		n, any = n*10+int(b[i]-'0'), true
	}
	if !any || valueEnd(b, v) != v+len(strconv.Itoa(n)) {
		return def
	}
	return n
}
