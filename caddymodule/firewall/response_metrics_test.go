package firewall

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// responseMatches returns the growth of every response-phase matches_total series by rule.
func responseMatches(t *testing.T, before, after string) map[string]float64 {
	t.Helper()
	re := regexp.MustCompile(`(?m)^promptwall_firewall_matches_total\{host="_other",phase="response",rule="([^"]+)"\} (\S+)$`)
	out := map[string]float64{}
	for _, m := range re.FindAllStringSubmatch(after, -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		series := `promptwall_firewall_matches_total{host="_other",phase="response",rule="` + m[1] + `"}`
		if d := v - sample(t, before, series); d != 0 {
			out[m[1]] = d
		}
	}
	return out
}

// TestResponseMetrics: a scanned response counts once in requests_total, phase response,
// with its verdict and action, beside its request's count (phase request); its matches go
// to matches_total, its text to scanned_bytes_total, its time to scan_duration_seconds;
// a response forwarded unscanned counts with verdict none; no label, and no log line,
// holds the answer's text.
func TestResponseMetrics(t *testing.T) {
	fx := respFixture(t, ActionBlock, ActionSanitize)
	reg := fx.ctx.GetMetricsRegistry()
	a := respAPIs[0]
	const canary = "canary-3b9d0c7e-response"
	clean := "Paris is the capital of France, " + canary + "."
	link := "Here is your chart: " + ex3 + " and that is all."
	mal := malText + " " + canary
	sse := map[string]string{"Content-Type": a.ctype}
	for _, tc := range []struct {
		name            string
		status          int
		header          map[string]string
		chunks          []string
		verdict, action string
		bytes           int  // of text scanned; -1: not scanned (no time observed either)
		allMatches      bool // every match of the text is counted (else: the rules below at least)
		text            string
		rules           map[string]float64
	}{
		{"clean stream", 200, sse, a.events(tokens(clean, 4)), "safe", "pass", len(clean), true, clean, nil},
		{"clean whole", 200, map[string]string{"Content-Type": "application/json"}, []string{a.whole(clean)}, "safe", "pass", len(clean), true, clean, nil},
		{"sanitized", 200, sse, a.events(tokens(link, 3)), "suspicious", "sanitize", len(link), true, link, nil},
		{"blocked", 200, sse, a.events(tokens(mal, 5)), "malicious", "block", 0, false, mal, map[string]float64{"IO-1": 1}},
		{"refused", 200, sse, []string{"data: {not json\n\n"}, "none", "refuse", 0, false, "", nil},
		{"error status", 429, map[string]string{"Content-Type": "application/json"}, []string{`{"error":{"message":"` + mal + `"}}`}, "none", "pass", -1, false, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := scrape(t, reg)
			rec, _ := serveResp(t, fx, a, tc.status, tc.header, tc.chunks)
			after := scrape(t, reg)
			code := map[string]string{"block": CodeResponseBlocked, "refuse": CodeResponseNotScanned}[tc.action]
			if code != "" {
				// Before any byte (a 502) or mid-stream (the stream's error event).
				if !strings.Contains(rec.Body.String(), `"code":"`+code+`"`) {
					t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
				}
			} else if rec.Code != tc.status {
				t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
			}
			grew := func(series string) float64 { return sample(t, after, series) - sample(t, before, series) }
			resp := `promptwall_firewall_requests_total{action="` + tc.action + `",host="_other",phase="response",verdict="` + tc.verdict + `"}`
			if got := grew(resp); got != 1 {
				t.Errorf("%s grew by %v, want 1", resp, got)
			}
			// Once: no other response series moved.
			total := 0.0
			for _, m := range regexp.MustCompile(`(?m)^(promptwall_firewall_requests_total\{[^}]*phase="response"[^}]*\}) `).FindAllStringSubmatch(after, -1) {
				total += grew(m[1])
			}
			if total != 1 {
				t.Errorf("response series grew by %v in all, want 1", total)
			}
			req := `promptwall_firewall_requests_total{action="pass",host="_other",phase="request",verdict="safe"}`
			if got := grew(req); got != 1 {
				t.Errorf("%s grew by %v, want 1", req, got)
			}
			scans := grew(`promptwall_firewall_scan_duration_seconds_count{phase="response"}`)
			bytes := grew(`promptwall_firewall_scanned_bytes_total{phase="response"}`)
			switch {
			case tc.bytes < 0 && (scans != 0 || bytes != 0):
				t.Errorf("an unscanned response observed %v scans, %v bytes", scans, bytes)
			case tc.bytes >= 0 && scans != 1:
				t.Errorf("response scans grew by %v, want 1", scans)
			case tc.bytes > 0 && bytes != float64(tc.bytes):
				t.Errorf("response bytes grew by %v, want %d", bytes, tc.bytes)
			}
			got := responseMatches(t, before, after)
			want := tc.rules
			if tc.allMatches {
				want = map[string]float64{}
				for _, m := range fx.fw.engine.ScanString(tc.text).Matches {
					want[m.Rule]++
				}
			}
			for rule, n := range want {
				if got[rule] != n {
					t.Errorf("matches of %s grew by %v, want %v (all: %v)", rule, got[rule], n, got)
				}
			}
			if tc.allMatches && len(got) != len(want) {
				t.Errorf("matches grew %v, want %v", got, want)
			}
			if (tc.verdict == "suspicious" || tc.verdict == "malicious") && len(got) == 0 {
				t.Error("a flagged response counted no match")
			}
			if strings.Contains(after, canary) || strings.Contains(after, "collect.example") {
				t.Error("response text in the metrics")
			}
		})
	}
	if strings.Contains(fx.logs.String(), canary) || strings.Contains(fx.logs.String(), "collect.example") {
		t.Error("response text in the log")
	}
}
