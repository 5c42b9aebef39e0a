package firewall

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFormEdges: a multipart body holds nothing but whitespace outside its
// parts, and at least one part: Ollama reads a JSON preamble as the
// request, and Go's parser skips it.
func TestFormEdges(t *testing.T) {
	fx := newFixture(t, &Firewall{})
	body := formBody(testBoundary, field("note", "hello"))
	for _, tc := range []struct {
		name, ctype, body string
		ok                bool
	}{
		{"plain form", "multipart/form-data", body, true},
		{"blank preamble and epilogue", "multipart/form-data", "\r\n \r\n" + body + "\r\n\r\n", true},
		{"related", "multipart/related", "--" + testBoundary + "\r\nContent-Type: application/json\r\n\r\n{\"file\":{}}\r\n--" + testBoundary + "--\r\n", true},
		{"json preamble, no part", "multipart/form-data", chat(msg("user", "hi")) + "\r\n--" + testBoundary + "--\r\n", false},
		{"json preamble before a part", "multipart/form-data", `{"prompt":"hi"}` + "\r\n" + body, false},
		{"json preamble in related", "multipart/related", `{"prompt":"hi"}` + "\r\n" + body, false},
		{"text epilogue", "multipart/form-data", body + "trailing words", false},
		{"no part", "multipart/form-data", "--" + testBoundary + "--\r\n", false},
		{"indented delimiter before json", "multipart/form-data", "  --" + testBoundary + "\r\n" + `{"prompt":"hi"}` + "\r\n" + body, false},
		{"longer boundary before json", "multipart/form-data", "--" + testBoundary + "x\r\n" + `{"prompt":"hi"}` + "\r\n" + body, false},
		{"delimiter with blanks", "multipart/form-data", "--" + testBoundary + " \t\r\n" + strings.TrimPrefix(body, "--"+testBoundary+"\r\n"), true},
		{"no close delimiter", "multipart/form-data", strings.TrimSuffix(body, "--"+testBoundary+"--\r\n"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/api/generate", strings.NewReader(tc.body))
			r.Header.Set("Content-Type", tc.ctype+"; boundary="+testBoundary)
			res := fx.do(t, r)
			if tc.ok {
				if !res.up.called || string(res.up.body) != tc.body {
					t.Fatalf("not forwarded as sent: %d %s", res.rec.Code, res.rec.Body)
				}
				return
			}
			if res.up.called || res.rec.Code != 400 || !strings.Contains(res.rec.Body.String(), "multipart body") {
				t.Fatalf("got %d %s (forwarded %v), want 400 multipart body", res.rec.Code, res.rec.Body, res.up.called)
			}
		})
	}
}
