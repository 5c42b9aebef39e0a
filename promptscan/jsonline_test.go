package promptscan

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzSplitObject: a line is accepted exactly when encoding/json takes it
// as an object, and its members are encoding/json's.
func FuzzSplitObject(f *testing.F) {
	for _, s := range []string{`{"text":"a","id":1}`, `{"text":"a\nb","text_base64":"YQ==","text":"\u00e9\"x"}`, ` { "a" : [1, {"b":"}"}] , "c":null } `, `{}`, `{"a":1,}`, `{"a" 1}`, `{"a":"\"}`, `[1]`, `{"a":1}x`, `{"a":tru}`, `{"a":{"b":[}}`, ` null `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var buf []byte
		members, err := splitObject(line, nil, &buf)
		var want map[string]json.RawMessage
		werr := json.Unmarshal(line, &want)
		if werr == nil && want == nil {
			werr = errors.New("null is not an object")
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: splitObject err=%v, encoding/json err=%v", line, err, werr)
		}
		if err != nil {
			return
		}
		var last *member // the text splitObject keeps
		for i, m := range members {
			var a, b any
			if json.Unmarshal(m.value, &a) != nil || json.Unmarshal(want[string(m.key)], &b) != nil {
				t.Fatalf("%q: member %q does not decode", line, m.key)
			}
			if isText(m.key) && m.value[0] == '"' {
				last = &members[i]
			}
		}
		if last != nil {
			var s string
			json.Unmarshal(last.value, &s)
			if string(last.text) != s {
				t.Fatalf("%q: text %q, encoding/json %q", line, last.text, s)
			}
		}
	})
}
