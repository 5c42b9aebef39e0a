package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"
)

// End and DecodeAt must take and decode a literal exactly as
// encoding/json does, and refuse what it refuses.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\nb\"c\\"`, `"\ud83d\ude00"`, `"\ud800x"`, `"\udc00\ud800"`, "\"\xff\xfe\"", `"\u00e9\/"`, `"bad\q"`, `"ctl` + "\x01" + `"`, `"\ud83d\u0041"`, `"`, `"<a&b>\u2028"`, `"\u003c\u0026\u001f\u0008 \u2029"`, `"a\"\\\b\f\n\r\t\u0000\u001F"`, "\"\xe2\x80\xa8 \xef\xbf\xbd\"", `"\ufffd\u00e9\uD83D\uDE00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, tok []byte) {
		if len(tok) == 0 || tok[0] != '"' || len(bytes.TrimSpace(tok)) != len(tok) {
			return // not a bare string literal: encoding/json may accept it
		}
		ok := End(tok, 0) == len(tok)
		var got []byte
		if ok {
			_, got, _, _ = DecodeAt(nil, tok, 0, true)
		}
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
		// The wanted text may hold invalid UTF-8 when got did: a byte
		// slice is written as the string of the same bytes is.
		if a, b := Append(nil, []byte(tok), true), Append(nil, string(tok), true); string(a) != string(b) {
			t.Fatalf("Append(%q) of a byte slice = %s, of a string %s", tok, a, b)
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

// FuzzDecodeAt: the one-pass reader agrees with End and Unquote on where a
// literal ends and its value, copies it exactly when it has an escape or
// invalid UTF-8, and says it is
// canonical exactly when Append writes the value back as the literal, with
// and without HTML escaping.
func FuzzDecodeAt(f *testing.F) {
	for _, s := range []string{`"abc" tail`, `"a\nb\"c\\" x`, `"\ud83d\ude00"`, `"\ud800x"`, `"\udc00\ud800"`, "\"\xff\xfe\"", `"\u00e9\/"`,
		`"bad\q"`, `"ctl` + "\x01" + `"`, `"\ud83d\u0041"`, `"`, `"<a&b>\u2028"`, `"\u003c\u0026\u001f\u0008 \u2029"`,
		`"abcdefghijklmnop\"qrstuvwxyz0123456789"`, "\"é€😀 \xe2\x80\xa8 plain\"", `"\uD83D\uDE00\u00E9"`, `"\ud83d\uzzzz"`, `"a\/b"`, `no quote`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, html := range []bool{true, false} {
			end, v, copied, canonical := DecodeAt([]byte("scratch"), b, 0, html)
			if want := End(b, 0); end != want {
				t.Fatalf("%q: end %d, End %d", b, end, want)
			}
			if end < 0 {
				continue
			}
			lit := b[:end]
			s := lit[1 : len(lit)-1]
			wantV := Unquote(nil, s)
			wantCopied := bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s)
			if string(v) != string(wantV) || copied != wantCopied {
				t.Fatalf("%q: value %q copied %v, Unquote %q, copy %v", lit, v, copied, wantV, wantCopied)
			}
			if utf8.Valid(s) {
				if u := UnquoteValid(nil, s); string(u) != string(wantV) {
					t.Fatalf("%q: UnquoteValid %q, Unquote %q", lit, u, wantV)
				}
			}
			if same := string(Append(nil, string(wantV), html)) == string(lit); canonical != same {
				t.Fatalf("%q (html %v): canonical %v; Append writes it back: %v", lit, html, canonical, same)
			}
		}
	})
}

// TestUnquoteInvalid: a literal with a bad or cut escape, which callers
// must not pass, still ends: the rest is kept as it is.
func TestUnquoteInvalid(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`ab\q`, `ab\q`},
		{`ab\`, `ab\`},
		{`a\nb\u12`, "a\nb\\u12"},
	} {
		done := make(chan string, 1)
		go func() { done <- string(Unquote(nil, []byte(c.in))) }()
		select {
		case got := <-done:
			if got != c.want {
				t.Errorf("Unquote(%q) = %q, want %q", c.in, got, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Unquote(%q) did not return", c.in)
		}
	}
}
