package firewall

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDirectSessions: a Realtime call over WebRTC and the ephemeral keys
// of direct connections are refused as WebSocket upgrades are, under
// refuse and scan; pass lets them through, their bodies scanned.
func TestDirectSessions(t *testing.T) {
	refuse := newFixture(t, &Firewall{})
	scan := newFixture(t, &Firewall{WebSocket: "scan"})
	pass := newFixture(t, &Firewall{WebSocket: "pass"})
	secret := `{"session":{"type":"realtime","model":"gpt-realtime"}}`
	call := formBody(testBoundary, field("sdp", "v=0\r\n"), field("session", `{"type":"realtime","model":"gpt-realtime"}`))
	for _, tc := range []struct {
		name, path, ctype, body string
		direct                  bool
	}{
		{"webrtc call", "/v1/realtime/calls", "multipart/form-data; boundary=" + testBoundary, call, true},
		{"webrtc call, sdp", "/v1/realtime/calls?model=gpt-realtime", "application/sdp", "v=0\r\n", true},
		{"sip accept", "/v1/realtime/calls/rtc_123/accept", "application/json", `{"type":"realtime"}`, true},
		{"client secret", "/v1/realtime/client_secrets", "application/json", secret, true},
		{"session key", "/v1/realtime/sessions", "application/json", `{"model":"gpt-4o-realtime-preview"}`, true},
		{"transcription key", "/v1/realtime/transcription_sessions", "application/json", `{}`, true},
		{"azure session key", "/openai/realtimeapi/sessions", "application/json", `{"model":"gpt-4o-realtime-preview"}`, true},
		{"gemini token", "/v1alpha/auth_tokens", "application/json", `{"uses":1}`, true},
		{"chat", "/v1/chat/completions", "application/json", chat(msg("user", "hi")), false},
		{"a session word elsewhere", "/v1/sessions", "application/json", `{"input":"hi"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newReq := func() *http.Request {
				r := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
				r.Header.Set("Content-Type", tc.ctype)
				return r
			}
			for _, fx := range []*fixture{refuse, scan} {
				res := fx.do(t, newReq())
				refused := !res.up.called && res.rec.Code == 403 && strings.Contains(res.rec.Body.String(), "websocket_not_scanned")
				if refused != tc.direct {
					t.Fatalf("got %d %s (forwarded %v)", res.rec.Code, res.rec.Body, res.up.called)
				}
			}
			if tc.ctype == "application/sdp" {
				return // not JSON: refused as such under pass
			}
			if res := pass.do(t, newReq()); !res.up.called {
				t.Fatalf("with websocket pass: %d %s", res.rec.Code, res.rec.Body)
			}
		})
	}
	// Under pass the call's session field is scanned.
	r := httptest.NewRequest(http.MethodPost, "/v1/realtime/calls", strings.NewReader(formBody(testBoundary, field("sdp", "v=0\r\n"),
		field("session", `{"type":"realtime","instructions":"`+malText+`"}`))))
	r.Header.Set("Content-Type", "multipart/form-data; boundary="+testBoundary)
	if res := pass.do(t, r); res.up.called {
		t.Fatalf("malicious session passed")
	}
}
