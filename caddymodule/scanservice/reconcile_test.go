package scanservice

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/x402"
)

// leaveSettling pays with header while the facilitator's /settle fails, as
// when the server stops while it settles: the payment is left settling.
func leaveSettling(t *testing.T, th *testHandler, f *fakeFacilitator, header string) store.Payment {
	t.Helper()
	f.settle = func(*x402.PaymentPayload, x402.Requirements) (int, any) { return 502, map[string]any{"error": "gone"} }
	if w := pay(t, th, header); w.Code != 503 {
		t.Fatalf("settle 502: %d %s", w.Code, w.Body)
	}
	f.settle = nil
	got, known, err := th.store.Payment(context.Background(), paymentKey(t, header))
	if err != nil || !known || got.State != store.PaymentSettling {
		t.Fatalf("payment after an unknown settlement: %+v %v %v, want settling", got, known, err)
	}
	return got
}

// paymentKey is the store's key of the payment in header.
func paymentKey(t *testing.T, header string) string {
	t.Helper()
	p, err := x402.DecodePaymentHeader(header)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x402.CheckExactSVM(p, p.Accepted)
	if err != nil {
		t.Fatal(err)
	}
	return c.Key
}

func state(t *testing.T, th *testHandler, key string) store.PaymentState {
	t.Helper()
	p, _, err := th.store.Payment(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return p.State
}

// TestReconcileLeftBehind: a payment left settling is settled and recorded
// in the background once its own request's deadline has passed, and the
// client's retry gets its scan once, without another settlement.
func TestReconcileLeftBehind(t *testing.T) {
	f := newFakeFacilitator(t)
	th := paidHandler(t, f, nil)
	header := payment(t, ask(t, th), nil)
	p := leaveSettling(t, th, f, header)

	// Within the deadline of its own request: left alone.
	th.clock.Add(30 * time.Second)
	settles := f.count("/settle")
	th.reconcileOnce(context.Background())
	if f.count("/settle") != settles || state(t, th, p.Key) != store.PaymentSettling {
		t.Fatal("a payment still within its request's deadline was reconciled")
	}
	th.clock.Add(time.Minute)
	th.reconcileOnce(context.Background())
	if n := len(th.ledger(t)); n != 1 || state(t, th, p.Key) != store.PaymentSettled {
		t.Fatalf("after reconciling: %d ledger rows, state %s; want 1, settled", n, state(t, th, p.Key))
	}
	rows := th.ledger(t)
	if r := rows[0]; r.Payer != payerAddr || r.Price != 10000 || r.Verdict != "malicious" || r.CategoryCounts["instruction_override"] != 1 {
		t.Fatalf("reconciled row %+v", r)
	}
	settles = f.count("/settle")

	// A retry with another text is told which text the payment bought.
	other := th.do(t, "POST", "http://scan.example.com/v1/scan", `{"text": "a safe text"}`, http.Header{"Payment-Signature": {header}})
	if other.Code != 409 || errorCode(t, other) != codePaymentConflict {
		t.Fatalf("retry with another text: %d %s", other.Code, other.Body)
	}
	w := pay(t, th, header)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"verdict":"malicious"`) {
		t.Fatalf("retry after reconciliation: %d %s", w.Code, w.Body)
	}
	if pr, err := x402.DecodePaymentResponse(w.Header().Get("PAYMENT-RESPONSE")); err != nil || !pr.Success || pr.Transaction == "" {
		t.Fatalf("PAYMENT-RESPONSE of the retry: %+v %v", pr, err)
	}
	if w := pay(t, th, header); w.Code != 402 || offerOf(t, w).Error != x402.ReasonDuplicateSettlement {
		t.Fatalf("a reconciled scan was given twice: %d %s", w.Code, w.Body)
	}
	if f.count("/settle") != settles || len(th.ledger(t)) != 1 {
		t.Fatalf("the retry settled again (%d calls) or wrote a row (%d rows)", f.count("/settle")-settles, len(th.ledger(t)))
	}
	// The delivery mark reaches the store.
	deadline := time.Now().Add(5 * time.Second)
	for state(t, th, p.Key) != store.PaymentDelivered {
		if time.Now().After(deadline) {
			t.Fatalf("state %s, want delivered", state(t, th, p.Key))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReconcileUnresolved: a facilitator that cannot tell what became of a
// payment leaves it settling; after unresolvedAfter it is marked failed,
// with an error log for the operator, and never delivered.
func TestReconcileUnresolved(t *testing.T) {
	f := newFakeFacilitator(t)
	th := paidHandler(t, f, nil)
	header := payment(t, ask(t, th), nil)
	p := leaveSettling(t, th, f, header)
	f.settle = func(_ *x402.PaymentPayload, req x402.Requirements) (int, any) {
		return 200, map[string]any{"success": false, "errorReason": "invalid_exact_svm_transaction_simulation_failed", "network": req.Network}
	}
	th.clock.Add(2 * time.Minute)
	th.reconcileOnce(context.Background())
	if state(t, th, p.Key) != store.PaymentSettling {
		t.Fatalf("state %s after one unclear answer, want settling", state(t, th, p.Key))
	}
	if w := pay(t, th, header); w.Code != 503 || strings.Contains(w.Body.String(), "verdict") {
		t.Fatalf("retry while unresolved: %d %s", w.Code, w.Body)
	}
	th.clock.Add(unresolvedAfter)
	th.reconcileOnce(context.Background())
	if state(t, th, p.Key) != store.PaymentFailed {
		t.Fatalf("state %s after %v, want failed", state(t, th, p.Key), unresolvedAfter)
	}
	if th.logs.FilterMessage("could not learn whether a payment landed; check the chain and make good if it did").Len() != 1 {
		t.Fatal("no error log for the unresolved payment")
	}
	if w := pay(t, th, header); w.Code != 402 || len(th.ledger(t)) != 0 {
		t.Fatalf("retry of a failed payment: %d, %d rows", w.Code, len(th.ledger(t)))
	}
}

// TestStoreFileDeleted: the database deleted under the running service
// gives 503 and an error log, never an answer the store did not count.
func TestStoreFileDeleted(t *testing.T) {
	f := newFakeFacilitator(t)
	th := paidHandler(t, f, nil)
	header := payment(t, ask(t, th), nil)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(th.dbPath + suffix)
	}
	pc := th.do(t, "POST", "/precheck", `{"text": "hi", "caller": "`+payerAddr+`"}`, nil)
	if pc.Code != 503 || errorCode(t, pc) != codeStoreUnavailable || pc.Header().Get("Retry-After") != "5" {
		t.Fatalf("pre-check with the store deleted: %d %s", pc.Code, pc.Body)
	}
	w := pay(t, th, header)
	if w.Code != 503 || errorCode(t, w) != codeStoreUnavailable || w.Header().Get("Retry-After") != "5" || f.count("/settle") != 0 {
		t.Fatalf("paid scan with the store deleted: %d %s, %d settle calls", w.Code, w.Body, f.count("/settle"))
	}
	if n := th.logs.FilterMessage("payment store unavailable").Len(); n == 0 {
		t.Fatal("no error log")
	}
}

// TestReconcileRecordsWhatLanded: a payment that settled while the ledger
// could not be written is recorded by the next reconciliation, without
// waiting for its request's deadline and without asking the facilitator,
// and with no owner: a retry on any server may give its scan.
func TestReconcileRecordsWhatLanded(t *testing.T) {
	f := newFakeFacilitator(t)
	th := paidHandler(t, f, nil)
	header := payment(t, ask(t, th), nil)
	if w := payThrough(t, th, withFailingSettle, header); w.Code != 500 || errorCode(t, w) != "ledger_unavailable" {
		t.Fatalf("ledger write failed: %d %s", w.Code, w.Body)
	}
	th.clock.Add(time.Second)
	th.reconcileOnce(context.Background())
	p, _, err := th.store.Payment(context.Background(), paymentKey(t, header))
	if err != nil || p.State != store.PaymentSettled || p.Owner != "" || len(th.ledger(t)) != 1 || f.count("/settle") != 1 {
		t.Fatalf("after reconciliation: %+v %v, %d rows, %d settle calls; want settled with no owner, 1 row, 1 call",
			p, err, len(th.ledger(t)), f.count("/settle"))
	}
	if w := pay(t, th, header); w.Code != 200 || len(th.ledger(t)) != 1 {
		t.Fatalf("retry: %d %s", w.Code, w.Body)
	}
}
