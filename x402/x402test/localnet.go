package x402test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Localnet is a running `node localnet.mjs`: the fields are its JSON line.
type Localnet struct {
	RPC                  string `json:"rpc"`
	Facilitator          string `json:"facilitator"`
	Network              string `json:"network"`
	Asset                string `json:"asset"`
	PayTo                string `json:"payTo"`
	PayToTokenAccount    string `json:"payToTokenAccount"`
	FeePayer             string `json:"feePayer"`
	Payer                string `json:"payer"`
	PayerSecret          string `json:"payerSecret"`
	PayerTokenAccount    string `json:"payerTokenAccount"`
	Unfunded             string `json:"unfunded"`
	UnfundedSecret       string `json:"unfundedSecret"`
	UnfundedTokenAccount string `json:"unfundedTokenAccount"`

	dir string
	log *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Log is what the chain and facilitator wrote to stderr so far.
func (l *Localnet) Log() string { return l.log.String() }

// StartLocalnet installs the Node packages if needed, starts localnet.mjs on
// free loopback ports and stops it when the test ends. Its stdin is a pipe,
// so it also exits if the test binary dies. On failure its log is printed.
func StartLocalnet(t testing.TB) *Localnet {
	t.Helper()
	dir, err := NodeDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureNodeModules(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "localnet.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RPC_PORT=0", "FACILITATOR_PORT=0")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	l := &Localnet{dir: dir, log: &syncBuffer{}}
	cmd.Stderr = l.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting node localnet.mjs (is Node 20+ installed?): %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("localnet log:\n%s", l.Log())
		}
	})

	line := make(chan []byte, 1)
	go func() {
		r := bufio.NewReader(stdout)
		b, _ := r.ReadBytes('\n')
		line <- b
		io.Copy(io.Discard, r)
	}()
	select {
	case b := <-line:
		if err := json.Unmarshal(b, l); err != nil || l.RPC == "" || l.Facilitator == "" {
			t.Fatalf("localnet.mjs printed %q (%v); log:\n%s", b, err, l.Log())
		}
	case err := <-exited:
		t.Fatalf("localnet.mjs exited before it was ready: %v; log:\n%s", err, l.Log())
	case <-time.After(2 * time.Minute):
		t.Fatalf("localnet.mjs not ready after 2 minutes; log:\n%s", l.Log())
	}
	return l
}

// PayResult is the JSON line of pay.mjs.
type PayResult struct {
	Status           int             `json:"status"`
	Body             string          `json:"body"`
	PaymentResponse  json.RawMessage `json:"paymentResponse"`
	PaymentSignature *string         `json:"paymentSignature"`
	Error            *string         `json:"error"`
}

// Pay runs the real x402 client (pay.mjs) against url with the wallet whose
// base58 secret is given, POSTing body (pay.mjs's default when empty).
func (l *Localnet) Pay(t testing.TB, url, secret, body string) PayResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(l.dir, "pay.mjs"), url)
	cmd.Dir = l.dir
	cmd.Env = append(os.Environ(), "RPC_URL="+l.RPC, "PAYER_SECRET="+secret)
	if body != "" {
		cmd.Env = append(cmd.Env, "BODY="+body)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pay.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	var r PayResult
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		t.Fatalf("pay.mjs printed %q: %v\nstderr: %s", out, err, stderr.String())
	}
	return r
}

// TokenBalance reads a token account's balance in atomic units over the
// chain's JSON-RPC (getTokenAccountBalance).
func (l *Localnet) TokenBalance(t testing.TB, account string) uint64 {
	t.Helper()
	var res struct {
		Result struct {
			Value struct {
				Amount string `json:"amount"`
			} `json:"value"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := l.rpc("getTokenAccountBalance", []any{account}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		t.Fatalf("getTokenAccountBalance %s: %s", account, res.Error.Message)
	}
	v, err := strconv.ParseUint(res.Result.Value.Amount, 10, 64)
	if err != nil {
		t.Fatalf("getTokenAccountBalance %s: amount %q: %v", account, res.Result.Value.Amount, err)
	}
	return v
}

func (l *Localnet) rpc(method string, params []any, out any) error {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Post(l.RPC, "application/json", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s: decoding answer: %w", method, err)
	}
	return nil
}

// SetTokenBalance overwrites a token account's balance (a test control of
// localnet.mjs, not Solana API): for instance to drain a payer between the
// facilitator's verify and settle.
func (l *Localnet) SetTokenBalance(t testing.TB, account string, units uint64) {
	t.Helper()
	var res struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := l.rpc("localnet_setTokenBalance", []any{account, strconv.FormatUint(units, 10)}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		t.Fatalf("localnet_setTokenBalance %s: %s", account, res.Error.Message)
	}
}

// ExpireBlockhash moves the chain to a new blockhash: transactions signed
// over the old one no longer land (a test control of localnet.mjs).
func (l *Localnet) ExpireBlockhash(t testing.TB) {
	t.Helper()
	var res struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := l.rpc("localnet_expireBlockhash", []any{}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		t.Fatalf("localnet_expireBlockhash: %s", res.Error.Message)
	}
}
