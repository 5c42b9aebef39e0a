package llmreq

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// TestFileTypes: files are typed by package filetext's tables, which are the union of
// what llmreq and the firewall read as text; each case is a file llmreq's own tables
// listed as a Document.
func TestFileTypes(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	gemini := func(mt, data string) string {
		return `{"contents":[{"parts":[{"inlineData":{"mimeType":"` + mt + `","data":"` + b64(data) + `"}}]}]}`
	}
	for _, c := range []struct {
		name, path, body string
		want             string // the file text's value
	}{
		{"application/x-jsonl is text", "/v1beta/models/m:generateContent",
			gemini("application/x-jsonl", `{"a":"obey me"}`), `{"a":"obey me"}`},
		{"every message/ type is text", "/v1beta/models/m:generateContent",
			gemini("message/partial", "Subject: obey me"), "Subject: obey me"},
		{"binary/octet-stream is sniffed", "/v1beta/models/m:generateContent",
			gemini("binary/octet-stream", "plain words"), "plain words"},
		{"latin-1 by an alias", "/v1beta/models/m:generateContent",
			gemini("text/plain;charset=IBM819", "caf\xe9"), "café"},
		{"windows-1252 by an alias", "/v1beta/models/m:generateContent",
			gemini("text/plain;charset=x-cp1252", "\x93hi\x94"), "“hi”"},
		{"text named as an image is text", "/v1/chat/completions",
			`{"messages":[{"role":"user","content":[{"type":"file","file":{"filename":"x.bmp","file_data":"` + b64("obey me") + `"}}]}]}`,
			"obey me"},
		{"text named as a PNG is text", "/v1/responses",
			`{"input":[{"role":"user","content":[{"type":"input_file","filename":"x.png","file_data":"` + b64("obey me") + `"}]}]}`,
			"obey me"},
		{"a file-shaped object typed by a .rst name", "/model/m/converse",
			`{"messages":[{"role":"user","content":[{"document":{"name":"notes.rst","source":{"bytes":"` + b64("obey me") + `"}}}]}]}`,
			"obey me"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := mustParse(t, c.path, c.body)
			var got []string
			for _, x := range r.Texts {
				if x.IsFile() {
					got = append(got, x.Value)
				}
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", []string{c.want}) {
				t.Errorf("file texts %q, want [%q]; documents %+v", got, c.want, r.Documents)
			}
			if len(r.Documents) != 0 {
				t.Errorf("documents %+v, want none", r.Documents)
			}
		})
	}
}

// TestRewriteWindows1252Undefined: a windows-1252 byte the charset leaves undefined is
// decoded to the C1 control of its value and written back as that byte, not as '?'.
func TestRewriteWindows1252Undefined(t *testing.T) {
	body := `{"contents":[{"parts":[{"inlineData":{"mimeType":"text/plain;charset=windows-1252","data":"` +
		base64.StdEncoding.EncodeToString([]byte("a\x81\x9db")) + `"}}]}]}`
	r := mustParse(t, "/v1beta/models/m:generateContent", body)
	if len(r.Texts) != 1 || r.Texts[0].Value != "a\u0081\u009db" {
		t.Fatalf("texts %+v", r.Texts)
	}
	x := r.Texts[0]
	out := string(r.Rewrite(map[int]string{0: x.Value + "c"}))
	lit := strings.Trim(out[x.start:len(out)-(len(body)-int(x.end))], `"`)
	got, err := base64.StdEncoding.DecodeString(lit)
	if err != nil || string(got) != "a\x81\x9dbc" {
		t.Fatalf("rewritten content %q (%v), want %q", got, err, "a\x81\x9dbc")
	}
}

// TestNamedMedia: a file named as media whose bytes are not text is neither a text nor a
// document, whatever the bytes (an image, unknown bytes, base64 that does not decode).
func TestNamedMedia(t *testing.T) {
	for _, c := range []struct{ name, filename, data string }{
		{"a PNG", "x.png", base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))},
		{"a BMP", "x.bmp", base64.StdEncoding.EncodeToString([]byte("BM\x00\x00\x01\x02\x00\x00"))},
		{"unknown bytes", "clip.mkv", base64.StdEncoding.EncodeToString([]byte("\x00\x01\x02\x03 not media"))},
		{"invalid base64", "x.avi", "!!!!"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := `{"messages":[{"role":"user","content":[{"type":"file","file":{"filename":"` + c.filename + `","file_data":"` + c.data + `"}}]}]}`
			r := mustParse(t, "/v1/chat/completions", body)
			for _, x := range r.Texts {
				if x.IsFile() {
					t.Errorf("file text %s: %q", x.Path, x.Value)
				}
			}
			if len(r.Documents) != 0 {
				t.Errorf("documents %+v, want none", r.Documents)
			}
		})
	}
}
