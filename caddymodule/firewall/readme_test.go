package firewall

import (
	"slices"
	"testing"

	"github.com/promptwall/promptwall/internal/doccheck"
)

// TestREADME fails when the README's prompt_firewall reference lacks an
// option, a JSON field, an error code, an upstream header, a placeholder
// or a metric that the code defines.
func TestREADME(t *testing.T) {
	readme, err := doccheck.README()
	if err != nil {
		t.Fatal(err)
	}
	section := doccheck.Section(readme, "prompt_firewall")
	if section == "" {
		t.Fatal("README has no prompt_firewall section")
	}
	tables := doccheck.Tables(section)
	if m := doccheck.Missing(doccheck.Column(section, 1), doccheck.JSONFields(Firewall{})); len(m) > 0 {
		t.Errorf("config fields without a README entry: %q", m)
	}
	syntax := doccheck.Block(section, "caddyfile", "prompt_firewall [<matcher>] {")
	if m := doccheck.MissingLines(syntax, subdirectives); syntax == "" || len(m) > 0 {
		t.Errorf("subdirectives missing from the README's syntax block: %q", m)
	}
	if m := doccheck.Missing(doccheck.Column(section, 0), subdirectives); len(m) > 0 {
		t.Errorf("subdirectives missing from the README's options table: %q", m)
	}
	codes, err := doccheck.SourceStrings(".", "Code", "failure", 1)
	if err != nil || len(codes) < 10 || !slices.Contains(codes, CodePromptInjection) {
		t.Fatalf("error codes %q: %v", codes, err)
	}
	if m := doccheck.Missing(tables, codes); len(m) > 0 {
		t.Errorf("error codes without a README entry: %q", m)
	}
	headers := []string{HeaderVerdict, HeaderRules, HeaderRulebook, HeaderUnscanned}
	placeholders := []string{"{http.vars." + VarVerdict + "}", "{http.vars." + VarRules + "}", "{http.vars." + VarAction + "}"}
	if m := doccheck.Missing(tables, append(headers, placeholders...)); len(m) > 0 {
		t.Errorf("headers and placeholders without a README entry: %q", m)
	}
	m := newMetrics()
	metrics := doccheck.Metrics(m.requests, m.matches, m.scanDuration, m.scannedBytes, m.cachedTexts, m.resumedBytes)
	if len(metrics) != 6 {
		t.Fatalf("metrics %+v", metrics)
	}
	if m := doccheck.MissingMetrics(doccheck.Section(readme, "Metrics"), metrics); len(m) > 0 {
		t.Errorf("metrics without a README row: %q", m)
	}
}
