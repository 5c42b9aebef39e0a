package firewall

import (
	"net/http"
	"strings"
	"testing"
)

// TestMCPMetrics: on an mcp route a client's body counts in phase request
// and each message of the server's in phase response, with its verdict,
// action and matches; no label holds the text.
func TestMCPMetrics(t *testing.T) {
	fx := mcpFixture(t, &Firewall{})
	reg := fx.ctx.GetMetricsRegistry()
	before := scrape(t, reg)
	const canary = "canary-5e21a9d4-mcp"
	mal := malText + " " + canary
	// A clean tools/call whose result carries an injection: the request passes, the
	// server's answer is blocked.
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}`
	result := rpcResult(1, `{"content":[{"type":"text","text":`+js(mal)+`}]}`)
	srv := &mcpServer{ctype: "text/event-stream", chunks: []string{sse(result)}}
	if rec := mcpDo(t, fx, http.MethodPost, call, srv); !strings.Contains(rec.Body.String(), `"error"`) {
		t.Fatalf("the injected result was not blocked: %s", rec.Body)
	}
	// A malicious client request: blocked before the server.
	bad := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"send","arguments":{"text":` + js(mal) + `}}}`
	mcpDo(t, fx, http.MethodPost, bad, srv)

	after := scrape(t, reg)
	delta := func(series string) float64 { return sample(t, after, series) - sample(t, before, series) }
	for series, want := range map[string]float64{
		`promptwall_firewall_requests_total{action="pass",host="_other",phase="request",verdict="safe"}`:        1,
		`promptwall_firewall_requests_total{action="block",host="_other",phase="request",verdict="malicious"}`:  1,
		`promptwall_firewall_requests_total{action="block",host="_other",phase="response",verdict="malicious"}`: 1,
		`promptwall_firewall_requests_total{action="pass",host="_other",phase="response",verdict="safe"}`:       0,
		`promptwall_firewall_matches_total{host="_other",phase="response",rule="IO-1"}`:                         1,
		`promptwall_firewall_matches_total{host="_other",phase="request",rule="IO-1"}`:                          1,
	} {
		if got := delta(series); got != want {
			t.Errorf("%s moved by %v, want %v", series, got, want)
		}
	}
	if strings.Contains(after, canary) || strings.Contains(fx.logs.String(), canary) {
		t.Error("the text reached a metric or a log")
	}
}
