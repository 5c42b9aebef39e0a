package scanservice

import (
	"net/http"
	"strings"
	"testing"
)

// A request the service cannot answer never costs its payment: each one
// below carries a valid payment, is refused before the facilitator is
// asked anything, and the same payment still buys a scan afterwards.
func TestInvalidRequestsNeverSettle(t *testing.T) {
	f := newFakeFacilitator(t)
	th := paidHandler(t, f, nil)
	header := payment(t, ask(t, th), nil)
	asked := f.count("/supported")

	cases := []struct {
		name, method, body string
		hdr                http.Header
		status             int
		code               string
	}{
		{"bad JSON", "POST", `{"text":`, nil, 400, codeInvalidJSON},
		{"not an object", "POST", `["text"]`, nil, 400, codeInvalidJSON},
		{"two JSON values", "POST", `{"text":"a"} {"text":"b"}`, nil, 400, codeInvalidJSON},
		{"no text", "POST", `{"txt":"a"}`, nil, 400, codeMissingText},
		{"text not a string", "POST", `{"text":42}`, nil, 400, codeInvalidText},
		{"body too large", "POST", `{"text":"` + strings.Repeat("a", MaxBodyBytes) + `"}`, nil, 413, codeBodyTooLarge},
		{"text too long", "POST", `{"text":"` + strings.Repeat("a", MaxTextUnits+1) + `"}`, nil, 413, codeTextTooLarge},
		{"text too long in UTF-16 units", "POST", `{"text":"` + strings.Repeat("😀", MaxTextUnits/2) + `a"}`, nil, 413, codeTextTooLarge},
		{"encoded body", "POST", scanBody, http.Header{"Content-Encoding": {"gzip"}}, 415, codeUnsupportedEncoding},
		{"GET", "GET", "", nil, 405, codeMethodNotAllowed},
		{"PUT", "PUT", scanBody, nil, 405, codeMethodNotAllowed},
		{"DELETE", "DELETE", "", nil, 405, codeMethodNotAllowed},
		{"OPTIONS", "OPTIONS", "", nil, 204, ""},
		{"preflight", "OPTIONS", "", http.Header{"Origin": {"https://app.example"}, "Access-Control-Request-Method": {"POST"}}, 204, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := http.Header{"Payment-Signature": {header}}
			for k, v := range c.hdr {
				hdr[k] = v
			}
			w := th.do(t, c.method, "http://scan.example.com/v1/scan", c.body, hdr)
			if w.Code != c.status || (c.code != "" && errorCode(t, w) != c.code) {
				t.Fatalf("%d %s, want %d %s", w.Code, w.Body, c.status, c.code)
			}
			if w.Header().Get("PAYMENT-RESPONSE") != "" || givesResultAway(w.Body.Bytes()) {
				t.Fatalf("answer carries a settlement or a result: %v %s", w.Header(), w.Body)
			}
			if v, s, sup := f.count("/verify"), f.count("/settle"), f.count("/supported"); v != 0 || s != 0 || sup != asked {
				t.Fatalf("facilitator asked: verify %d, settle %d, supported %d", v, s, sup)
			}
			if n := len(th.ledger(t)); n != 0 {
				t.Fatalf("%d ledger rows", n)
			}
		})
	}

	// Nothing reserved the payment either: it still pays for one scan.
	if w := pay(t, th, header); w.Code != 200 || f.count("/settle") != 1 {
		t.Fatalf("the unused payment: %d %s", w.Code, w.Body)
	}
}
