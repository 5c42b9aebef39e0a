package firewall

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// escaped spells s in \u escapes only, as a JSON string's content: the
// scan of the raw bytes sees no word of it.
func escaped(s string) string {
	var b strings.Builder
	for _, c := range s {
		fmt.Fprintf(&b, `\u%04x`, c)
	}
	return b.String()
}

// TestPaddedJSON: a JSON body or field is read as JSON however much
// whitespace comes first, and a text that is one JSON string is scanned
// decoded too: Ollama, llama.cpp and the Realtime session field decode
// the escapes whatever the declared type.
func TestPaddedJSON(t *testing.T) {
	fx := newFixture(t, &Firewall{WebSocket: "pass"})
	pad := strings.Repeat(" ", 600)
	padded := pad + `{"model":"llama3","prompt":"` + escaped(malText) + `","stream":false}`
	session := pad + `{"type":"realtime","model":"gpt-realtime","instructions":"` + escaped(malText) + `"}`
	for _, tc := range []struct {
		name, path, ctype, body string
	}{
		{"octet-stream", "/api/generate", "application/octet-stream", padded},
		{"image", "/api/chat", "image/png", padded},
		{"newlines past the window", "/completion", "application/octet-stream", strings.Repeat("\r\n", 2000) + padded},
		{"json string as text", "/upload/v1beta/files", "text/plain", pad + `"` + escaped(malText) + `"`},
		{"realtime session field", "/v1/realtime/calls", "multipart/form-data; boundary=" + testBoundary,
			formBody(testBoundary, field("sdp", "v=0\r\n"), field("session", session))},
		{"json string in a field", "/v1/audio/transcriptions", "multipart/form-data; boundary=" + testBoundary,
			formBody(testBoundary, field("prompt", pad+`"`+escaped(malText)+`"`))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
			r.Header.Set("Content-Type", tc.ctype)
			res := fx.do(t, r)
			if res.up.called || res.rec.Code != 400 {
				t.Fatalf("got %d %s (forwarded %v), want blocked", res.rec.Code, res.rec.Body, res.up.called)
			}
		})
	}
	// Blank bytes past max_body are no JSON and no text to read whole.
	small := newFixture(t, &Firewall{MaxBody: 1024})
	r := httptest.NewRequest(http.MethodPost, "/api/generate", strings.NewReader(strings.Repeat(" ", 4096)+`{"prompt":"hi"}`))
	r.Header.Set("Content-Type", "application/octet-stream")
	if res := small.do(t, r); res.up.called || res.rec.Code != 413 {
		t.Fatalf("blank past max_body: %d %s", res.rec.Code, res.rec.Body)
	}
}
