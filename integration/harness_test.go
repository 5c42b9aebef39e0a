// Package integration runs the real server binary against real clients.
//
// TestMain builds ./cmd/caddy once; each test starts it with its own
// Caddyfile on free loopback ports and reads its log file afterwards.
package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store/pgtest"
)

var caddyBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "promptwall-it-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	caddyBin = filepath.Join(dir, "caddy")
	build := exec.Command("go", "build", "-o", caddyBin, "../cmd/caddy")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building caddy:", err)
		os.Exit(1)
	}
	code := m.Run()
	pgtest.StopShared()
	os.RemoveAll(dir)
	os.Exit(code)
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	// The kernel may hand a port just closed out again: two calls in a
	// row must not give one test the same port twice.
	givenPorts.Lock()
	defer givenPorts.Unlock()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !givenPorts.m[port] {
			givenPorts.m[port] = true
			return port
		}
	}
}

// givenPorts are the ports freePort gave in this process.
var givenPorts = struct {
	sync.Mutex
	m map[int]bool
}{m: map[int]bool{}}

// server is one running caddy process.
type server struct {
	t       testing.TB
	cmd     *exec.Cmd
	Dir     string // working dir; XDG_DATA_HOME and the log live here
	LogPath string // everything the process wrote to stdout and stderr
	mu      sync.Mutex
	done    chan struct{}
}

// startCaddy writes caddyfile into a fresh directory and runs
// `caddy run --config Caddyfile --adapter caddyfile` there, with
// XDG_DATA_HOME and XDG_CONFIG_HOME inside that directory. It waits until
// every address in waitFor accepts TCP connections. env adds variables.
func startCaddy(t testing.TB, caddyfile string, env []string, waitFor ...string) *server {
	t.Helper()
	s := launchCaddy(t, caddyfile, env, nil)
	for _, addr := range waitFor {
		s.waitTCP(addr)
	}
	return s
}

// launchCaddy starts caddy as startCaddy does, its command line prefixed
// by prefix (for example unshare and mount), and does not wait for it.
func launchCaddy(t testing.TB, caddyfile string, env, prefix []string) *server {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(cfg, []byte(caddyfile), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "caddy.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, prefix...), caddyBin, "run", "--config", cfg, "--adapter", "caddyfile")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"HOME="+dir,
	)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, Dir: dir, LogPath: logPath, done: make(chan struct{})}
	go func() { cmd.Wait(); logf.Close(); close(s.done) }()
	t.Cleanup(s.Stop)
	return s
}

func (s *server) waitTCP(addr string) {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			s.t.Fatalf("caddy exited early; log:\n%s", s.Log())
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("caddy did not listen on %s; log:\n%s", addr, s.Log())
}

// Stop ends the process gracefully (SIGINT), then forcibly.
func (s *server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// Kill ends the process with SIGKILL, as a crash would.
func (s *server) Kill() {
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

// Log returns everything the process has written so far.
func (s *server) Log() string {
	b, _ := os.ReadFile(s.LogPath)
	return string(b)
}

// Metrics fetches the Prometheus text from an admin or metrics URL.
func fetchText(t testing.TB, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return b.String()
}

// npmInstall runs `npm ci` in dir (a folder of this package with a
// package.json and package-lock.json) unless node_modules is up to date.
// The lockfile pins every client version.
var npmMu sync.Mutex

func npmInstall(t testing.TB, dir string) {
	t.Helper()
	npmMu.Lock()
	defer npmMu.Unlock()
	stamp := filepath.Join(dir, "node_modules", ".package-lock.json")
	lock := filepath.Join(dir, "package-lock.json")
	if si, err := os.Stat(stamp); err == nil {
		if li, err := os.Stat(lock); err == nil && !si.ModTime().Before(li.ModTime()) {
			return
		}
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
}

// nodeJSON runs a script as node does and decodes the one JSON line it prints into v.
func nodeJSON(t testing.TB, dir, script string, env []string, v any) {
	t.Helper()
	out, err := node(t, dir, env, script)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%s printed %q: %v", script, out, err)
	}
}

// node runs a script with the machine's Node in dir and returns stdout.
func node(t testing.TB, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("node", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("node %s: %v\nstderr:\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}
