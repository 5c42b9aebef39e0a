package integration

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptwall/promptwall/x402"
)

// TestChainFindsPaymentOnLocalnet learns a payment's fate from the chain
// alone, as a server must after losing /settle's answer: a payment settled
// by the real facilitator is found with the signature the facilitator
// returned; a signed payment never sent is pending while its blockhash is
// valid, and can never land once the blockhash has expired.
func TestChainFindsPaymentOnLocalnet(t *testing.T) {
	ln := startLocalnet(t)
	ctx := context.Background()
	fac := &x402.Facilitator{URL: ln.Facilitator}
	req, err := x402.Mainnet.Requirements("10000", ln.PayTo, ln.FeePayer)
	if err != nil {
		t.Fatal(err)
	}
	s := &settlingSeller{t: t, fac: fac, req: req}
	s.settle.Store(true)
	srv := httptest.NewServer(s)
	defer srv.Close()
	chain := &x402.ChainClient{URL: ln.RPC, ClockSlack: time.Second}

	// 1. Paid and settled through the real facilitator.
	received := time.Now()
	paid := ln.pay(t, srv.URL, ln.PayerSecret, map[string]string{"text": "hello"})
	if paid.Status != http.StatusOK || paid.PaymentResponse == nil || !paid.PaymentResponse.Success {
		t.Fatalf("payment: %+v", paid)
	}
	tx, source := paymentTransaction(t, paid.PaymentSignature)
	if source.String() != ln.PayerTokenAccount {
		t.Fatalf("transfer source %s, want the payer's token account %s", source, ln.PayerTokenAccount)
	}
	fate, err := chain.FindPayment(ctx, tx, source, received)
	if err != nil {
		t.Fatal(err)
	}
	if fate.State != x402.PaymentLanded || fate.Signature != paid.PaymentResponse.Transaction || !fate.Succeeded ||
		fate.Err != nil || fate.Slot == 0 {
		t.Fatalf("settled payment: %+v, want landed and succeeded as %s", fate, paid.PaymentResponse.Transaction)
	}

	// 2. Signed by the real client, never settled.
	s.settle.Store(false)
	received2 := time.Now()
	held := ln.pay(t, srv.URL, ln.PayerSecret, map[string]string{"text": "hello"})
	if held.Status != http.StatusServiceUnavailable || held.PaymentSignature == "" || held.PaymentSignature == paid.PaymentSignature {
		t.Fatalf("held payment: %+v", held)
	}
	tx2, source2 := paymentTransaction(t, held.PaymentSignature)
	if source2 != source || tx2.Message.RecentBlockhash != tx.Message.RecentBlockhash {
		t.Fatal("the held payment was meant to share the settled one's account and blockhash")
	}
	if fate, err := chain.FindPayment(ctx, tx2, source2, received2); err != nil || fate.State != x402.PaymentPending {
		t.Fatalf("unsent payment, blockhash valid: %+v, %v", fate, err)
	}

	// The newest block must be later than the receipt plus the slack
	// before an expired blockhash is a verdict.
	time.Sleep(time.Until(received2.Add(2 * time.Second)))
	ln.ExpireBlockhash(t)
	if fate, err := chain.FindPayment(ctx, tx2, source2, time.Now().Add(time.Hour)); err != nil || fate.State != x402.PaymentPending {
		t.Fatalf("unsent payment received after the newest block: %+v, %v", fate, err)
	}
	if fate, err := chain.FindPayment(ctx, tx2, source2, received2); err != nil || fate.State != x402.PaymentNeverLanded {
		t.Fatalf("unsent payment, blockhash expired: %+v, %v", fate, err)
	}
	// The settled one is still found, its blockhash expired or not.
	if fate, err := chain.FindPayment(ctx, tx, source, received); err != nil || fate.State != x402.PaymentLanded ||
		fate.Signature != paid.PaymentResponse.Transaction {
		t.Fatalf("settled payment after expiry: %+v, %v", fate, err)
	}
	// And the expired payment really cannot be settled any more.
	p, err := x402.DecodePaymentHeader(held.PaymentSignature)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := fac.Settle(ctx, p, req); err == nil && st.Success {
		t.Fatalf("the expired payment settled: %+v", st)
	}
}

// paymentTransaction decodes a PAYMENT-SIGNATURE header's transaction and
// its transfer's source token account.
func paymentTransaction(t *testing.T, header string) (*x402.Transaction, x402.PublicKey) {
	t.Helper()
	p, err := x402.DecodePaymentHeader(header)
	if err != nil {
		t.Fatal(err)
	}
	tx, source, err := x402.PaymentTransaction(p)
	if err != nil {
		t.Fatal(err)
	}
	return tx, source
}

// settlingSeller answers 402, then checks, verifies and settles a payment
// through the facilitator; with settle off it answers 503 instead, leaving
// the signed payment unsent.
type settlingSeller struct {
	t      *testing.T
	fac    *x402.Facilitator
	req    x402.Requirements
	settle atomic.Bool
}

func (s *settlingSeller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := r.Header.Get(x402.HeaderPaymentSignature)
	if h == "" {
		pr, err := x402.PaymentRequired{X402Version: x402.Version,
			Resource: x402.Resource{URL: "http://" + r.Host + r.URL.Path, MimeType: "application/json"},
			Accepts:  []x402.Requirements{s.req}}.Encode()
		if err != nil {
			s.t.Error(err)
		}
		w.Header().Set(x402.HeaderPaymentRequired, pr)
		w.WriteHeader(http.StatusPaymentRequired)
		return
	}
	if !s.settle.Load() {
		http.Error(w, "not settling", http.StatusServiceUnavailable)
		return
	}
	p, err := x402.DecodePaymentHeader(h)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req, err := x402.Match(p.Accepted, []x402.Requirements{s.req})
	if err == nil {
		_, err = x402.CheckExactSVM(p, req)
	}
	var v *x402.VerifyResponse
	if err == nil {
		v, err = s.fac.Verify(r.Context(), p, req)
	}
	if err == nil && !v.IsValid {
		err = errors.New(v.InvalidReason)
	}
	var st *x402.SettleResponse
	if err == nil {
		st, err = s.fac.Settle(r.Context(), p, req)
	}
	if err == nil && !st.Success {
		err = errors.New(st.ErrorReason)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusPaymentRequired)
		return
	}
	w.Header().Set(x402.HeaderPaymentResponse, st.Header())
	w.Write([]byte(`{"ok":true}`))
}
