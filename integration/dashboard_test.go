package integration

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/x402"
)

// dashboardPath is the Grafana dashboard shipped for the metrics.
const dashboardPath = "../docs/grafana/promptwall.json"

// TestDashboardMatchesExportedMetrics runs the real server with both
// handlers (prompt_firewall before a fake LLM, prompt_scan in paid mode
// with a facilitator), sends each the requests that make every metric
// family show a series, reads Caddy's admin /metrics as Prometheus would,
// and checks the dashboard against what it exports: every query names an
// exported metric and only its labels, and every promptwall metric has a
// panel.
func TestDashboardMatchesExportedMetrics(t *testing.T) {
	up := newFakeLLM(t)
	fac := startGoFacilitator(t)
	merchant := newGoPayer("dashboard merchant")
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	fwAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	scanAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startCaddy(t, fmt.Sprintf(`{
	admin %s
}

http://%s {
	prompt_firewall {
		response_on_malicious log
	}
	reverse_proxy %s
}

http://%s {
	prompt_scan {
		pay_to %s
		facilitator %s
	}
}
`, admin, fwAddr, strings.TrimPrefix(up.srv.URL, "http://"), scanAddr, merchant.addr, fac.URL), nil, fwAddr, scanAddr)

	// The firewall: a block (requests, matches, the scan's histogram and
	// bytes) and a clean pass, whose answer is scanned too (phase response).
	for text, want := range map[string]int{e2eMalicious: 400, "What is the capital of France?": 200} {
		body := []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"` + text + `"}]}`)
		if resp, b := postRaw(t, "http://"+fwAddr+"/v1/chat/completions", body, ""); resp.StatusCode != want {
			t.Fatalf("firewall: %d %s, want %d", resp.StatusCode, b, want)
		}
	}
	// The scan service: a pre-check (a store operation), an unpaid scan
	// (402, payment required), a paid one (settled).
	base := "http://" + scanAddr
	caller := newGoPayer("dashboard caller").addr
	if status, _, b := scanPost(t, base+"/precheck", jsonBody(t, map[string]string{"text": "hello", "caller": caller}), nil); status != 200 {
		t.Fatalf("pre-check: %d %s", status, b)
	}
	body := jsonBody(t, map[string]string{"text": e2eMalicious})
	status, hdr, b := scanPost(t, base+"/scan", body, nil)
	offer, err := x402.DecodePaymentRequired(hdr.Get("PAYMENT-REQUIRED"))
	if status != 402 || err != nil {
		t.Fatalf("unpaid scan: %d %s %v", status, b, err)
	}
	payer := newGoPayer("dashboard payer")
	if status, _, b := scanPost(t, base+"/scan", body, map[string]string{"PAYMENT-SIGNATURE": payer.header(t, offer, "dashboard")}); status != 200 {
		t.Fatalf("paid scan: %d %s", status, b)
	}

	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	exposed, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, phase := range []string{"request", "response"} {
		if !regexp.MustCompile(`(?m)^promptwall_firewall_requests_total\{[^}]*phase="` + phase + `"`).Match(exposed) {
			t.Errorf("no requests_total series of phase %s", phase)
		}
	}
	fams, err := parseFamilies(bytes.NewReader(exposed), "promptwall_")
	if err != nil {
		t.Fatal(err)
	}
	// What the server exports, for the README's table.
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var labels []string
		for l := range fams[n].labels {
			labels = append(labels, l)
		}
		sort.Strings(labels)
		t.Logf("%s %s {%s}", n, strings.ToLower(fams[n].typ.String()), strings.Join(labels, ", "))
	}
	// Both modules' families, each with the series the requests made:
	// a check against fewer would pass a dashboard that names the rest.
	for _, n := range []string{"promptwall_firewall_requests_total", "promptwall_firewall_matches_total",
		"promptwall_scan_requests_total", "promptwall_scan_payments_total", "promptwall_scan_store_seconds",
		"promptwall_scan_request_store_seconds"} {
		if len(fams[n].labels) == 0 {
			t.Fatalf("%s has no labelled series: %v", n, names)
		}
	}

	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	c := checkDashboard(raw, fams)
	for _, e := range c.errs {
		t.Error(e)
	}
	for _, n := range names {
		if !c.used[n] {
			t.Errorf("%s has no panel in the dashboard", n)
		}
	}
}
