package scanservice

import (
	"net/http"
	"strings"
	"testing"
)

const appOrigin = "https://app.example.com"

// preflight is what a browser sends before @x402/fetch's paid retry,
// which sets PAYMENT-SIGNATURE and, oddly, Access-Control-Expose-Headers.
func preflight(origin, method string) http.Header {
	return http.Header{"Origin": {origin}, "Access-Control-Request-Method": {method},
		"Access-Control-Request-Headers": {"access-control-expose-headers,content-type,payment-signature"}}
}

// allowsHeaders reports whether a preflight answer lets the browser send
// every header of a comma-separated Access-Control-Request-Headers value
// (names compare without regard to case).
func allowsHeaders(answer http.Header, requested string) bool {
	allowed := map[string]bool{}
	for _, h := range strings.Split(answer.Get("Access-Control-Allow-Headers"), ",") {
		allowed[strings.ToLower(strings.TrimSpace(h))] = true
	}
	for _, h := range strings.Split(requested, ",") {
		if !allowed[strings.ToLower(strings.TrimSpace(h))] {
			return false
		}
	}
	return true
}

// A browser's preflight is answered for every endpoint with what a page
// needs to call it and to pay; the answer is cached for two hours.
func TestCORSPreflight(t *testing.T) {
	f := newFakeFacilitator(t)
	cases := []struct {
		name, path, origin string
		origins            []string
		allowOrigin        string
		methods            string
	}{
		{"rules, any origin", "/rules", appOrigin, nil, "*", "GET, HEAD, OPTIONS"},
		{"precheck, any origin", "/precheck", appOrigin, nil, "*", "POST, OPTIONS"},
		{"scan, any origin", "/v1/scan", "http://localhost:5173", nil, "*", "POST, OPTIONS"},
		{"scan, listed origin", "/scan", appOrigin, []string{"http://localhost:5173", appOrigin}, appOrigin, "POST, OPTIONS"},
		{"scan, origin not listed", "/scan", "https://evil.example", []string{appOrigin}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			th := paidHandler(t, f, func(h *Handler) { h.CORSOrigins = c.origins })
			w := th.do(t, "OPTIONS", "http://scan.example.com"+c.path, "", preflight(c.origin, "POST"))
			h := w.Header()
			if w.Code != http.StatusNoContent || w.Body.Len() != 0 {
				t.Fatalf("%d %q", w.Code, w.Body)
			}
			if got := h.Get("Access-Control-Allow-Origin"); got != c.allowOrigin {
				t.Errorf("Allow-Origin %q, want %q", got, c.allowOrigin)
			}
			if got := h.Get("Access-Control-Allow-Methods"); got != c.methods {
				t.Errorf("Allow-Methods %q, want %q", got, c.methods)
			}
			if c.allowOrigin == "" {
				if h.Get("Access-Control-Allow-Headers") != "" || h.Get("Access-Control-Max-Age") != "" {
					t.Errorf("a refused origin got %v", h)
				}
			} else {
				for _, req := range []string{preflight("", "")["Access-Control-Request-Headers"][0], "x-payment,content-type"} {
					if !allowsHeaders(h, req) {
						t.Errorf("Allow-Headers %q refuses %s", h.Get("Access-Control-Allow-Headers"), req)
					}
				}
				if allowsHeaders(h, "authorization") {
					t.Errorf("Allow-Headers %q allows more than the service reads", h.Get("Access-Control-Allow-Headers"))
				}
				if h.Get("Access-Control-Max-Age") != "7200" {
					t.Errorf("Max-Age %q", h.Get("Access-Control-Max-Age"))
				}
			}
			if vary := h.Values("Vary"); (c.origins != nil) != (len(vary) == 1 && vary[0] == "Origin") {
				t.Errorf("Vary %v with origins %v", vary, c.origins)
			}
			if h.Get("Access-Control-Allow-Credentials") != "" {
				t.Error("credentials allowed: payments are headers, never cookies")
			}
		})
	}
	if n := f.count("/verify") + f.count("/settle"); n != 0 {
		t.Fatalf("a preflight reached the facilitator %d times", n)
	}
}

// The real answers, errors and 402s included, let an allowed page read the
// payment headers; a page of another origin gets no CORS header at all.
func TestCORSAnswers(t *testing.T) {
	f := newFakeFacilitator(t)
	const expose = "PAYMENT-REQUIRED, PAYMENT-RESPONSE"
	cases := []struct {
		name, method, path, body, origin string
		origins                          []string
		status                           int
		allowOrigin, expose              string
	}{
		{"rules", "GET", "/rules", "", appOrigin, nil, 200, "*", expose},
		{"rules without Origin", "GET", "/rules", "", "", nil, 200, "*", expose},
		{"402", "POST", "/scan", scanBody, appOrigin, nil, 402, "*", expose},
		{"400", "POST", "/scan", "{", appOrigin, nil, 400, "*", expose},
		{"405", "GET", "/scan", "", appOrigin, nil, 405, "*", expose},
		{"pre-check", "POST", "/precheck", `{"text":"hi","caller":"` + payerAddr + `"}`, appOrigin, nil, 200, "*", expose},
		{"listed origin", "POST", "/scan", scanBody, appOrigin, []string{appOrigin}, 402, appOrigin, expose},
		{"origin not listed", "POST", "/scan", scanBody, "https://evil.example", []string{appOrigin}, 402, "", ""},
		{"no Origin, list configured", "GET", "/rules", "", "", []string{appOrigin}, 200, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			th := paidHandler(t, f, func(h *Handler) { h.CORSOrigins = c.origins })
			hdr := http.Header{}
			if c.origin != "" {
				hdr.Set("Origin", c.origin)
			}
			w := th.do(t, c.method, "http://scan.example.com"+c.path, c.body, hdr)
			if w.Code != c.status {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			if got := w.Header().Get("Access-Control-Allow-Origin"); got != c.allowOrigin {
				t.Errorf("Allow-Origin %q, want %q", got, c.allowOrigin)
			}
			if got := w.Header().Get("Access-Control-Expose-Headers"); got != c.expose {
				t.Errorf("Expose-Headers %q, want %q", got, c.expose)
			}
		})
	}
}

func TestCORSOriginsValidation(t *testing.T) {
	for _, c := range []struct {
		name    string
		origins []string
		ok      bool
	}{
		{"default", nil, true},
		{"any", []string{"*"}, true},
		{"list", []string{appOrigin, "http://localhost:5173"}, true},
		{"star among others", []string{"*", appOrigin}, false},
		{"a path", []string{appOrigin + "/"}, false},
		{"a query", []string{appOrigin + "?a=1"}, false},
		{"no scheme", []string{"app.example.com"}, false},
		{"ftp", []string{"ftp://app.example.com"}, false},
		{"upper case", []string{"https://App.example.com"}, false},
		{"user info", []string{"https://u@app.example.com"}, false},
		{"empty", []string{""}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &Handler{Free: true, CORSOrigins: c.origins, StoreRaw: sqliteAt(t.TempDir() + "/s.db")}
			if err := provisionOnly(t, h); err != nil {
				t.Fatal(err)
			}
			err := h.Validate()
			if (err == nil) != c.ok {
				t.Fatalf("Validate: %v, want ok %v", err, c.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "cors_origins") {
				t.Fatalf("error %v does not name cors_origins", err)
			}
		})
	}
}
