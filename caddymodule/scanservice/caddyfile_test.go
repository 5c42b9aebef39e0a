package scanservice

import (
	"strings"
	"testing"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	"github.com/promptwall/promptwall/caddymodule/adapttest"
)

// TestAdaptGolden adapts each testdata/adapt/*.caddyfiletest and compares
// the JSON with the golden half: every option shows as its JSON field, and
// prompt_scan stands in a site block without an order line, before respond.
func TestAdaptGolden(t *testing.T) { adapttest.Golden(t, "testdata/adapt") }

// TestCaddyfileErrors shows that bad options fail at adapt time with a
// message naming the problem, not at the first request.
func TestCaddyfileErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"unknown option", "prompt_scan {\n wallet x\n}", "unrecognized prompt_scan subdirective 'wallet', at"},
		{"misspelt option", "prompt_scan {\n payto x\n}", "unrecognized prompt_scan subdirective 'payto' (did you mean 'pay_to'?)"},
		{"argument on directive", "prompt_scan free", "wrong argument count"},
		{"unknown network", "prompt_scan {\n network ethereum\n}", "unknown network 'ethereum'"},
		{"pay_to twice", "prompt_scan {\n pay_to a b\n}", "wrong argument count"},
		{"pay_to empty is no free service", "prompt_scan {\n pay_to \"\"\n facilitator https://f.example\n price 0.01\n}", "pay_to is empty (an unset environment variable?)"},
		{"free with argument", "prompt_scan {\n free yes\n}", "wrong argument count"},
		{"playground with argument", "prompt_scan {\n playground on\n}", "wrong argument count"},
		{"misspelt playground", "prompt_scan {\n playgrond\n}", "(did you mean 'playground'?)"},
		{"bad limit", "prompt_scan {\n precheck_daily_limit 0\n}", "precheck_daily_limit '0' must be a positive number or 'unlimited'"},
		{"bad address limit", "prompt_scan {\n precheck_address_daily_limit -5\n}", "precheck_address_daily_limit '-5' must be a positive number or 'unlimited'"},
		{"address limit twice", "prompt_scan {\n precheck_address_daily_limit 5 6\n}", "wrong argument count"},
		{"bad interval", "prompt_scan {\n precheck_interval soon\n}", "must be a duration or 'none'"},
		{"sign-in without origin", "prompt_scan {\n precheck_sign_in\n}", "wrong argument count"},
		{"sign-in junk", "prompt_scan {\n precheck_sign_in https://s.example key x\n}", "expected 'secret <secret>'"},
		{"sign-in secret missing", "prompt_scan {\n precheck_sign_in https://s.example secret\n}", "expected 'secret <secret>'"},
		{"sign-in extra", "prompt_scan {\n precheck_sign_in https://s.example secret x y\n}", "wrong argument count"},
		{"unknown store", "prompt_scan {\n store mysql db\n}", "unknown store driver 'mysql' (known: postgres, recording, sqlite)"},
		{"store without driver", "prompt_scan {\n store\n}", "wrong argument count"},
		{"postgres without dsn", "prompt_scan {\n store postgres\n}", "wrong argument count"},
		{"postgres with two dsns", "prompt_scan {\n store postgres a b\n}", "wrong argument count"},
		{"rpc without url", "prompt_scan {\n rpc\n}", "wrong argument count"},
		{"store without path", "prompt_scan {\n store sqlite\n}", "wrong argument count"},
		{"facilitator junk", "prompt_scan {\n facilitator https://f.example auth x\n}", "expected 'header <name> <value>'"},
		{"facilitator header short", "prompt_scan {\n facilitator https://f.example header X\n}", "wrong argument count"},
		{"facilitator bad timeout", "prompt_scan {\n facilitator https://f.example {\n timeout -1s\n }\n}", "must be a positive duration"},
		{"cors_origins empty", "prompt_scan {\n cors_origins\n}", "wrong argument count"},
		{"cors_origins with a path", "prompt_scan {\n cors_origins https://app.example.com/\n}", "is not an origin"},
		{"cors_origins star among others", "prompt_scan {\n cors_origins * https://app.example.com\n}", "give either * or a list"},
		{"facilitator unknown option", "prompt_scan {\n facilitator https://f.example {\n retries 3\n }\n}", "unrecognized facilitator option 'retries'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := adapttest.Adapt(":8081 {\n" + tc.in + "\n}\n")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("adapt error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestSubdirectivesListed(t *testing.T) {
	adapttest.Subdirectives(t, "caddyfile.go", subdirectives)
}
