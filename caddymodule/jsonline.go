package caddymodule

import (
	"bytes"
	"encoding/json"
	"errors"
)

// member is one top-level member of a JSON object line.
type member struct {
	key    string
	rawKey []byte // the key as written, quotes included
	value  []byte // the value's bytes
}

var errNotObject = errors.New("not a JSON object")

// splitObject splits a JSON object into its top-level members, keeping each
// member's bytes so that fields the command does not read are passed on
// exactly (numbers beyond float64 precision included).
func splitObject(line []byte) ([]member, error) {
	if !json.Valid(line) {
		return nil, errors.New("invalid JSON")
	}
	b := bytes.TrimSpace(line)
	if len(b) < 2 || b[0] != '{' {
		return nil, errNotObject
	}
	var out []member
	i := 1
	for {
		i = skipSpace(b, i)
		if b[i] == '}' {
			return out, nil
		}
		keyStart := i
		i = skipString(b, i)
		rawKey := b[keyStart:i]
		key, ok := jsonString(rawKey)
		if !ok {
			return nil, errors.New("invalid object key")
		}
		i = skipSpace(b, i) + 1 // ':'
		i = skipSpace(b, i)
		valStart := i
		i = skipValue(b, i)
		out = append(out, member{key: string(key), rawKey: rawKey, value: b[valStart:i]})
		i = skipSpace(b, i)
		if b[i] == ',' {
			i++
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"').
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index after the value starting at b[i]; the input
// is known to be valid JSON.
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i = skipString(b, i)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return i
}

// appendCompact appends a JSON value without insignificant white space.
func appendCompact(dst, value []byte) []byte {
	if len(value) > 0 && value[0] == '"' {
		return append(dst, value...)
	}
	var b bytes.Buffer
	json.Compact(&b, value)
	return append(dst, b.Bytes()...)
}
