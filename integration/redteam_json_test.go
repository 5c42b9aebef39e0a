package integration

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// lenientJSON makes b readable by encoding/json the way lenient servers
// read it: a leading BOM dropped, comments removed, NaN and Infinity taken
// as numbers. Strings are left as they are.
func lenientJSON(b []byte) []byte {
	b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(b)-1)
			out = append(out, b[i:j+1]...)
			i = j
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return out
			}
			i += end + 3
		case bytes.HasPrefix(b[i:], []byte("NaN")):
			out = append(out, '0')
			i += 2
		case bytes.HasPrefix(b[i:], []byte("Infinity")):
			out = append(out, '0')
			i += 7
		default:
			out = append(out, c)
		}
	}
	return out
}

// jsonFrame is one open object or array while tokenizing.
type jsonFrame struct {
	array     bool
	expectKey bool
	lastKey   string
	joined    strings.Builder // an array's texts, as a model reads consecutive parts
	pieces    int
	ints      []int
	allInts   bool
	n         int
}

// jsonViews tokenizes b (several values in a row, too, as in JSONL) and
// returns every string, key or value, at any depth and however often a key
// repeats; also each array's consecutive texts joined, the decoded form of
// inline file data, and integer arrays detokenized with toyVocab.
func jsonViews(b []byte, depth int) []string {
	var views []string
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var stack []*jsonFrame
	top := func() *jsonFrame {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	// value notes a scalar or a container opening in the current frame.
	value := func(isInt bool, id int) {
		f := top()
		if f == nil {
			return
		}
		if f.array {
			f.n++
			if isInt {
				f.ints = append(f.ints, id)
			} else {
				f.allInts = false
			}
		} else {
			f.expectKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return views
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				value(false, 0)
				stack = append(stack, &jsonFrame{array: v == '[', expectKey: v == '{', allInts: true})
			default:
				f := top()
				stack = stack[:len(stack)-1]
				if f.array && f.pieces >= 2 {
					views = append(views, f.joined.String())
				}
				if f.array && f.allInts && f.n > 0 {
					views = append(views, detokenize(f.ints))
				}
			}
		case string:
			views = append(views, v)
			f := top()
			if f != nil && !f.array && f.expectKey {
				f.lastKey, f.expectKey = v, false
				continue
			}
			views = append(views, fileViews(v, depth)...)
			switch {
			case f != nil && f.array:
				f.joined.WriteString(v)
				f.pieces++
			case f != nil && f.lastKey == "text" && len(stack) >= 2 && stack[len(stack)-2].array:
				p := stack[len(stack)-2]
				p.joined.WriteString(v)
				p.pieces++
			}
			value(false, 0)
		case json.Number:
			id, err := strconv.Atoi(v.String())
			value(err == nil, id)
		default:
			value(false, 0)
		}
	}
}
