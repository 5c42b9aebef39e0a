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
// other upgrade or tunnel is refused whatever the option.
func (f *Firewall) upgrade(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *failure) {
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
