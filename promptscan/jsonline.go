package promptscan

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/promptwall/promptwall/jsonstr"
)

// member is one top-level member of a JSON object line.
type member struct {
	key    []byte // decoded: a slice of the line unless the key has escapes
	rawKey []byte // the key as written, quotes included
	value  []byte // the value's bytes, valid JSON (a string literal is checked)
	// For a string under a key isText names: its value (a slice of the line
	// or of the buffer splitObject was given) and whether the literal is
	// encoding/json's own form of it (jsonstr.DecodeAt). The texts are read
	// while the line is split, in the same pass that finds their end.
	text      []byte
	canonical bool
}

var (
	errNotObject = errors.New("not a JSON object")
	errInvalid   = errors.New("invalid JSON")
)

// splitObject splits a JSON object into its top-level members, keeping each
// member's bytes so that fields the command does not read are passed on
// exactly (numbers beyond float64 precision included). It accepts exactly
// the objects encoding/json accepts: strings are checked by jsonstr.End or
// DecodeAt, other values by json.Valid. The members are appended to out. A
// text that must be copied (it has escapes) goes into *textBuf, grown as
// needed; should the line hold several, only the last one's text is kept.
func splitObject(b []byte, out []member, textBuf *[]byte) ([]member, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		if json.Valid(b) {
			return nil, errNotObject
		}
		return nil, errInvalid
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			ks := i
			var key []byte
			if i, key, _, _ = jsonstr.DecodeAt(nil, b, i, false); i < 0 {
				return nil, errInvalid
			}
			rawKey := b[ks:i]
			if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
				return nil, errInvalid
			}
			i = skipSpace(b, i+1)
			vs := i
			var text []byte
			canonical := false
			if i < len(b) && b[i] == '"' && isText(key) {
				var copied bool
				if i, text, copied, canonical = jsonstr.DecodeAt(*textBuf, b, i, true); i < 0 {
					return nil, errInvalid
				}
				if copied {
					*textBuf = text[:0] // keep the grown buffer for the next line
				}
			} else if i < len(b) && b[i] == '"' {
				if i = jsonstr.End(b, i); i < 0 {
					return nil, errInvalid
				}
			} else {
				i = skipValue(b, i)
				if !json.Valid(b[vs:i]) {
					return nil, errInvalid
				}
			}
			out = append(out, member{key: key, rawKey: rawKey, value: bytes.TrimRight(b[vs:i], " \t\r\n"), text: text, canonical: canonical})
			i = skipSpace(b, i)
			if i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
				continue
			}
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			return nil, errInvalid
		}
	}
	if skipSpace(b, i) != len(b) {
		return nil, errInvalid
	}
	return out, nil
}

// isText says whether a member's key names the text to scan.
func isText(key []byte) bool { return string(key) == "text" || string(key) == "text_base64" }

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index after the value starting at b[i] (not a
// string). It only finds the value's extent; the caller checks it with
// json.Valid.
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			if i = jsonstr.End(b, i); i < 0 {
				return len(b) // an invalid string: json.Valid will say so
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

// appendCompact appends a JSON value without insignificant white space,
// using scratch as it needs.
func appendCompact(dst, value []byte, scratch *bytes.Buffer) []byte {
	if len(value) > 0 && value[0] == '"' {
		return append(dst, value...)
	}
	scratch.Reset()
	json.Compact(scratch, value)
	return append(dst, scratch.Bytes()...)
}
