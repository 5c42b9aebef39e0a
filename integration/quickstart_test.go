package integration

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/internal/doccheck"
)

// TestQuickStart runs the README's quick start as written: the shipped
// examples/quickstart.caddyfile and the three curl commands (on free ports
// in place of the documented ones), and checks that they show what the
// README says they show: a block, a sanitized forward and a clean pass.
func TestQuickStart(t *testing.T) {
	readme, err := doccheck.README()
	if err != nil {
		t.Fatal(err)
	}
	section := doccheck.Section(readme, "Quick start")
	if !strings.Contains(doccheck.Block(section, "sh", "go build"), "./caddy run --config examples/quickstart.caddyfile\n") {
		t.Fatal("the quick start does not run examples/quickstart.caddyfile")
	}
	var curls []string
	for _, l := range strings.Split(doccheck.Block(section, "sh", "# 1."), "\n") {
		if strings.HasPrefix(l, "curl ") {
			curls = append(curls, l)
		}
	}
	if len(curls) != 3 {
		t.Fatalf("the quick start has %d curl commands, want 3", len(curls))
	}
	config, err := os.ReadFile("../examples/quickstart.caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	fw, up, admin := strconv.Itoa(freePort(t)), strconv.Itoa(freePort(t)), strconv.Itoa(freePort(t))
	ports := strings.NewReplacer("127.0.0.1:9080", "127.0.0.1:"+fw, "127.0.0.1:9081", "127.0.0.1:"+up, "localhost:2020", "localhost:"+admin)
	if ports.Replace(string(config)) == string(config) {
		t.Fatal("the quick start's ports are not where the test expects them")
	}
	srv := startCaddy(t, ports.Replace(string(config)), nil, "127.0.0.1:"+fw, "127.0.0.1:"+up)
	var outs []string
	for _, c := range curls {
		out, err := exec.Command("bash", "-c", ports.Replace(c)).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c, err, out)
		}
		outs = append(outs, strings.ReplaceAll(string(out), "\r\n", "\n"))
	}
	sent := func(c string) string { return regexp.MustCompile(`-d '([^']*)'`).FindStringSubmatch(c)[1] }
	body := func(out string) string { _, b, _ := strings.Cut(out, "\n\n"); return b }

	blocked := outs[0]
	for _, want := range []string{"HTTP/1.1 400 ", "X-Should-Retry: false", `"code":"prompt_injection_detected"`, "rules IO-1, EX-2"} {
		if !strings.Contains(blocked, want) {
			t.Errorf("1st command: no %q in\n%s", want, blocked)
		}
	}
	if strings.Contains(blocked, "Upstream-Saw-Verdict") {
		t.Error("1st command reached the upstream")
	}
	sanitized := outs[1]
	if !strings.Contains(sanitized, "HTTP/1.1 200 ") || !strings.Contains(sanitized, "Upstream-Saw-Verdict: suspicious") {
		t.Errorf("2nd command: not forwarded as suspicious:\n%s", sanitized)
	}
	if b := body(sanitized); b == sent(curls[1]) || !strings.Contains(b, "[removed: instruction_override]") || !strings.Contains(section, "`"+b+"`") {
		t.Errorf("2nd command: the upstream saw %s, which is not the sanitized body the README quotes", b)
	}
	clean := outs[2]
	if !strings.Contains(clean, "Upstream-Saw-Verdict: safe") || body(clean) != sent(curls[2]) {
		t.Errorf("3rd command: not forwarded unchanged as safe:\n%s", clean)
	}
	for _, line := range strings.Split(srv.Log(), "\n") {
		if strings.Contains(line, `"level":"warn"`) && !strings.Contains(line, "prompt injection detected") {
			t.Errorf("the quick start logs a warning: %s", line)
		}
		if strings.Contains(line, "capital of France") || strings.Contains(line, "French") {
			t.Errorf("a text reached the log: %s", line)
		}
	}
}
