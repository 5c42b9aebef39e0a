package llmreq

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/promptwall/promptwall/jsonstr"
)

func mustParse(t *testing.T, path, body string) *Request {
	t.Helper()
	r, err := Parse(path, []byte(body))
	if err != nil {
		t.Fatalf("Parse(%q): %v", body, err)
	}
	return r
}

func TestRewriteKeepsEveryOtherByte(t *testing.T) {
	// Big numbers, odd whitespace, escapes in untouched strings, key order and a duplicate key:
	// all of it must come back byte for byte around the replaced texts.
	body := "{ \"seed\" :\t12345678901234567890.123456789e300 ,\r\n" +
		"  \"model\":\"caf\\u00e9\\/\\ud83d\\ude00\",\n" +
		"\"messages\" : [ {\"role\":\"system\" ,\"content\":\"keep \\u00e9 me\"},\n" +
		"\t{ \"content\" : \"repl\\u00e9ce \\\"me\\\"\", \"role\" : \"user\", \"role\":\"user\" } ],\n" +
		"  \"temperature\": -0.0e-0, \"stop\": [ ] , \"metadata\":{ },\"seed\":1E+2 }\n"
	r := mustParse(t, "/v1/chat/completions", body)
	if len(r.Texts) != 2 || r.Texts[1].Value != `repléce "me"` || r.Texts[0].Value != "keep é me" {
		t.Fatalf("texts: %+v", r.Texts)
	}
	out := rewrite(t, r, map[int]string{1: "new <b>&</b> \"text\"\n\u2028é"})
	want := strings.Replace(body, `"repl\u00e9ce \"me\""`, `"new <b>&</b> \"text\"\n\u2028é"`, 1)
	if string(out) != want {
		t.Fatalf("rewrite:\n got  %q\n want %q", out, want)
	}
	r2 := mustParse(t, "/v1/chat/completions", string(out))
	if r2.Texts[1].Value != "new <b>&</b> \"text\"\n\u2028é" {
		t.Fatalf("re-parsed value %q", r2.Texts[1].Value)
	}

	// Replacing the first and the last of several texts, and a text with itself.
	r = mustParse(t, "/", `["a",  "b" ,"c\u0041"]`)
	if got := string(rewrite(t, r, map[int]string{0: "A", 2: "C", 7: "ignored", -1: "ignored"})); got != `["A",  "b" ,"C"]` {
		t.Fatalf("got %s", got)
	}
	if got := string(rewrite(t, r, map[int]string{1: "b"})); got != `["a",  "b" ,"c\u0041"]` {
		t.Fatalf("got %s", got)
	}
	if got := string(rewrite(t, r, map[int]string{2: "cA"})); got != `["a",  "b" ,"c\u0041"]` {
		t.Fatalf("a text rewritten with its own value keeps its literal: %s", got)
	}
	if got := string(rewrite(t, r, map[int]string{2: "cB"})); got != `["a",  "b" ,"cB"]` {
		t.Fatalf("a changed text is re-encoded: %s", got)
	}
	// Callers may filter, reorder or repeat Texts: indexes are those of Texts as it is now, and
	// the splices still go in body order, each literal once.
	r.Texts = []Text{r.Texts[2], r.Texts[0], r.Texts[2]}
	if got := string(rewrite(t, r, map[int]string{0: "C", 1: "A", 2: "C2"})); got != `["A",  "b" ,"C"]` {
		t.Fatalf("after reordering Texts: %s", got)
	}
	r.Texts = append(r.Texts, Text{Value: "made by the caller"})
	if got := string(rewrite(t, r, map[int]string{3: "X"})); got != `["a",  "b" ,"c\u0041"]` {
		t.Fatalf("a Text the caller made must not be spliced: %s", got)
	}
}

// spliced is Rewrite's body made from AppendSplices, whose literals it
// appends after bytes of its own.
func spliced(r *Request, repl map[int]string) []byte {
	return splicedEdits(r, repl, nil)
}

// splicedEdits is spliced, with edits.
func splicedEdits(r *Request, repl map[int]string, edits map[int][]Edit) []byte {
	lits, sps := r.AppendSplices([]byte("prefix"), repl, edits)
	var out []byte
	prev := 0
	for _, sp := range sps {
		out = append(append(out, r.body[prev:sp.Start]...), lits[sp.LitStart:sp.LitEnd]...)
		prev = sp.End
	}
	return append(out, r.body[prev:]...)
}

// rewrite is r.Rewrite(repl), which the body AppendSplices describes must
// equal.
func rewrite(t *testing.T, r *Request, repl map[int]string) []byte {
	t.Helper()
	out := r.Rewrite(repl)
	if got := spliced(r, repl); !bytes.Equal(got, out) {
		t.Fatalf("the splices make %q, Rewrite %q", got, out)
	}
	return out
}

func TestRewriteEmptyReturnsOriginal(t *testing.T) {
	body := []byte(` {"messages":[{"role":"user","content":"x"}]} `)
	r, err := Parse("/v1/chat/completions", body)
	if err != nil {
		t.Fatal(err)
	}
	for _, repl := range []map[int]string{nil, {}} {
		out := r.Rewrite(repl)
		if !bytes.Equal(out, body) || &out[0] != &body[0] {
			t.Fatalf("Rewrite(%v) did not return the original bytes", repl)
		}
	}
}

func TestRewriteDuplicateKeys(t *testing.T) {
	// Both duplicates are texts, so a sanitizer can clean the one the upstream will believe,
	// whichever that is.
	body := `{"messages":[{"role":"user","content":"one","content":"two"}]}`
	r := mustParse(t, "/v1/chat/completions", body)
	if len(r.Texts) != 2 {
		t.Fatalf("texts: %+v", r.Texts)
	}
	got := string(r.Rewrite(map[int]string{0: "1", 1: "2"}))
	if got != `{"messages":[{"role":"user","content":"1","content":"2"}]}` {
		t.Fatalf("got %s", got)
	}
}

func TestRewriteMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " backslash \ slash /`, "\x00\x01\x07\b\f\n\r\t\x1f\x7f",
		"<script>&amp;</script>", "\u2028\u2029\u2027\u202a", "é中😀", "\xff\xfe bad \xed\xa0\x80 utf8 \xc3",
		"\ufffd\ufeff",
	} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(b.String(), "\n")
		if got := string(jsonstr.Append(nil, s, false)); got != want {
			t.Errorf("jsonstr.Append(%q, false) = %s, encoding/json writes %s", s, got, want)
		}
		r := mustParse(t, "/", `{"k": "x"}`)
		out := r.Rewrite(map[int]string{0: s})
		if !utf8.Valid(out) {
			t.Errorf("rewrite with %q is not valid UTF-8", s)
		}
	}
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, lit := range []string{
		`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`, `"\ud83d\u0041"`, `"\ud83dx"`, `"\ud83d\ud83d\ude00"`,
		`"\uDBFF\uDFFF"`, `"\u0000"`, `"\/\b\f\n\r\t\"\\"`, "\"\xff\xc3(\xed\xa0\x80\xf4\x90\x80\x80\"",
		`"\u00e9\u00E9"`, "\"\xe2\x80\"", "\"ok \xf0\x9f\x98\x80\"",
	} {
		var want string
		if err := json.Unmarshal([]byte(lit), &want); err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		r := mustParse(t, "/", lit)
		if len(r.Texts) != 1 || r.Texts[0].Value != want {
			t.Errorf("%q: got %+v, want %q", lit, r.Texts, want)
		}
	}
}
