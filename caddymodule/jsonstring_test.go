package caddymodule

import (
	"bytes"
	"encoding/json"
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
