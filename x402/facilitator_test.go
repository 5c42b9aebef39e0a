package x402

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeFacilitator answers with a fixed status and body and records what it
// was sent.
type fakeFacilitator struct {
	mu     sync.Mutex // the handler of a timed-out call may still run
	status int
	body   string
	delay  time.Duration

	method, path, auth, contentType string
	got                             []byte
}

func (f *fakeFacilitator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	got, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.method, f.path = r.Method, r.URL.Path
	f.auth, f.contentType = r.Header.Get("Authorization"), r.Header.Get("Content-Type")
	f.got = got
	delay, status, body := f.delay, f.status, f.body
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (f *fakeFacilitator) set(delay time.Duration, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delay, f.body = delay, body
}

func startFake(t *testing.T, status int, body string) (*fakeFacilitator, *Facilitator) {
	t.Helper()
	f := &fakeFacilitator{status: status, body: body}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, &Facilitator{URL: srv.URL + "/", Header: http.Header{"Authorization": {"Bearer k1"}}, Timeout: 2 * time.Second}
}

func testPayload(t *testing.T) (*PaymentPayload, Requirements) {
	r := loadRecorded(t)["paid"]
	return decodeRecorded(t, r), r.Requirements
}

func TestFacilitatorSupported(t *testing.T) {
	f, c := startFake(t, 200, `{"kinds":[
		{"x402Version":1,"scheme":"exact","network":"solana","extra":{"feePayer":"11111111111111111111111111111111"}},
		{"x402Version":2,"scheme":"exact","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp","extra":{"feePayer":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"}},
		{"x402Version":2,"scheme":"exact","network":"solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1","extra":{"feePayer":"not base58!"}}],
		"extensions":[],"signers":{"solana:*":["EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"]}}`)
	s, err := c.Supported(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if f.method != "GET" || f.path != "/supported" || f.auth != "Bearer k1" {
		t.Fatalf("request %s %s auth %q", f.method, f.path, f.auth)
	}
	fp, err := s.FeePayer(Mainnet.CAIP2)
	if err != nil || fp != Mainnet.USDCMint {
		t.Fatalf("FeePayer(mainnet) = %q, %v", fp, err)
	}
	if _, err := s.FeePayer(Devnet.CAIP2); err == nil {
		t.Fatal("an invalid fee payer was returned")
	}
	if _, err := s.FeePayer("solana"); err == nil {
		t.Fatal("a v1 kind was used")
	}
	if fp, err := c.FeePayer(context.Background(), Mainnet.CAIP2); err != nil || fp != Mainnet.USDCMint {
		t.Fatalf("Facilitator.FeePayer = %q, %v", fp, err)
	}
}

func TestFacilitatorVerifySendsPayloadAsReceived(t *testing.T) {
	f, c := startFake(t, 200, `{"isValid":true,"payer":"P"}`)
	p, req := testPayload(t)
	v, err := c.Verify(context.Background(), p, req)
	if err != nil || !v.IsValid || v.Payer != "P" {
		t.Fatalf("verify: %+v, %v", v, err)
	}
	if f.method != "POST" || f.path != "/verify" || f.auth != "Bearer k1" || f.contentType != "application/json" {
		t.Fatalf("request %s %s auth %q type %q", f.method, f.path, f.auth, f.contentType)
	}
	var body struct {
		X402Version         int             `json:"x402Version"`
		PaymentPayload      json.RawMessage `json:"paymentPayload"`
		PaymentRequirements Requirements    `json:"paymentRequirements"`
	}
	if err := json.Unmarshal(f.got, &body); err != nil {
		t.Fatal(err)
	}
	if body.X402Version != 2 || !bytes.Equal(body.PaymentPayload, p.Raw) {
		t.Fatalf("payload sent %s\nwant %s", body.PaymentPayload, p.Raw)
	}
	if body.PaymentRequirements.Amount != req.Amount || body.PaymentRequirements.FeePayer() != req.FeePayer() {
		t.Fatalf("requirements sent %+v", body.PaymentRequirements)
	}
}

func TestFacilitatorDefiniteAnswers(t *testing.T) {
	p, req := testPayload(t)
	ctx := context.Background()
	_, c := startFake(t, 200, `{"isValid":false,"invalidReason":"invalid_exact_svm_transaction_simulation_failed"}`)
	v, err := c.Verify(ctx, p, req)
	if err != nil || v.IsValid || v.InvalidReason != ReasonSimulationFailed {
		t.Fatalf("verify: %+v, %v", v, err)
	}
	// Some facilitators answer an invalid payment with 400 and a verdict.
	_, c = startFake(t, 400, `{"isValid":false,"invalidReason":"invalid_exact_svm_payload_amount_mismatch"}`)
	if v, err := c.Verify(ctx, p, req); err != nil || v.IsValid || v.InvalidReason != ReasonAmountMismatch {
		t.Fatalf("verify 400: %+v, %v", v, err)
	}
	_, c = startFake(t, 200, `{"isValid":false}`)
	if v, err := c.Verify(ctx, p, req); err != nil || v.InvalidReason == "" {
		t.Fatalf("a refusal without reason should get one: %+v, %v", v, err)
	}
	f, c := startFake(t, 200, `{"success":false,"errorReason":"duplicate_settlement","transaction":"","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}`)
	s, err := c.Settle(ctx, p, req)
	if err != nil || s.Success || s.ErrorReason != ReasonDuplicateSettlement || f.path != "/settle" {
		t.Fatalf("settle: %+v, %v (path %s)", s, err, f.path)
	}
	_, c = startFake(t, 200, `{"success":true,"transaction":"5sig","payer":"P"}`)
	s, err = c.Settle(ctx, p, req)
	if err != nil || !s.Success || s.Transaction != "5sig" || s.Network != req.Network {
		t.Fatalf("settle: %+v, %v", s, err)
	}
}

func TestFacilitatorUnavailable(t *testing.T) {
	p, req := testPayload(t)
	ctx := context.Background()
	cases := []struct {
		name, path string
		status     int
		body       string
	}{
		{"500", "/verify", 500, `{"error":"boom"}`},
		{"500 with a verdict", "/verify", 500, `{"isValid":false,"invalidReason":"x"}`},
		{"502 html", "/settle", 502, `<html>bad gateway</html>`},
		{"429", "/verify", 429, `{"error":"slow down"}`},
		{"401", "/verify", 401, `{"error":"bad key"}`},
		{"404", "/settle", 404, `not found`},
		{"bad JSON", "/verify", 200, `{"isValid":`},
		{"no verdict", "/verify", 200, `{"payer":"P"}`},
		{"verdict not a bool", "/verify", 200, `{"isValid":"true"}`},
		{"settle without success", "/settle", 200, `{"transaction":"x"}`},
		{"success without transaction", "/settle", 200, `{"success":true}`},
		{"empty body", "/settle", 200, ``},
		{"too large", "/verify", 200, `{"isValid":true,"x":"` + strings.Repeat("a", maxFacilitatorBody) + `"}`},
		{"no kinds", "/supported", 200, `{"kinds":[]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, fc := startFake(t, c.status, c.body)
			var err error
			switch c.path {
			case "/verify":
				_, err = fc.Verify(ctx, p, req)
			case "/settle":
				_, err = fc.Settle(ctx, p, req)
			default:
				_, err = fc.Supported(ctx)
			}
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("got %v, want ErrUnavailable", err)
			}
		})
	}
}

func TestFacilitatorTimeouts(t *testing.T) {
	p, req := testPayload(t)
	f, c := startFake(t, 200, `{"isValid":true}`)
	f.set(2*time.Second, f.body)
	c.Timeout = 100 * time.Millisecond
	start := time.Now()
	_, err := c.Verify(context.Background(), p, req)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("verify past its timeout: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("verify returned after %v, its timeout is 100ms", d)
	}
	// Settlement has its own, longer budget; a cancelled caller also ends it.
	f.set(300*time.Millisecond, `{"success":true,"transaction":"t"}`)
	c.SettleTimeout = 2 * time.Second
	if s, err := c.Settle(context.Background(), p, req); err != nil || !s.Success {
		t.Fatalf("settle within SettleTimeout: %+v, %v", s, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Settle(ctx, p, req); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("settle with a cancelled context: %v", err)
	}
}

func TestFacilitatorUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	p, req := testPayload(t)
	c := &Facilitator{URL: url}
	if _, err := c.Verify(context.Background(), p, req); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("closed port: %v", err)
	}
	if _, err := (&Facilitator{}).Verify(context.Background(), p, req); err == nil || errors.Is(err, ErrUnavailable) {
		t.Fatalf("no URL should be a configuration error: %v", err)
	}
	if _, err := c.Settle(context.Background(), nil, req); err == nil {
		t.Fatal("nil payload sent")
	}
}
