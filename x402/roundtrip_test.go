package x402

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/promptwall/promptwall/x402/x402test"
)

var record = flag.Bool("x402.record", false, "rewrite testdata/payment-headers.json from the real client")

// recorded is one entry of testdata/payment-headers.json: the requirements
// a seller offered and the PAYMENT-SIGNATURE header the real client sent.
type recorded struct {
	Name         string       `json:"name"`
	Requirements Requirements `json:"requirements"`
	Header       string       `json:"header"`
	Payer        string       `json:"payer"`
}

// seller is a Go x402 seller built from this package, as the scan handler
// will be: 402 with requirements, then local checks, verify, settle, 200.
type seller struct {
	t   *testing.T
	fac *Facilitator
	req Requirements
	// beforeSettle, when set, runs between a valid verify and settle.
	beforeSettle func()

	mu      sync.Mutex
	headers []string
	checked []*Checked
	verify  []*VerifyResponse
}

func (s *seller) setBeforeSettle(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beforeSettle = f
}

// seen returns copies of what the seller recorded so far.
func (s *seller) seen() (headers []string, checked []*Checked, verify []*VerifyResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.headers...), append([]*Checked(nil), s.checked...), append([]*VerifyResponse(nil), s.verify...)
}

func (s *seller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	required := func(reason string) {
		h, err := PaymentRequired{X402Version: Version, Error: reason,
			Resource: Resource{URL: "http://" + r.Host + r.URL.Path, Description: "test scan", MimeType: "application/json"},
			Accepts:  []Requirements{s.req}}.Encode()
		if err != nil {
			s.t.Error(err)
		}
		w.Header().Set(HeaderPaymentRequired, h)
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusPaymentRequired)
		json.NewEncoder(w).Encode(map[string]string{"error": reason})
	}
	h := r.Header.Get(HeaderPaymentSignature)
	if h == "" {
		required("PAYMENT-SIGNATURE header is required")
		return
	}
	s.mu.Lock()
	s.headers = append(s.headers, h)
	s.mu.Unlock()
	p, err := DecodePaymentHeader(h)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req, err := Match(p.Accepted, []Requirements{s.req})
	if err != nil {
		required("invalid_exact_svm_payload_requirements_mismatch")
		return
	}
	c, err := CheckExactSVM(p, req)
	var inv *Invalid
	if errors.As(err, &inv) {
		required(inv.Reason)
		return
	} else if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	s.checked = append(s.checked, c)
	s.mu.Unlock()
	v, err := s.fac.Verify(r.Context(), p, req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	s.mu.Lock()
	s.verify = append(s.verify, v)
	s.mu.Unlock()
	if !v.IsValid {
		required(v.InvalidReason)
		return
	}
	s.mu.Lock()
	hook := s.beforeSettle
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	st, err := s.fac.Settle(r.Context(), p, req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set(HeaderPaymentResponse, st.Header())
	if !st.Success {
		w.WriteHeader(http.StatusPaymentRequired)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"verdict":"safe"}`))
}

// TestRealClientPaysThroughLocalFacilitator runs the whole payment for real
// on one machine: the npm x402 client pays a Go seller built from this
// package; the Go facilitator client verifies and settles through the
// reference facilitator; $0.01 of USDC moves on a LiteSVM chain running the
// real SPL Token program. A replay and an unfunded payer are refused.
func TestRealClientPaysThroughLocalFacilitator(t *testing.T) {
	ln := x402test.StartLocalnet(t)
	ctx := context.Background()
	fac := &Facilitator{URL: ln.Facilitator, Header: http.Header{"Authorization": {"Bearer local"}}}

	sup, err := fac.Supported(ctx)
	if err != nil {
		t.Fatal(err)
	}
	feePayer, err := sup.FeePayer(Mainnet.CAIP2)
	if err != nil {
		t.Fatal(err)
	}
	if feePayer != ln.FeePayer {
		t.Fatalf("/supported fee payer %s, localnet says %s", feePayer, ln.FeePayer)
	}
	amount, err := USDCAmount("0.01")
	if err != nil {
		t.Fatal(err)
	}
	req, err := Mainnet.Requirements(amount, ln.PayTo, feePayer)
	if err != nil {
		t.Fatal(err)
	}
	if req.Asset != ln.Asset || req.Network != ln.Network {
		t.Fatalf("requirements %s/%s, chain has %s/%s", req.Network, req.Asset, ln.Network, ln.Asset)
	}
	s := &seller{t: t, fac: fac, req: req}
	srv := httptest.NewServer(s)
	defer srv.Close()

	merchant0 := ln.TokenBalance(t, ln.PayToTokenAccount)
	payer0 := ln.TokenBalance(t, ln.PayerTokenAccount)

	// 1. A funded payer pays and gets the resource.
	res := ln.Pay(t, srv.URL+"/scan", ln.PayerSecret, `{"text":"hello"}`)
	if res.Status != http.StatusOK || res.Error != nil || res.PaymentSignature == nil {
		t.Fatalf("payment: %+v", res)
	}
	var pr SettleResponse
	if err := json.Unmarshal(res.PaymentResponse, &pr); err != nil {
		t.Fatalf("PAYMENT-RESPONSE %s: %v", res.PaymentResponse, err)
	}
	if !pr.Success || pr.Payer != ln.Payer || pr.Network != Mainnet.CAIP2 || pr.Transaction == "" {
		t.Fatalf("PAYMENT-RESPONSE %+v", pr)
	}
	if _, checked, _ := s.seen(); len(checked) != 1 || checked[0].Payer != ln.Payer || checked[0].Amount != 10000 {
		t.Fatalf("local checks saw %+v", checked)
	}
	if got := ln.TokenBalance(t, ln.PayToTokenAccount); got != merchant0+10000 {
		t.Fatalf("merchant holds %d, want %d", got, merchant0+10000)
	}
	if got := ln.TokenBalance(t, ln.PayerTokenAccount); got != payer0-10000 {
		t.Fatalf("payer holds %d, want %d", got, payer0-10000)
	}
	paid := *res.PaymentSignature

	// 2. The same header again: the facilitator refuses to settle it twice
	// and no more money moves.
	p, err := DecodePaymentHeader(paid)
	if err != nil {
		t.Fatal(err)
	}
	again, err := fac.Settle(ctx, p, req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Success || again.ErrorReason != ReasonDuplicateSettlement {
		t.Fatalf("second settlement: %+v", again)
	}
	if got := ln.TokenBalance(t, ln.PayToTokenAccount); got != merchant0+10000 {
		t.Fatalf("after replay the merchant holds %d, want %d", got, merchant0+10000)
	}

	// 3. A payer without USDC: the local checks pass (the transaction is well
	// formed), the facilitator's simulation refuses it, nothing moves.
	unfunded0 := ln.TokenBalance(t, ln.UnfundedTokenAccount)
	res = ln.Pay(t, srv.URL+"/scan", ln.UnfundedSecret, "")
	if res.Status != http.StatusPaymentRequired {
		t.Fatalf("unfunded payment: %+v", res)
	}
	headers, _, verified := s.seen()
	last := verified[len(verified)-1]
	if last.IsValid || last.InvalidReason != ReasonSimulationFailed {
		t.Fatalf("unfunded verify: %+v", last)
	}
	if got := ln.TokenBalance(t, ln.PayToTokenAccount); got != merchant0+10000 {
		t.Fatalf("after the unfunded attempt the merchant holds %d", got)
	}
	if got := ln.TokenBalance(t, ln.UnfundedTokenAccount); got != unfunded0 {
		t.Fatalf("unfunded account changed to %d", got)
	}
	unfundedHeader := headers[len(headers)-1]

	// 4. A seller that sets extra.memo: the client writes it, the checks and
	// the facilitator accept it.
	memoReq := req
	memoReq.Extra = map[string]any{"feePayer": feePayer, "memo": "promptwall-scan-42"}
	s2 := &seller{t: t, fac: fac, req: memoReq}
	srv2 := httptest.NewServer(s2)
	defer srv2.Close()
	res = ln.Pay(t, srv2.URL+"/scan", ln.PayerSecret, "")
	if res.Status != http.StatusOK || res.PaymentSignature == nil {
		t.Fatalf("payment with memo: %+v", res)
	}
	if got := ln.TokenBalance(t, ln.PayToTokenAccount); got != merchant0+20000 {
		t.Fatalf("merchant holds %d, want %d", got, merchant0+20000)
	}

	// 5. The payer is drained between verify and settle: the facilitator's
	// settlement fails for real, the seller answers 402 with PAYMENT-RESPONSE
	// success false, and nothing moves.
	payerNow := ln.TokenBalance(t, ln.PayerTokenAccount)
	s.setBeforeSettle(func() { ln.SetTokenBalance(t, ln.PayerTokenAccount, 0) })
	res = ln.Pay(t, srv.URL+"/scan", ln.PayerSecret, "")
	s.setBeforeSettle(nil)
	if res.Status != http.StatusPaymentRequired {
		t.Fatalf("payment drained before settlement: %+v", res)
	}
	var failed SettleResponse
	if err := json.Unmarshal(res.PaymentResponse, &failed); err != nil || failed.Success || failed.ErrorReason == "" {
		t.Fatalf("PAYMENT-RESPONSE of a failed settlement %s: %v", res.PaymentResponse, err)
	}
	if _, _, verified := s.seen(); !verified[len(verified)-1].IsValid {
		t.Fatalf("verify before the drain should pass: %+v", last)
	}
	if got := ln.TokenBalance(t, ln.PayToTokenAccount); got != merchant0+20000 {
		t.Fatalf("after a failed settlement the merchant holds %d, want %d", got, merchant0+20000)
	}
	ln.SetTokenBalance(t, ln.PayerTokenAccount, payerNow)
	t.Logf("settlement after the drain: %s", failed.ErrorReason)

	// Every RPC call the client and the facilitator made is implemented.
	if strings.Contains(ln.Log(), "unknown RPC method") {
		t.Fatalf("the chain was asked for methods it does not serve:\n%s", ln.Log())
	}

	if *record {
		recs := []recorded{
			{Name: "paid", Requirements: req, Header: paid, Payer: ln.Payer},
			{Name: "unfunded", Requirements: req, Header: unfundedHeader, Payer: ln.Unfunded},
			{Name: "memo", Requirements: memoReq, Header: *res.PaymentSignature, Payer: ln.Payer},
		}
		b, err := json.MarshalIndent(recs, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "payment-headers.json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %d payment headers", len(recs))
	}
}
