package caddymodule

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// jsonString must decode exactly as encoding/json does, and refuse what it
// refuses.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\nb\"c\\"`, `"\ud83d\ude00"`, `"\ud800x"`, `"\udc00\ud800"`, "\"\xff\xfe\"", `"\u00e9\/"`, `"bad\q"`, `"ctl` + "\x01" + `"`, `"\ud83d\u0041"`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, tok []byte) {
		got, ok := jsonString(tok)
		var want string
		err := json.Unmarshal(tok, &want)
		if len(tok) == 0 || tok[0] != '"' || len(bytes.TrimSpace(tok)) != len(tok) {
			return // not a bare string token: encoding/json may accept it
		}
		if (err == nil) != ok {
			t.Fatalf("%q: ok=%v, encoding/json err=%v", tok, ok, err)
		}
		if ok && string(got) != want {
			t.Fatalf("%q: got %q, want %q", tok, got, want)
		}
	})
}

// FuzzSplitObject: a line is accepted exactly when encoding/json takes it
// as an object, and its members are encoding/json's.
func FuzzSplitObject(f *testing.F) {
	for _, s := range []string{`{"text":"a","id":1}`, ` { "a" : [1, {"b":"}"}] , "c":null } `, `{}`, `{"a":1,}`, `{"a" 1}`, `{"a":"\"}`, `[1]`, `{"a":1}x`, `{"a":tru}`, `{"a":{"b":[}}`, ` null `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		members, err := splitObject(line)
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
		for _, m := range members {
			var a, b any
			if json.Unmarshal(m.value, &a) != nil || json.Unmarshal(want[m.key], &b) != nil {
				t.Fatalf("%q: member %q does not decode", line, m.key)
			}
		}
	})
}
