package scanservice

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

var update = flag.Bool("update", false, "rewrite the adapt golden files from the adapter's output")

// goldenSep splits a golden file into its Caddyfile and the JSON that
// `caddy adapt` must give for it.
const goldenSep = "\n----------\n"

// TestAdaptGolden adapts each testdata/adapt/*.caddyfiletest and compares
// the JSON with the golden half: every option shows as its JSON field, and
// prompt_scan stands in a site block without an order line, before respond.
func TestAdaptGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/adapt/*.caddyfiletest")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			in, want, ok := strings.Cut(string(data), goldenSep)
			if !ok && !*update {
				t.Fatalf("%s has no %q separator", file, strings.TrimSpace(goldenSep))
			}
			got, err := adapt(in)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(file, []byte(in+goldenSep+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if strings.TrimSpace(got) != strings.TrimSpace(want) {
				t.Errorf("adapted JSON differs\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}

func adapt(caddyfileText string) (string, error) {
	adapter := caddyconfig.GetAdapter("caddyfile")
	out, warns, err := adapter.Adapt([]byte(caddyfileText), nil)
	if err != nil {
		return "", err
	}
	for _, w := range warns {
		return "", &adaptWarning{w.Message}
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, out, "", "\t"); err != nil {
		return "", err
	}
	return buf.String() + "\n", nil
}

type adaptWarning struct{ msg string }

func (w *adaptWarning) Error() string { return "adapt warning: " + w.msg }

// TestCaddyfileErrors shows that bad options fail at adapt time with a
// message naming the problem, not at the first request.
func TestCaddyfileErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"unknown option", "prompt_scan {\n wallet x\n}", "unrecognized prompt_scan subdirective 'wallet'"},
		{"argument on directive", "prompt_scan free", "wrong argument count"},
		{"unknown network", "prompt_scan {\n network ethereum\n}", "unknown network 'ethereum'"},
		{"pay_to twice", "prompt_scan {\n pay_to a b\n}", "wrong argument count"},
		{"free with argument", "prompt_scan {\n free yes\n}", "wrong argument count"},
		{"bad limit", "prompt_scan {\n precheck_daily_limit 0\n}", "must be a positive number or 'unlimited'"},
		{"bad interval", "prompt_scan {\n precheck_interval soon\n}", "must be a duration or 'none'"},
		{"unknown store", "prompt_scan {\n store postgres db\n}", "unknown store driver 'postgres'"},
		{"store without path", "prompt_scan {\n store sqlite\n}", "wrong argument count"},
		{"facilitator junk", "prompt_scan {\n facilitator https://f.example auth x\n}", "expected 'header <name> <value>'"},
		{"facilitator header short", "prompt_scan {\n facilitator https://f.example header X\n}", "wrong argument count"},
		{"facilitator bad timeout", "prompt_scan {\n facilitator https://f.example {\n timeout -1s\n }\n}", "must be a positive duration"},
		{"facilitator unknown option", "prompt_scan {\n facilitator https://f.example {\n retries 3\n }\n}", "unrecognized facilitator option 'retries'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := adapt(":8081 {\n" + tc.in + "\n}\n")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("adapt error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
