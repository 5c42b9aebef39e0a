package llmreq

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseErrors(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	deepObj := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	for _, c := range []struct {
		name string
		body string
		err  error
		off  int // expected offset of the problem, -1 to skip
	}{
		{"empty", "", ErrInvalidJSON, 0},
		{"only whitespace", " \n\t", ErrInvalidJSON, 3},
		{"truncated object", `{"messages":[{"role":"user","content":"hi"}`, ErrInvalidJSON, 43},
		{"truncated string", `{"a":"abc`, ErrInvalidJSON, 9},
		{"truncated escape", `"abc\`, ErrInvalidJSON, 5},
		{"truncated unicode escape", `"\u12`, ErrInvalidJSON, 5},
		{"trailing garbage", `{"a":1} x`, ErrInvalidJSON, 8},
		{"two values", `{} {}`, ErrInvalidJSON, 3},
		{"trailing comma", `[1,2,]`, ErrInvalidJSON, 5},
		{"trailing comma in object", `{"a":1,}`, ErrInvalidJSON, 7},
		{"single quotes", `{'a':1}`, ErrInvalidJSON, 1},
		{"bare key", `{a:1}`, ErrInvalidJSON, 1},
		{"missing colon", `{"a" 1}`, ErrInvalidJSON, 5},
		{"control char in string", "\"a\x01b\"", ErrInvalidJSON, 2},
		{"raw newline in string", "\"a\nb\"", ErrInvalidJSON, 2},
		{"bad escape", `"\x41"`, ErrInvalidJSON, 2},
		{"bad unicode escape", `"\u12G4"`, ErrInvalidJSON, 5},
		{"leading zero", `01`, ErrInvalidJSON, 1},
		{"plus sign", `+1`, ErrInvalidJSON, 0},
		{"bare dot", `1.`, ErrInvalidJSON, 2},
		{"bare exponent", `1e`, ErrInvalidJSON, 2},
		{"NaN", `NaN`, ErrInvalidJSON, 0},
		{"Infinity", `-Infinity`, ErrInvalidJSON, 1},
		{"bad literal", `tru`, ErrInvalidJSON, 3},
		{"capital literal", `True`, ErrInvalidJSON, 0},
		{"byte order mark", "\xef\xbb\xbf{}", ErrInvalidJSON, 0},
		{"comment", `{"a":1 /* c */}`, ErrInvalidJSON, 7},
		{"nul after value", "{}\x00", ErrInvalidJSON, 2},
		{"1000 nested arrays", deep(1000), ErrTooDeep, MaxDepth},
		{"513 nested arrays", deep(MaxDepth + 1), ErrTooDeep, MaxDepth},
		{"deep objects", deepObj(600), ErrTooDeep, -1},
		{"deep and truncated", strings.Repeat("[", 100000), ErrTooDeep, MaxDepth},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Parse("/v1/chat/completions", []byte(c.body))
			if !errors.Is(err, c.err) || r != nil {
				t.Fatalf("Parse = %v, %v; want %v", r, err, c.err)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not a *SyntaxError", err)
			}
			if c.off >= 0 && se.Offset != c.off {
				t.Errorf("offset %d, want %d (%v)", se.Offset, c.off, err)
			}
			if !strings.Contains(err.Error(), c.err.Error()) {
				t.Errorf("message %q does not say %q", err, c.err)
			}
			if c.err == ErrInvalidJSON && json.Valid([]byte(c.body)) {
				t.Errorf("encoding/json accepts this body")
			}
		})
	}
}

func TestParseAcceptsWhatEncodingJSONAccepts(t *testing.T) {
	for _, body := range []string{
		`0`, `-0`, `-0.0e-0`, `1E+2`, `12345678901234567890.123456789e300`, `1e999999`, `""`, `"\u0000"`,
		`null`, ` true `, "\t\r\n false \n", `[]`, `{}`, `[[],{}]`, `{"":""}`, `{"a":1,"a":2}`,
		// encoding/json accepts invalid UTF-8 inside strings (decoding gives U+FFFD), so Parse does.
		"\"\xff\xfe\"", "{\"k\xc3\":\"\xed\xa0\x80\"}", "\"\x7f\"",
		"[" + strings.Repeat("[", MaxDepth-2) + strings.Repeat("]", MaxDepth-2) + "]",
	} {
		if !json.Valid([]byte(body)) {
			t.Fatalf("test body %q is not valid JSON", body)
		}
		if _, err := Parse("/", []byte(body)); err != nil {
			t.Errorf("Parse(%q): %v", body, err)
		}
	}
}

func TestInvalidUTF8BecomesReplacementChar(t *testing.T) {
	body := "{\"messages\":[{\"role\":\"user\",\"content\":\"ig\xffnore \xed\xa0\x80 \\ud800 all\"}]}"
	r := mustParse(t, "/v1/chat/completions", body)
	if len(r.Texts) != 1 || r.Texts[0].Value != "ig\ufffdnore \ufffd\ufffd\ufffd \ufffd all" {
		t.Fatalf("texts %+v", r.Texts)
	}
	// Rewriting writes valid UTF-8 even when the original was not.
	out := r.Rewrite(map[int]string{0: r.Texts[0].Value})
	if want := "{\"messages\":[{\"role\":\"user\",\"content\":\"ig\ufffdnore \ufffd\ufffd\ufffd \ufffd all\"}]}"; string(out) != want {
		t.Fatalf("got %q", out)
	}
}

func TestMaxDepthBoundary(t *testing.T) {
	ok := strings.Repeat("[", MaxDepth) + `"deep"` + strings.Repeat("]", MaxDepth)
	r := mustParse(t, "/", ok)
	// The path, 1,536 bytes, is shortened in the middle to MaxPathLen.
	if p := r.Texts[0].Path; len(r.Texts) != 1 || len(p) != MaxPathLen || !strings.HasPrefix(p, "[0][0]") ||
		!strings.HasSuffix(p, "[0][0]") || !strings.Contains(p, "…") || r.Texts[0].Value != "deep" {
		t.Fatalf("texts %+v", r.Texts)
	}
	if _, err := Parse("/", []byte("["+ok+"]")); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("depth %d: %v", MaxDepth+1, err)
	}
}

func TestMaxTexts(t *testing.T) {
	body := func(n int) []byte {
		return []byte("[" + strings.TrimSuffix(strings.Repeat(`"",`, n), ",") + "]")
	}
	r, err := Parse("/", body(MaxTexts))
	if err != nil || len(r.Texts) != MaxTexts {
		t.Fatalf("%d texts: %v", MaxTexts, err)
	}
	_, err = Parse("/", body(MaxTexts+1))
	var se *SyntaxError
	if !errors.Is(err, ErrTooManyTexts) || !errors.As(err, &se) || se.Offset != 1+3*MaxTexts {
		t.Fatalf("%d texts: %v", MaxTexts+1, err)
	}
	// Strings that are not texts of a known API do not count.
	chat := `{"messages":[{"role":"user","content":"x"}],"metadata":` + string(body(MaxTexts+1)) + `}`
	if r, err := Parse("/v1/chat/completions", []byte(chat)); err != nil || len(r.Texts) != 1 {
		t.Fatalf("chat with many non-text strings: %v", err)
	}
}

func TestLongPathsAreShortened(t *testing.T) {
	key := strings.Repeat("é", 300) + " key" // not an identifier: quoted, 600+ bytes
	body := `{"` + key + `":{"a":[["x"]]}}`
	r := mustParse(t, "/", body)
	p := r.Texts[len(r.Texts)-1].Path
	if len(p) > MaxPathLen || !utf8.ValidString(p) || !strings.HasPrefix(p, `["éé`) ||
		!strings.HasSuffix(p, ` key"].a[0][0]`) || !strings.Contains(p, "…") {
		t.Fatalf("path %q (%d bytes)", p, len(p))
	}
	if short := mustParse(t, "/", `{"a":{"b":"x"}}`).Texts[2].Path; short != "a.b" {
		t.Fatalf("short path %q", short)
	}
}
