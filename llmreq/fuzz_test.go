package llmreq

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/promptwall/promptwall/jsonstr"
)

// Seeds beyond testdata/fuzz: the paths each API is detected by, so the fuzzer explores every
// walker and not only the generic one.
var fuzzPaths = []string{
	"/v1/chat/completions", "/v1/responses", "/v1/completions", "/v1/embeddings", "/v1/messages",
	"/v1beta/models/gemini-2.0-flash:generateContent", "/api/chat", "/api/generate", "/",
	"/api/embed", "/v1/complete", "/model/m/converse",
}

// escapeDenseLiterals are literal contents (some invalid) that the scan's
// and the decoder's vector loops decide on: escapes every few bytes,
// backslash runs across their 32- and 64-byte blocks, \u and bad escapes,
// lone surrogates, invalid UTF-8, control characters.
var escapeDenseLiterals = []string{
	strings.Repeat(`a line of text, forty-odd bytes long\n`, 8),
	strings.Repeat("a", 62) + `\\\"` + strings.Repeat("b", 60) + `\\\\` + strings.Repeat("c", 30) + `\n`,
	strings.Repeat("a", 63) + `\n` + strings.Repeat("b", 31) + `\"` + strings.Repeat(`\\`, 40),
	strings.Repeat("x", 40) + `\ud800\udc00\ud800 \uD83D\uDE00` + strings.Repeat(`\t`, 30),
	strings.Repeat("x", 70) + `\q` + strings.Repeat("y", 10),
	strings.Repeat("x", 70) + "\xff\xed\xa0\x80" + strings.Repeat(`\n`, 30),
	strings.Repeat("x", 65) + "\x01" + strings.Repeat("y", 65),
	strings.Repeat("x", 64) + `\`,
}

// FuzzParse checks, for any bytes: no panic; Parse accepts exactly what json.Valid accepts
// (nesting aside); every text is a string literal of the body that decodes (by encoding/json) to
// its Value, at its Path; Rewrite(nil) is the body; rewriting every text with its own value gives
// a body that decodes to the same tree and parses to the same texts.
func FuzzParse(f *testing.F) {
	for _, p := range fuzzPaths {
		f.Add(p, []byte(`{"messages":[{"role":"user","content":"hi"}],"contents":[{"parts":[{"text":"x"}]}],"input":"i","prompt":"p"}`))
	}
	for _, lit := range escapeDenseLiterals {
		f.Add("/v1/chat/completions", []byte(`{"messages":[{"role":"user","content":"`+lit+`"}]}`))
	}
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		r, err := Parse(path, body)
		valid := json.Valid(body)
		if errors.Is(err, ErrTooDeep) || errors.Is(err, ErrTooManyTexts) {
			return // encoding/json has no such limits (it allows 10,000 levels); by design
		}
		if (err == nil) != valid {
			t.Fatalf("Parse error %v, json.Valid %v", err, valid)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidJSON) {
				t.Fatalf("error %v is neither ErrInvalidJSON nor ErrTooDeep", err)
			}
			return
		}
		if r.API.Family() == "" {
			t.Fatalf("API %q has no family", r.API)
		}
		checkTexts(t, body, r)
		if r.API == Generic {
			// The fallback misses no string and no key.
			everyLiteral(t, body, r)
		}
		if out := r.Rewrite(nil); !bytes.Equal(out, body) {
			t.Fatalf("Rewrite(nil) changed the body")
		}
		same := make(map[int]string, len(r.Texts))
		for i, x := range r.Texts {
			same[i] = x.Value
		}
		out := r.Rewrite(same)
		t1, err1 := decodeTree(body)
		t2, err2 := decodeTree(out)
		if err1 != nil || err2 != nil {
			t.Fatalf("decode: %v, %v; rewritten %q", err1, err2, out)
		}
		lossy := false
		for _, x := range r.Texts {
			lossy = lossy || x.enc&encLossy != 0
		}
		// A file whose content had invalid UTF-8 is re-encoded with the U+FFFD that was scanned.
		if !lossy && !reflect.DeepEqual(t1, t2) {
			t.Fatalf("rewriting with the same values changed the tree:\n%q\n%q", body, out)
		}
		r2, err := Parse(path, out)
		if err != nil {
			t.Fatalf("rewritten body does not parse: %v", err)
		}
		if r2.API != r.API || !sameTexts(r.Texts, r2.Texts) {
			t.Fatalf("rewritten body parses differently: %s %+v vs %s %+v", r.API, r.Texts, r2.API, r2.Texts)
		}
	})
}

func sameTexts(a, b []Text) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Path != b[i].Path || a[i].Role != b[i].Role || a[i].Value != b[i].Value {
			return false
		}
	}
	return true
}

// FuzzRewrite replaces one text with arbitrary bytes and checks that exactly that literal
// changed, to what encoding/json would write, and that the result parses to the same texts
// except the replaced one, whose Value is the replacement (invalid UTF-8 made U+FFFD).
func FuzzRewrite(f *testing.F) {
	f.Add("/v1/chat/completions", []byte(`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"there"}]}`), uint(0), "new \"text\" \u2028 <&>")
	f.Add("/v1/messages", []byte(`{"system":"s","messages":[{"role":"user","content":[{"type":"text","text":"a\u00e9"}]}]}`), uint(1), "\xff\x00")
	for _, lit := range escapeDenseLiterals {
		f.Add("/v1/chat/completions", []byte(`{"messages":[{"role":"user","content":"`+lit+`"}]}`), uint(0), strings.Repeat("line\n\"q\"\\ \x01", 20))
	}
	f.Fuzz(func(t *testing.T, path string, body []byte, which uint, repl string) {
		r, err := Parse(path, body)
		if err != nil || len(r.Texts) == 0 {
			return
		}
		i := int(which % uint(len(r.Texts)))
		x := r.Texts[i]
		out := r.Rewrite(map[int]string{i: repl})
		if got := spliced(r, map[int]string{i: repl}); !bytes.Equal(got, out) {
			t.Fatalf("the splices make %q, Rewrite %q", got, out)
		}
		if x.Key || x.IsFile() || r.API == Generic {
			// A key's replacement may change the body's shape, a file's is encoded as the file
			// came, and in a body no API fits every string is a text, discriminators of the
			// walkers that also ran included: only that literal changed, and the body is JSON.
			if !bytes.Equal(out[:x.start], body[:x.start]) || !bytes.Equal(out[len(out)-(len(body)-int(x.end)):], body[x.end:]) {
				t.Fatalf("rewrite changed more than text %d:\n got  %q\n body %q", i, out, body)
			}
			if !json.Valid(out) {
				t.Fatalf("rewritten body is not JSON: %q", out)
			}
			r2, err := Parse(path, out)
			if err != nil {
				t.Fatal(err)
			}
			checkTexts(t, out, r2)
			return
		}
		lit := jsonstr.Append(nil, repl, false)
		if repl == x.Value && utf8.Valid(body[x.start:x.end]) {
			lit = body[x.start:x.end] // an unchanged text keeps its literal
		}
		want := append(append(append([]byte{}, body[:x.start]...), lit...), body[x.end:]...)
		if !bytes.Equal(out, want) {
			t.Fatalf("rewrite changed more than text %d:\n got  %q\n want %q", i, out, want)
		}
		var norm string
		if err := json.Unmarshal(lit, &norm); err != nil {
			t.Fatalf("encoded replacement %q does not decode: %v", lit, err)
		}
		// encoding/json would write the same literal.
		lit = jsonstr.Append(nil, repl, false)
		var enc bytes.Buffer
		e := json.NewEncoder(&enc)
		e.SetEscapeHTML(false)
		if err := e.Encode(repl); err != nil || !bytes.Equal(bytes.TrimSuffix(enc.Bytes(), []byte("\n")), lit) {
			t.Fatalf("literal %q, encoding/json writes %q", lit, enc.Bytes())
		}
		r2, err := Parse(path, out)
		if err != nil {
			t.Fatalf("rewritten body does not parse: %v", err)
		}
		if r2.API != r.API || len(r2.Texts) != len(r.Texts) {
			t.Fatalf("rewritten body parses differently: %s %d texts vs %s %d", r.API, len(r.Texts), r2.API, len(r2.Texts))
		}
		for j := range r.Texts {
			a, b := r.Texts[j], r2.Texts[j]
			wantVal := a.Value
			if j == i {
				wantVal = norm
			}
			if a.Path != b.Path || a.Role != b.Role || b.Value != wantVal {
				t.Fatalf("text %d: %+v became %+v (want value %q)", j, a, b, wantVal)
			}
		}
		checkTexts(t, out, r2)
	})
}

// everyLiteral checks that every string literal of body, key or value, is a text of r.
func everyLiteral(t *testing.T, body []byte, r *Request) {
	t.Helper()
	found := map[int32]bool{}
	for _, x := range r.Texts {
		found[x.start] = true
	}
	tp := &tape{}
	if err := tp.scan(body); err != nil {
		t.Fatal(err)
	}
	for _, n := range tp.nodes {
		if n.kind() == kindString && !found[int32(n.start())] {
			t.Fatalf("generic: the literal at %d is not a text", n.start())
		}
	}
}
