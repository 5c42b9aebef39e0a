package firewall

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestProtocolSwitches: WebSocket upgrades are refused by default and pass
// with `websocket pass`; any other upgrade or tunnel is always refused.
func TestProtocolSwitches(t *testing.T) {
	refuse := newFixture(t, &Firewall{})
	pass := newFixture(t, &Firewall{WebSocket: "pass"})
	for _, tc := range []struct {
		name    string
		method  string
		headers [][2]string
		code    string // refusal by default; "" passes
		passes  bool   // with websocket pass
	}{
		{"openai realtime", "GET", [][2]string{{"Connection", "Upgrade"}, {"Upgrade", "websocket"}}, "websocket_not_scanned", true},
		{"case and lists", "GET", [][2]string{{"Connection", "keep-alive, UPGRADE"}, {"Upgrade", "WebSocket/13"}}, "websocket_not_scanned", true},
		{"connection on two lines", "GET", [][2]string{{"Connection", "keep-alive"}, {"Connection", "upgrade"}, {"Upgrade", "websocket"}}, "websocket_not_scanned", true},
		{"extended connect", "CONNECT", [][2]string{{":protocol", "websocket"}}, "websocket_not_scanned", true},
		{"h2c", "GET", [][2]string{{"Connection", "Upgrade, HTTP2-Settings"}, {"Upgrade", "h2c"}}, "upgrade_not_scanned", false},
		{"websocket and another", "GET", [][2]string{{"Connection", "Upgrade"}, {"Upgrade", "websocket, foo/1"}}, "upgrade_not_scanned", false},
		{"plain connect tunnel", "CONNECT", nil, "upgrade_not_scanned", false},
		{"connect of another case", "CONNECT", [][2]string{{":protocol", "WebSocket"}}, "upgrade_not_scanned", false},
		{"upgrade without connection upgrade", "GET", [][2]string{{"Upgrade", "websocket"}}, "", true},
		{"plain get", "GET", nil, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newReq := func() *http.Request {
				r := httptest.NewRequest(tc.method, "/v1/realtime?model=gpt-realtime", nil)
				for _, h := range tc.headers {
					r.Header.Add(h[0], h[1])
				}
				return r
			}
			res := refuse.do(t, newReq())
			if tc.code == "" {
				if !res.up.called {
					t.Fatalf("refused: %d %s", res.rec.Code, res.rec.Body)
				}
			} else if res.up.called || res.rec.Code != 403 || !strings.Contains(res.rec.Body.String(), `"code":"`+tc.code+`"`) {
				t.Fatalf("got %d %s, want 403 %s", res.rec.Code, res.rec.Body, tc.code)
			}
			res = pass.do(t, newReq())
			if res.up.called != tc.passes {
				t.Fatalf("with websocket pass: forwarded %v, %d %s", res.up.called, res.rec.Code, res.rec.Body)
			}
		})
	}
	// Gemini Live gets Gemini's shape.
	r := httptest.NewRequest("GET", "/ws/google.ai.generativelanguage.v1beta.GenerativeService/models/gemini:BidiGenerateContent", nil)
	r.Header.Set("Connection", "Upgrade")
	r.Header.Set("Upgrade", "websocket")
	res := refuse.do(t, r)
	if res.rec.Code != 403 || !strings.Contains(res.rec.Body.String(), "WebSocket") {
		t.Errorf("gemini live: %d %s", res.rec.Code, res.rec.Body)
	}
}
