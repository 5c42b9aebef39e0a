package firewall

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	"github.com/promptwall/promptwall/caddymodule/adapttest"
)

// TestAdaptGolden adapts each testdata/adapt/*.caddyfiletest and compares the
// JSON with the golden half: every option must show as its JSON field, and
// prompt_firewall must land before reverse_proxy without an order line.
func TestAdaptGolden(t *testing.T) { adapttest.Golden(t, "testdata/adapt") }

// TestCaddyfileErrors shows that bad options fail at adapt time with a
// message naming the problem, not at the first request.
func TestCaddyfileErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"unknown action", "prompt_firewall {\n on_malicious drop\n}", "unknown action 'drop'"},
		{"action missing", "prompt_firewall {\n on_suspicious\n}", "wrong argument count"},
		{"two actions", "prompt_firewall {\n on_suspicious log block\n}", "wrong argument count"},
		{"unknown role", "prompt_firewall {\n roles user bot\n}", "unknown role 'bot' (want user, tool, function, tool_definition, system, developer, assistant, or all alone)"},
		{"role misspelt", "prompt_firewall {\n roles user admin systm\n}", "unknown role 'admin' (want user,"},
		{"role misspelt, named", "prompt_firewall {\n roles systm\n}", "unknown role 'systm' (did you mean 'system'?)"},
		{"all with others", "prompt_firewall {\n roles all user\n}", "'all' stands alone"},
		{"no roles", "prompt_firewall {\n roles\n}", "wrong argument count"},
		{"bad size", "prompt_firewall {\n max_body lots\n}", "max_body: want a size such as 16MiB, 512KB or a number of bytes (at least 1), got 'lots'"},
		{"negative size", "prompt_firewall {\n max_body -5\n}", "max_body: want a size such as 16MiB, 512KB or a number of bytes (at least 1), got '-5'"},
		{"zero size", "prompt_firewall {\n max_body 0\n}", "got '0'"},
		{"cache not a number", "prompt_firewall {\n safe_cache lots\n}", "safe_cache: want a number"},
		{"cache zero", "prompt_firewall {\n safe_cache 0\n}", "safe_cache: want a number"},
		{"cache too large", "prompt_firewall {\n safe_cache 1000000000\n}", "safe_cache: want a number"},
		{"cache two args", "prompt_firewall {\n safe_cache 10 20\n}", "wrong argument count"},
		{"rulebook two args", "prompt_firewall {\n rulebook a b\n}", "wrong argument count"},
		{"unknown option", "prompt_firewall {\n mode strict\n}", "unrecognized prompt_firewall subdirective 'mode', at"},
		{"misspelt option", "prompt_firewall {\n max_bdy 1MiB\n}", "unrecognized prompt_firewall subdirective 'max_bdy' (did you mean 'max_body'?)"},
		{"inline argument", "prompt_firewall strict", "wrong argument count"},
		{"rule without action", "prompt_firewall {\n rule EX-3\n}", "wrong argument count"},
		{"rule unknown action", "prompt_firewall {\n rule EX-3 drop\n}", "rule EX-3: unknown action 'drop' (want block, sanitize, log or off)"},
		{"unscannable_files unknown", "prompt_firewall {\n unscannable_files block\n}", "unscannable_files: unknown value 'block' (want pass or refuse)"},
		{"token_ids missing", "prompt_firewall {\n token_ids\n}", "wrong argument count"},
		{"response action unknown", "prompt_firewall {\n response_on_malicious drop\n}", "response_on_malicious: unknown action 'drop' (want block, sanitize, log or off)"},
		{"response action missing", "prompt_firewall {\n response_on_suspicious\n}", "wrong argument count"},
		{"mcp argument", "prompt_firewall {\n mcp on\n}", "wrong argument count"},
		{"mcp unknown option", "prompt_firewall {\n mcp {\n pin_tool\n }\n}", "unrecognized mcp option 'pin_tool' (want pin_tools)"},
		{"mcp pin_tools argument", "prompt_firewall {\n mcp {\n pin_tools yes\n }\n}", "wrong argument count"},
		{"mcp twice", "prompt_firewall {\n mcp\n mcp\n}", "mcp: given twice"},
		{"category twice", "prompt_firewall {\n category obfuscation off\n category obfuscation log\n}", "category obfuscation: given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f Firewall
			err := f.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestValidate covers JSON configs that bypass the Caddyfile's checks.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Firewall
		want string
	}{
		{"bad on_malicious", Firewall{OnMalicious: "drop", OnSuspicious: "log"}, "on_malicious"},
		{"bad on_suspicious", Firewall{OnMalicious: "log", OnSuspicious: "Block"}, "on_suspicious"},
		{"negative max_body", Firewall{OnMalicious: "log", OnSuspicious: "log", MaxBody: -1}, "max_body"},
		{"unknown role", Firewall{OnMalicious: "log", OnSuspicious: "log", Roles: []string{"model"}}, "unknown role"},
		{"bad response_on_malicious", Firewall{OnMalicious: "log", OnSuspicious: "log", ResponseOnMalicious: "drop"}, "response_on_malicious"},
		{"bad response_on_suspicious", Firewall{OnMalicious: "log", OnSuspicious: "log", ResponseOnSuspicious: "Log"}, "response_on_suspicious"},
		{"safe_cache below -1", Firewall{OnMalicious: "log", OnSuspicious: "log", SafeCache: -2}, "safe_cache"},
		{"safe_cache too large", Firewall{OnMalicious: "log", OnSuspicious: "log", SafeCache: maxSafeCache + 1}, "safe_cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.f.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error about %s", err, tc.want)
			}
		})
	}
	ok := Firewall{OnMalicious: "sanitize", OnSuspicious: "log", Roles: []string{"all"}, MaxBody: 1}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config rejected: %v", err)
	}
}

func TestSubdirectivesListed(t *testing.T) {
	adapttest.Subdirectives(t, "caddyfile.go", subdirectives)
}
