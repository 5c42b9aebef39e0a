package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Decode must decode exactly as encoding/json does, and refuse what it
// refuses; End must agree with it on where a literal ends.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\nb\"c\\"`, `"\ud83d\ude00"`, `"\ud800x"`, `"\udc00\ud800"`, "\"\xff\xfe\"", `"\u00e9\/"`, `"bad\q"`, `"ctl` + "\x01" + `"`, `"\ud83d\u0041"`, `"`, `"<a&b>\u2028"`, `"\u003c\u0026\u001f\u0008 \u2029"`, `"a\"\\\b\f\n\r\t\u0000\u001F"`, "\"\xe2\x80\xa8 \xef\xbf\xbd\"", `"\ufffd\u00e9\uD83D\uDE00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, tok []byte) {
		if len(tok) == 0 || tok[0] != '"' || len(bytes.TrimSpace(tok)) != len(tok) {
			return // not a bare string literal: encoding/json may accept it
		}
		got, ok := Decode(nil, tok)
		var want string
		err := json.Unmarshal(tok, &want)
		if (err == nil) != ok {
			t.Fatalf("%q: ok=%v, encoding/json err=%v", tok, ok, err)
		}
		if !ok {
			return
		}
		if string(got) != want {
			t.Fatalf("%q: got %q, want %q", tok, got, want)
		}
		// Append writes what encoding/json writes, with and without HTML escaping.
		m, _ := json.Marshal(want)
		if a := Append(nil, want, true); string(a) != string(m) {
			t.Fatalf("Append(%q, html) = %s, encoding/json %s", want, a, m)
		}
		// Canonical says exactly when tok is what Append writes.
		for _, html := range []bool{true, false} {
			if c, same := Canonical(tok, html), string(Append(nil, want, html)) == string(tok); c != same {
				t.Fatalf("Canonical(%s, html=%v) = %v; Append writes it: %v", tok, html, c, same)
			}
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(want)
		if a := Append(nil, want, false); string(a) != string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))) {
			t.Fatalf("Append(%q) = %s, encoding/json %s", want, a, b.Bytes())
		}
	})
}
