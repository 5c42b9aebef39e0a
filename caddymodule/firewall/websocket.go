package firewall

import (
	"net/http"
	"strings"
)

// Values of the websocket option.
const (
	WebSocketRefuse = "refuse"
	WebSocketPass   = "pass"
	WebSocketScan   = "scan" // the client's messages are scanned (wsscan.go)
)

var (
	errWebSocket = &failure{http.StatusForbidden, "websocket_not_scanned",
		"Request blocked by prompt firewall: WebSocket messages are not scanned, so WebSocket upgrades are refused"}
	errDirectSession = &failure{http.StatusForbidden, "websocket_not_scanned",
		"Request blocked by prompt firewall: a Realtime call or ephemeral key connects the client to the model directly, where no message is scanned"}
	errUpgrade = &failure{http.StatusForbidden, "upgrade_not_scanned",
		"Request blocked by prompt firewall: the bytes of a protocol upgrade or tunnel are not scanned"}
)

// protocolSwitch reports whether r asks to leave HTTP for a stream the
// firewall does not read: an HTTP/1.1 Upgrade (OpenAI Realtime, Gemini
// Live), an HTTP/2 or HTTP/3 extended CONNECT (RFC 8441, the :protocol
// pseudo-header), or a plain CONNECT tunnel. websocket says whether it is
// a WebSocket, the one kind the websocket option can let through.
func protocolSwitch(r *http.Request) (ok, websocket bool) {
	if r.Method == http.MethodConnect {
		// Go's HTTP/2 server hands :protocol over as a header, quic-go's
		// HTTP/3 server as r.Proto. Matched exactly, as reverse_proxy does:
		// any other CONNECT it proxies as a tunnel.
		return true, r.Header.Get(":protocol") == "websocket" || r.ProtoMajor == 3 && r.Proto == "websocket"
	}
	upgrade := headerTokens(r.Header, "Upgrade")
	if len(upgrade) == 0 || !hasToken(headerTokens(r.Header, "Connection"), "upgrade") {
		// Without Connection: upgrade, Upgrade is a hop-by-hop field the
		// proxy drops: the request stays HTTP.
		return false, false
	}
	for _, p := range upgrade {
		// A protocol may carry a version: websocket/13.
		name, _, _ := strings.Cut(p, "/")
		if !strings.EqualFold(strings.TrimSpace(name), "websocket") {
			return true, false
		}
	}
	return true, true
}

func hasToken(tokens []string, want string) bool {
	for _, t := range tokens {
		if strings.EqualFold(t, want) {
			return true
		}
	}
	return false
}

// upgrade handles a protocol switch: it returns the failure of one the
// configuration does not let through, or the ResponseWriter to go on with
// (with `websocket scan`, one that reads the client's messages through a
// scanner). A WebSocket passes only with `websocket pass` or `scan`; any
// other upgrade or tunnel is refused whatever the option. A request that
// sets up a session the firewall never sees (directSession) passes only
// with `websocket pass`.
func (f *Firewall) upgrade(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *failure) {
	if directSession(r.URL.Path) && f.WebSocket != WebSocketPass {
		return w, errDirectSession
	}
	sw, ws := protocolSwitch(r)
	switch {
	case !sw:
		return w, nil
	case !ws:
		return w, errUpgrade
	case f.WebSocket == WebSocketPass:
		return w, nil
	case f.WebSocket == WebSocketScan:
		return f.scanWebSocket(w, r), nil
	}
	return w, errWebSocket
}

// directSession reports whether r sets up a session whose messages go
// between the client and the provider without passing here: an OpenAI (or
// Azure) Realtime call over WebRTC (.../realtime/calls, its SDP answer
// opens a data channel to OpenAI), or an ephemeral key for one
// (.../realtime/client_secrets, .../realtime/sessions,
// .../realtime/transcription_sessions, Azure's .../realtimeapi/sessions),
// or a Gemini ephemeral token for Live (.../auth_tokens). The websocket
// option applies to them as to a WebSocket upgrade; scan cannot reach
// their messages, so only pass lets them through.
func directSession(p string) bool {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	for i, s := range segs {
		switch {
		case strings.EqualFold(s, "auth_tokens"):
			return true
		case i+1 < len(segs) && (strings.EqualFold(s, "realtime") || strings.EqualFold(s, "realtimeapi")):
			switch strings.ToLower(segs[i+1]) {
			case "calls", "client_secrets", "sessions", "transcription_sessions":
				return true
			}
		}
	}
	return false
}
