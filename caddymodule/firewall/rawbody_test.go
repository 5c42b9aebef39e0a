package firewall

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRawUploads: a body declared as an upload is read as what it is: JSON
// is scanned as JSON whatever the header, text and PDFs are scanned,
// media passes unbuffered.
func TestRawUploads(t *testing.T) {
	fx := newFixture(t, &Firewall{MaxBody: 4096})
	malChat := chat(msg("user", malText))
	binary := "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00\x01\x02", 3000) + malText // above max_body
	for _, tc := range []struct {
		name, path, ctype, body string
		status                  int // 0: forwarded as sent
		code, verdict           string
	}{
		{"json as octet-stream", "/api/chat", "application/octet-stream", malChat, 400, "prompt injection detected", ""}, // Ollama's shape: a message
		{"json as image", "/v1/chat/completions", "image/png", malChat, 400, CodePromptInjection, ""},
		{"json as audio with BOM and space", "/v1/chat/completions", "audio/wav", "\xEF\xBB\xBF \n" + malChat, 400, "", ""},
		{"json as video, invalid", "/v1/chat/completions", "video/mp4", `{"messages": [`, 400, "invalid_json", ""},
		{"utf-16 json as octet-stream", "/completion", "application/octet-stream", "\xFF\xFE{\x00}\x00", 400, "invalid_json", ""},
		{"safe json as octet-stream", "/api/generate", "application/octet-stream", `{"prompt": "hi"}`, 0, "", "safe"},
		{"text to gemini upload", "/upload/v1beta/files", "", "Quarterly notes. " + malText, 400, CodePromptInjection, ""},
		{"text as image", "/upload/v1beta/files", "image/jpeg", malText, 400, CodePromptInjection, ""},
		{"safe text", "/upload/v1beta/files", "text/plain", "Quarterly notes.", 0, "", "safe"},
		{"utf-16 text", "/upload/v1beta/files", "application/octet-stream", "\xFE\xFF\x00I\x00g", 415, "unsupported_charset", ""},
		{"us-ascii with other bytes", "/upload/v1beta/files", "text/plain; charset=us-ascii", "Ign\xf6re", 415, "unsupported_charset", ""},
		{"pdf without extractor", "/upload/v1beta/files", "application/pdf", "%PDF-1.4\n", 415, "unscannable_file", ""},
		{"media above max_body", "/upload/v1beta/files", "image/png", binary, 0, "", ""},
		{"binary as octet-stream", "/api/blobs/sha256:0", "application/octet-stream", "GGUF\x03\x00" + strings.Repeat("\x00\x01\x02", 100) + malText, 0, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
			if tc.ctype != "" {
				r.Header.Set("Content-Type", tc.ctype)
			}
			res := fx.do(t, r)
			if tc.status == 0 {
				if !res.up.called || string(res.up.body) != tc.body || res.up.header.Get(HeaderVerdict) != tc.verdict {
					t.Fatalf("not forwarded as sent: %d %s, verdict %q", res.rec.Code, res.rec.Body, res.up.header.Get(HeaderVerdict))
				}
				return
			}
			if res.up.called || res.rec.Code != tc.status || !strings.Contains(res.rec.Body.String(), tc.code) {
				t.Fatalf("got %d %s (forwarded %v), want %d %s", res.rec.Code, res.rec.Body, res.up.called, tc.status, tc.code)
			}
		})
	}
}

// TestRawTextSanitized: a suspicious raw text goes on sanitized, as
// identity, without the client's digests; a logged one as it came.
func TestRawTextSanitized(t *testing.T) {
	fx := newFixture(t, &Firewall{})
	body := "Notes. " + suspText
	enc := compress(t, "gzip", []byte(body))
	r := httptest.NewRequest(http.MethodPost, "/upload/v1beta/files", bytes.NewReader(enc))
	r.Header.Set("Content-Type", "text/plain")
	r.Header.Set("Content-Encoding", "gzip")
	r.Header.Set("X-Goog-Hash", "md5=abc")
	res := fx.do(t, r)
	if !res.up.called || string(res.up.body) != "Notes. "+suspSan {
		t.Fatalf("got %d %q", res.rec.Code, res.up.body)
	}
	if res.up.header.Get("Content-Encoding") != "" || res.up.header.Get("X-Goog-Hash") != "" {
		t.Errorf("headers %v", res.up.header)
	}

	shadow := newFixture(t, &Firewall{OnSuspicious: "log"})
	r = httptest.NewRequest(http.MethodPost, "/upload/v1beta/files", bytes.NewReader(enc))
	r.Header.Set("Content-Type", "text/plain")
	r.Header.Set("Content-Encoding", "gzip")
	res = shadow.do(t, r)
	if !res.up.called || !bytes.Equal(res.up.body, enc) || res.up.header.Get(HeaderVerdict) != "suspicious" {
		t.Fatalf("logged encoded text not forwarded as sent")
	}
}
