package firewall

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDeclaredMediaRead: a file declared as media is read as text when its
// name says text, when its bytes are mostly text past a short header, or
// when the upload's metadata declares text; declared media that is no
// known media format is counted as unscanned.
func TestDeclaredMediaRead(t *testing.T) {
	fx := newFixture(t, &Firewall{})
	strict := newFixture(t, &Firewall{UnscannableFiles: "refuse"})
	nul := "\x00" + malText + "\n"
	magic := "\x89PNG\r\n\x1a\n" + malText + "\n"
	binary := "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00\x01\x02\xfe", 200) + malText // media by its bytes
	notMedia := strings.Repeat("\x00\x01\x02\xfe", 200) + malText                     // neither media nor text
	related := func(meta, ctype, data string) string {
		return "--BB\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n" + meta +
			"\r\n--BB\r\nContent-Type: " + ctype + "\r\n\r\n" + data + "\r\n--BB--\r\n"
	}
	for _, tc := range []struct {
		name, path, ctype, body string
		status                  int    // 0: forwarded as sent
		unscanned               string // Prompt-Firewall-Unscanned when forwarded
	}{
		{"txt name, nul start", "/v1/files", "", formBody(testBoundary, field("purpose", "assistants"), file("file", "notes.txt", "image/png", nul)), 400, ""},
		{"txt name, png magic", "/v1/files", "", formBody(testBoundary, field("purpose", "assistants"), file("file", "notes.txt", "image/png", binary)), 400, ""},
		{"jsonl name", "/v1/files", "", formBody(testBoundary, field("purpose", "batch"), file("file", "batch.jsonl", "image/png", nul)), 400, ""},
		{"png name, mostly text", "/v1/uploads/upload_abc/parts", "", formBody(testBoundary, file("data", "x.png", "image/png", magic)), 400, ""},
		{"png name, real png", "/v1/files", "", formBody(testBoundary, field("purpose", "vision"), file("file", "x.png", "image/png", binary)), 0, ""},
		{"png name, not media", "/v1/files", "", formBody(testBoundary, field("purpose", "vision"), file("file", "x.png", "image/png", notMedia)), 0, "1"},
		{"raw gemini, png magic", "/upload/v1beta/files?upload_id=abc", "image/png", magic, 400, ""},
		{"raw gemini, nul", "/upload/v1beta/files?upload_id=abc", "image/png", nul, 400, ""},
		{"raw, not media", "/upload/v1beta/files?upload_id=abc", "image/png", notMedia, 0, "1"},
		{"related, text declared", "/upload/v1beta/files?uploadType=multipart", "multipart/related; boundary=BB",
			related(`{"file":{"display_name":"notes","mimeType":"text/plain"}}`, "image/png", binary), 400, ""},
		{"related, png magic", "/upload/v1beta/files?uploadType=multipart", "multipart/related; boundary=BB",
			related(`{"file":{"display_name":"notes","mimeType":"image/png"}}`, "image/png", magic), 400, ""},
		{"related, png declared", "/upload/v1beta/files?uploadType=multipart", "multipart/related; boundary=BB",
			related(`{"file":{"display_name":"notes","mimeType":"image/png"}}`, "image/png", binary), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newReq := func() *http.Request {
				r := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
				ct := tc.ctype
				if ct == "" {
					ct = "multipart/form-data; boundary=" + testBoundary
				}
				r.Header.Set("Content-Type", ct)
				return r
			}
			res := fx.do(t, newReq())
			if tc.status != 0 {
				if res.up.called || res.rec.Code != tc.status {
					t.Fatalf("got %d %s (forwarded %v), want %d", res.rec.Code, res.rec.Body, res.up.called, tc.status)
				}
				return
			}
			if !res.up.called || string(res.up.body) != tc.body || res.up.header.Get(HeaderUnscanned) != tc.unscanned {
				t.Fatalf("got %d %s, unscanned %q, want forwarded with unscanned %q", res.rec.Code, res.rec.Body, res.up.header.Get(HeaderUnscanned), tc.unscanned)
			}
			res = strict.do(t, newReq())
			if refused := !res.up.called && res.rec.Code == 415; refused != (tc.unscanned != "") {
				t.Fatalf("with unscannable_files refuse: %d %s", res.rec.Code, res.rec.Body)
			}
		})
	}
}
