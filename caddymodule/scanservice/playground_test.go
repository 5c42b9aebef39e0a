package scanservice

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// cspSources parses a Content-Security-Policy into its directives.
func cspSources(policy string) map[string][]string {
	out := map[string][]string{}
	for _, d := range strings.Split(policy, ";") {
		f := strings.Fields(d)
		if len(f) > 0 {
			out[f[0]] = f[1:]
		}
	}
	return out
}

// inlineOf is the content of the page's one <tag> element, as served.
func inlineOf(t *testing.T, page, tag string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<`+tag+`>(.*?)</`+tag+`>`).FindAllStringSubmatch(page, -1)
	if len(m) != 1 {
		t.Fatalf("the page has %d <%s> elements, want 1", len(m), tag)
	}
	return m[0][1]
}

func TestPlaygroundPage(t *testing.T) {
	th := newTestHandler(t, &Handler{Free: true, Playground: true})

	for _, target := range []string{"/playground", "/api/v1/playground", "http://scan.example.com/x/playground?text=1"} {
		w := th.do(t, "GET", target, "", nil)
		if w.Code != 200 {
			t.Fatalf("GET %s: %d", target, w.Code)
		}
		if ct := w.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", target, ct)
		}
	}

	w := th.do(t, "GET", "/playground", "", nil)
	page := w.Body.String()
	hdr := w.Header()
	csp := cspSources(hdr.Get("Content-Security-Policy"))
	// Only the page's own inline code, by its hashes, and requests to its
	// own origin: no other script, style, font, image or frame.
	want := map[string][]string{
		"default-src":     {"'none'"},
		"script-src":      {cspHash(inlineOf(t, page, "script"))},
		"style-src":       {cspHash(inlineOf(t, page, "style"))},
		"connect-src":     {"'self'"},
		"img-src":         {"data:"},
		"base-uri":        {"'none'"},
		"form-action":     {"'none'"},
		"frame-ancestors": {"'none'"},
	}
	if fmt.Sprint(csp) != fmt.Sprint(want) {
		t.Errorf("Content-Security-Policy %q\nwant %v", hdr.Get("Content-Security-Policy"), want)
	}
	if hdr.Get("X-Content-Type-Options") != "nosniff" || hdr.Get("Referrer-Policy") != "no-referrer" ||
		hdr.Get("Cache-Control") != "no-cache" || hdr.Get("ETag") == "" {
		t.Errorf("headers %v", hdr)
	}
	if hdr.Get("Access-Control-Allow-Origin") != "" {
		t.Error("the page carries CORS headers; it is for browsing, not for other origins' scripts")
	}
	// Self-contained: nothing fetched from elsewhere, by any element.
	for _, ref := range []string{"http:", "https:", "://", "src=", "@import", "url("} {
		if strings.Contains(page, ref) {
			t.Errorf("the page holds %q", ref)
		}
	}
	if !strings.Contains(page, `<body data-mode="free" data-price="0.01">`) {
		t.Error("the page does not say it is free")
	}
	if strings.Contains(page, "{{") {
		t.Error("a placeholder is left in the page")
	}

	w = th.do(t, "GET", "/playground", "", http.Header{"If-None-Match": {hdr.Get("ETag")}})
	if w.Code != http.StatusNotModified {
		t.Errorf("If-None-Match with the ETag: %d, want 304", w.Code)
	}
	w = th.do(t, "HEAD", "/playground", "", nil)
	if w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Length") != fmt.Sprint(len(page)) ||
		w.Header().Get("Content-Security-Policy") == "" || w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("HEAD: %d, body %d bytes, headers %v", w.Code, w.Body.Len(), w.Header())
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "OPTIONS"} {
		w = th.do(t, m, "/playground", "{}", http.Header{"Origin": {"https://app.example.com"}, "Access-Control-Request-Method": {"POST"}})
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" || errorCode(t, w) != "method_not_allowed" {
			t.Errorf("%s /playground: %d, Allow %q; want 405 with Allow: GET, HEAD", m, w.Code, w.Header().Get("Allow"))
		}
	}
	for _, p := range []string{"/playground/", "/playground.html", "/myplayground"} {
		if w := th.do(t, "GET", p, "", nil); w.Code != http.StatusTeapot {
			t.Errorf("GET %s: %d, want it passed to the next handler", p, w.Code)
		}
	}
}

func TestPlaygroundOff(t *testing.T) {
	th := freeHandler(t)
	for _, m := range []string{"GET", "HEAD", "POST"} {
		if w := th.do(t, m, "/playground", "", nil); w.Code != http.StatusTeapot {
			t.Errorf("%s /playground with the playground off: %d, want it passed to the next handler", m, w.Code)
		}
	}
}

// TestPlaygroundPaid shows the paid service's page: it knows it is paid,
// and its price, so it asks for pre-checks and never for a scan.
func TestPlaygroundPaid(t *testing.T) {
	f := newFakeFacilitator(t)
	th := paidHandler(t, f, func(h *Handler) { h.Playground = true; h.Price = "0.25" })
	w := th.do(t, "GET", "/playground", "", nil)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `<body data-mode="paid" data-price="0.25">`) {
		t.Fatalf("paid playground: %d, body without its mode and price", w.Code)
	}
	if n := f.count("/supported") + f.count("/verify") + f.count("/settle"); n != 0 {
		t.Errorf("serving the page called the facilitator %d times", n)
	}
	// The page differs by mode: its ETag too.
	free := newTestHandler(t, &Handler{Free: true, Playground: true}).do(t, "GET", "/playground", "", nil)
	if free.Header().Get("ETag") == w.Header().Get("ETag") {
		t.Error("the free and the paid page share an ETag")
	}
}

func TestPlaygroundMetrics(t *testing.T) {
	th := newTestHandler(t, &Handler{Free: true, Playground: true})
	before := counterValue(theMetrics.requests.WithLabelValues("playground", "200"))
	th.do(t, "GET", "/playground", "", nil)
	if got := counterValue(theMetrics.requests.WithLabelValues("playground", "200")) - before; got != 1 {
		t.Errorf("requests_total{playground,200} grew by %v, want 1", got)
	}
}

func TestInlineBlock(t *testing.T) {
	for _, tc := range []struct{ page, err string }{
		{"<style>a</style><script>b</script>", ""},
		{"<style>a</style>", "exactly one <script>"},
		{"<style>a</style><script>b</script><script>c</script>", "exactly one <script>"},
		{`<style>a</style><script type="module">b</script>`, "<script> must have no attributes"},
	} {
		_, err := inlineBlock(tc.page, "script")
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: %v, want %q", tc.page, err, tc.err)
		}
	}
}
