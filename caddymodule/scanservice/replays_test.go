package scanservice

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/promptwall/promptwall/x402"
)

// TestPaymentIdentifier: a payment named by a payment-identifier is
// idempotent. Resent with the same text it gets the same scan again (a lost
// answer is recovered), never with another text; one identifier cannot name
// two payments; a malformed one is the client's error.
func TestPaymentIdentifier(t *testing.T) {
	const id = "pay_7d5d747be160e280504c099d984bcfe0"
	f := newFakeFacilitator(t)
	th := paidHandler(t, f, nil)
	offer := ask(t, th)
	header := echo(t, payment(t, offer, nil), offer, id)
	first := pay(t, th, header)
	if first.Code != 200 {
		t.Fatalf("first: %d %s", first.Code, first.Body)
	}
	again := pay(t, th, header)
	if again.Code != 200 || again.Body.String() != first.Body.String() ||
		again.Header().Get("PAYMENT-RESPONSE") != first.Header().Get("PAYMENT-RESPONSE") {
		t.Fatalf("resent with the same text: %d %s, want the first answer again", again.Code, again.Body)
	}
	other := th.do(t, "POST", "http://scan.example.com/v1/scan", `{"text": "another text"}`, http.Header{"Payment-Signature": {header}})
	if other.Code != 402 || offerOf(t, other).Error != x402.ReasonDuplicateSettlement {
		t.Fatalf("resent with another text: %d %s", other.Code, other.Body)
	}
	if f.count("/settle") != 1 || len(th.ledger(t)) != 1 {
		t.Fatalf("%d settle calls, %d ledger rows; want 1 and 1", f.count("/settle"), len(th.ledger(t)))
	}

	// Past the window, or without the identifier, a resend is a replay.
	th.clock.Add(replayWindow + time.Second)
	if w := pay(t, th, header); w.Code != 402 {
		t.Fatalf("resent after the window: %d", w.Code)
	}

	// The identifier on another payment: 409, nothing settled.
	otherPayment := echo(t, payment(t, offer, func(p *paymentParts) { p.memo = memoFor("another payment") }), offer, id)
	if w := pay(t, th, otherPayment); w.Code != 409 || errorCode(t, w) != codePaymentConflict || f.count("/settle") != 1 {
		t.Fatalf("one identifier on two payments: %d %s, %d settle calls", w.Code, w.Body, f.count("/settle"))
	}
	verifies := f.count("/verify")
	bad := echo(t, payment(t, offer, func(p *paymentParts) { p.memo = memoFor("bad id") }), offer, "short")
	if w := pay(t, th, bad); w.Code != 400 || !strings.Contains(w.Body.String(), "payment-identifier") || f.count("/verify") != verifies {
		t.Fatalf("malformed identifier: %d %s, %d more verify calls", w.Code, w.Body, f.count("/verify")-verifies)
	}
}

// TestResendWithoutIdentifier: without the extension, a payment answered
// once is used; the same text again gets 402.
func TestResendWithoutIdentifier(t *testing.T) {
	f := newFakeFacilitator(t)
	th := paidHandler(t, f, nil)
	header := payment(t, ask(t, th), nil)
	if w := pay(t, th, header); w.Code != 200 {
		t.Fatal(w.Code)
	}
	if w := pay(t, th, header); w.Code != 402 || offerOf(t, w).Error != x402.ReasonDuplicateSettlement {
		t.Fatalf("resent: %d %s", w.Code, w.Body)
	}
}
