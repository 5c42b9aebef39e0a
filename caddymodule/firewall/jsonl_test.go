package firewall

import (
	"strings"
	"testing"
)

// TestJSONLUnits: each line is parsed as the request it is, and the units'
// offsets cover exactly the bytes their replacement is spliced over.
func TestJSONLUnits(t *testing.T) {
	body := chat(msg("user", "hi"))
	for _, tc := range []struct {
		name, data string
		spans      []string // data[start:end] of each unit
		apis       []string
		code       string
	}{
		{"batch line", `{"custom_id": "a", "url": "/v1/chat/completions", "body": ` + body + "}\n",
			[]string{body}, []string{"openai.chat"}, ""},
		{"body before url, spaces", "  {\"body\" :  " + `{"input": "x"}` + ` , "url": "/v1/embeddings"}  `,
			[]string{`{"input": "x"}`}, []string{"openai.embeddings"}, ""},
		{"two bodies", `{"body": {"a": "1"}, "body": {"prompt": "2"}, "url": "/v1/completions"}`,
			[]string{`{"a": "1"}`, `{"prompt": "2"}`}, []string{"json", "openai.completions"}, ""},
		{"custom_id holding the body's bytes", `{"custom_id": "{}", "url": "/v1/x", "body": {}}`,
			[]string{`{}`}, []string{"json"}, ""},
		{"not a batch line", `{"messages": [{"role": "user", "content": "x"}]}` + "\n\n" + `["a"]`,
			[]string{`{"messages": [{"role": "user", "content": "x"}]}`, `["a"]`}, []string{"openai.chat", "json"}, ""},
		{"body not an object", `{"url": "/v1/chat/completions", "body": "text"}`,
			[]string{`{"url": "/v1/chat/completions", "body": "text"}`}, []string{"json"}, ""},
		{"blank lines only", "\n \r\n\t\n", nil, nil, ""},
		{"invalid line", "{}\n{", nil, nil, "invalid_jsonl"},
		{"trailing garbage", `{"a": 1} x`, nil, nil, "invalid_jsonl"},
		{"url twice", `{"url": "/a", "url": "/b", "body": {}}`, nil, nil, "invalid_jsonl"},
		{"too deep", strings.Repeat("[", 600) + strings.Repeat("]", 600), nil, nil, "invalid_json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			units, fe := jsonlUnits(3, "file", []byte(tc.data))
			if tc.code != "" {
				if fe == nil || fe.code != tc.code {
					t.Fatalf("got %v, want %s", fe, tc.code)
				}
				return
			}
			if fe != nil || len(units) != len(tc.spans) {
				t.Fatalf("got %d units, %v", len(units), fe)
			}
			for i, u := range units {
				if got := tc.data[u.start:u.end]; got != tc.spans[i] || u.part != 3 || string(u.req.API) != tc.apis[i] {
					t.Errorf("unit %d: %q part %d api %s", i, got, u.part, u.req.API)
				}
			}
		})
	}
}

func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		mediaType, filename, head string
		want                      fileKind
		refused                   bool
	}{
		{"text/plain", "", "hello", fileText, false},
		{"", "notes.MD", "\x00\x01", fileText, false},
		{"application/json", "", "{}", fileText, false},
		{"application/vnd.api+json", "", "{}", fileText, false},
		{"application/pdf", "", "", filePDF, false},
		{"application/octet-stream", "scan.pdf", "", filePDF, false},
		{"application/octet-stream", "", "%PDF-1.7", filePDF, false},
		{"image/png", "a.png", "\x89PNG\r\n\x1a\n\x00", fileMedia, false},
		{"image/png", "a.png", "plain words", fileText, false},
		{"audio/mpeg", "a.mp3", "ID3\x03\x00\x00", fileMedia, false},
		{"application/zip", "a.docx", "PK\x03\x04\x00", fileOther, false},
		{"", "", "\x00\x01\x02", fileOther, false},
		{"text/plain", "", "\xFF\xFEh\x00", 0, true},
		{"application/octet-stream", "", "\x00\x00\xFE\xFF", 0, true},
	} {
		got, fe := kindOf(tc.mediaType, tc.filename, []byte(tc.head))
		if (fe != nil) != tc.refused || !tc.refused && got != tc.want {
			t.Errorf("kindOf(%q, %q, %q) = %d, %v; want %d refused %v", tc.mediaType, tc.filename, tc.head, got, fe, tc.want, tc.refused)
		}
	}
}
