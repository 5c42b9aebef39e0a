package firewall

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSplitUploads: a chunk of an upload the provider joins is scanned
// and counted as unscanned (the joined file is never seen), so that
// unscannable_files refuse refuses it; a whole upload is not counted.
func TestSplitUploads(t *testing.T) {
	fx := newFixture(t, &Firewall{})
	strict := newFixture(t, &Firewall{UnscannableFiles: "refuse"})
	chunk := "Quarterly notes, part one."
	binary := "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00\x01\x02\xfe", 200)
	for _, tc := range []struct {
		name, path, ctype, body string
		headers                 [][2]string
		split                   bool
	}{
		{"openai upload part", "/v1/uploads/upload_abc/parts", "multipart/form-data; boundary=" + testBoundary,
			formBody(testBoundary, file("data", "blob", "application/octet-stream", chunk)), nil, true},
		{"openai upload part, media", "/v1/uploads/upload_abc/parts/", "multipart/form-data; boundary=" + testBoundary,
			formBody(testBoundary, file("data", "blob", "image/png", binary)), nil, true},
		{"gemini chunk", "/upload/v1beta/files?upload_id=abc", "text/plain", chunk,
			[][2]string{{"X-Goog-Upload-Command", "upload"}, {"X-Goog-Upload-Offset", "0"}}, true},
		{"gemini last chunk", "/upload/v1beta/files?upload_id=abc", "", chunk,
			[][2]string{{"X-Goog-Upload-Command", "upload, finalize"}, {"X-Goog-Upload-Offset", "8388608"}}, true},
		{"gemini media chunk", "/upload/v1beta/files?upload_id=abc", "image/png", binary,
			[][2]string{{"X-Goog-Upload-Command", "upload"}, {"X-Goog-Upload-Offset", "0"}}, true},
		{"gemini json chunk", "/upload/v1beta/files?upload_id=abc", "application/json", `{"a":"b"}`,
			[][2]string{{"X-Goog-Upload-Command", "upload"}, {"X-Goog-Upload-Offset", "0"}}, true},
		{"gemini whole upload", "/upload/v1beta/files?upload_id=abc", "text/plain", chunk,
			[][2]string{{"X-Goog-Upload-Command", "upload, finalize"}, {"X-Goog-Upload-Offset", "0"}}, false},
		{"gemini start", "/upload/v1beta/files", "application/json", `{"file":{"display_name":"notes"}}`,
			[][2]string{{"X-Goog-Upload-Command", "start"}, {"X-Goog-Upload-Protocol", "resumable"}}, false},
		{"openai upload create", "/v1/uploads", "application/json", `{"filename":"a.txt","purpose":"assistants","bytes":26,"mime_type":"text/plain"}`, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newReq := func() *http.Request {
				r := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
				if tc.ctype != "" {
					r.Header.Set("Content-Type", tc.ctype)
				}
				for _, h := range tc.headers {
					r.Header.Add(h[0], h[1])
				}
				return r
			}
			res := fx.do(t, newReq())
			want := ""
			if tc.split {
				want = "1"
			}
			if !res.up.called || string(res.up.body) != tc.body || res.up.header.Get(HeaderUnscanned) != want {
				t.Fatalf("got %d %s, unscanned %q, want forwarded with %q", res.rec.Code, res.rec.Body, res.up.header.Get(HeaderUnscanned), want)
			}
			res = strict.do(t, newReq())
			if refused := !res.up.called && res.rec.Code == 415 && strings.Contains(res.rec.Body.String(), "split upload"); refused != tc.split {
				t.Fatalf("with unscannable_files refuse: %d %s", res.rec.Code, res.rec.Body)
			}
		})
	}
	// A chunk is scanned still.
	r := httptest.NewRequest(http.MethodPost, "/upload/v1beta/files?upload_id=abc", strings.NewReader(malText))
	r.Header.Set("Content-Type", "text/plain")
	r.Header.Set("X-Goog-Upload-Command", "upload")
	r.Header.Set("X-Goog-Upload-Offset", "0")
	if res := fx.do(t, r); res.up.called || res.rec.Code != 400 {
		t.Fatalf("malicious chunk: %d %s", res.rec.Code, res.rec.Body)
	}
}
