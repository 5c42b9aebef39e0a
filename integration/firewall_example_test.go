package integration

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// outsideAddress is an address of this machine other than loopback, or ""
// when it has none.
func outsideAddress(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

// TestCaddyfileExampleFirewall runs Caddyfile.example as shipped, with its
// environment variables pointing the firewall at the fake upstream: the
// example must work out of the box.
func TestCaddyfileExampleFirewall(t *testing.T) {
	example, err := os.ReadFile("../Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	up := newFakeLLM(t)
	port := strconv.Itoa(freePort(t))
	addr := "127.0.0.1:" + port
	env := []string{
		"PROMPTWALL_UPSTREAM=" + up.srv.URL,
		"PROMPTWALL_FIREWALL_PORT=" + port,
		"CADDY_ADMIN=127.0.0.1:" + strconv.Itoa(freePort(t)),
		// The file's other site (prompt_scan) starts too: keep it off the
		// default port, which another test or program may hold.
		"PROMPTWALL_SCAN_PORT=" + strconv.Itoa(freePort(t)),
	}
	srv := startCaddy(t, string(example), env, addr)
	// It starts without a warning, and on this machine's loopback only.
	for _, line := range strings.Split(srv.Log(), "\n") {
		if strings.Contains(line, `"level":"warn"`) {
			t.Errorf("the example starts with a warning: %s", line)
		}
	}
	if ip := outsideAddress(t); ip != "" {
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, port), time.Second); err == nil {
			c.Close()
			t.Errorf("the example listens on %s, not on loopback only", ip)
		}
	}

	body := func(text string) []byte {
		b, _ := json.Marshal(map[string]any{"model": "gpt-4o", "messages": []any{map[string]any{"role": "user", "content": text}}})
		return b
	}
	resp, rb := postRaw(t, "http://"+addr+"/v1/chat/completions", body(e2eMalicious), "")
	if resp.StatusCode != 400 || !strings.Contains(string(rb), "prompt_injection_detected") {
		t.Fatalf("malicious: %d %s", resp.StatusCode, rb)
	}
	if resp.Header.Get("Prompt-Firewall-Verdict") != "malicious" {
		t.Errorf("response verdict header %q", resp.Header.Get("Prompt-Firewall-Verdict"))
	}
	if n := len(up.recorded()); n != 0 {
		t.Fatalf("upstream got %d requests", n)
	}
	safe := body("What is the capital of France?")
	resp, rb = postRaw(t, "http://"+addr+"/v1/chat/completions", safe, "")
	if resp.StatusCode != 200 || !strings.Contains(string(rb), "pong") {
		t.Fatalf("safe: %d %s", resp.StatusCode, rb)
	}
	got := up.recorded()
	if len(got) != 1 || string(got[0].Body) != string(safe) || got[0].Header.Get("Prompt-Firewall-Verdict") != "safe" {
		t.Fatalf("upstream got %+v", got)
	}
}

// TestCaddyfileExampleFormatted: caddy fmt leaves the shipped Caddyfiles
// as they are.
func TestCaddyfileExampleFormatted(t *testing.T) {
	for _, name := range []string{"../Caddyfile.example", "../examples/quickstart.caddyfile"} {
		out, err := exec.Command(caddyBin, "fmt", name).Output()
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			t.Fatalf("caddy fmt %s: %v: %s", name, err, ee.Stderr)
		} else if err != nil {
			t.Fatal(err)
		}
		example, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != string(example) {
			t.Errorf("caddy fmt changes %s; run caddy fmt --overwrite %[1]s", name)
		}
	}
}
