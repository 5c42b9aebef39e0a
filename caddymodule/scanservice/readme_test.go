package scanservice

import (
	"strings"
	"testing"

	"github.com/promptwall/promptwall/caddymodule/stores"
	"github.com/promptwall/promptwall/internal/doccheck"
	"github.com/promptwall/promptwall/x402"
)

// TestREADME fails when the README's prompt_scan reference lacks an
// option, a JSON field (the store backends' included), an error code, a
// header or a metric that the code defines.
func TestREADME(t *testing.T) {
	readme, err := doccheck.README()
	if err != nil {
		t.Fatal(err)
	}
	section := doccheck.Section(readme, "prompt_scan")
	if section == "" {
		t.Fatal("README has no prompt_scan section")
	}
	fields := doccheck.JSONFields(Handler{})
	for _, f := range doccheck.JSONFields(stores.SQLite{}) {
		fields = append(fields, "store."+f)
	}
	for _, f := range doccheck.JSONFields(stores.PostgreSQL{}) {
		fields = append(fields, "store."+f)
	}
	fields = append(fields, "store.driver") // the inline key
	if m := doccheck.Missing(doccheck.Column(section, 1), fields); len(m) > 0 {
		t.Errorf("config fields without a README entry: %q", m)
	}
	syntax := doccheck.Block(section, "caddyfile", "prompt_scan {")
	if m := doccheck.MissingLines(syntax, subdirectives); syntax == "" || len(m) > 0 {
		t.Errorf("subdirectives missing from the README's syntax block: %q", m)
	}
	if m := doccheck.Missing(doccheck.Column(section, 0), subdirectives); len(m) > 0 {
		t.Errorf("subdirectives missing from the README's options table: %q", m)
	}
	codes, err := doccheck.SourceStrings(".", "code", "", 0)
	if err != nil || len(codes) < 10 {
		t.Fatalf("error codes %q: %v", codes, err)
	}
	if m := doccheck.Missing(doccheck.Column(section, 1), codes); len(m) > 0 {
		t.Errorf("error codes without a README row: %q", m)
	}
	headers := []string{x402.HeaderPaymentRequired, x402.HeaderPaymentSignature, x402.HeaderPaymentResponse, strings.ToUpper(signInHeader), "Retry-After"}
	if m := doccheck.Missing(section, headers); len(m) > 0 {
		t.Errorf("headers the README does not name: %q", m)
	}
	m := newMetrics()
	metrics := doccheck.Metrics(m.requests, m.payments, storeSeconds, requestStoreSeconds)
	if len(metrics) != 4 {
		t.Fatalf("metrics %+v", metrics)
	}
	if m := doccheck.MissingMetrics(doccheck.Section(readme, "Metrics"), metrics); len(m) > 0 {
		t.Errorf("metrics without a README row: %q", m)
	}
}
