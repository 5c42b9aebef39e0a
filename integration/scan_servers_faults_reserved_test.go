package integration

import (
	"net/http"
	"testing"
	"time"
)

// TestScanServersFaultRefusedIsNotCharged has the commit of a payment's
// reservation held on the wire, as a network partition does, until the
// request gives up on the store: the answer is 503 store_unavailable,
// "nothing was charged". Then the partition heals, and the commit, held,
// reaches the database after all. The payment must still never be charged:
// the client was told it was not, and pays anew. The window watched is the
// longest reconciliation takes to look at a payment of a live server: its
// request's bound (settle_timeout 2 s plus a 15 s margin) and one 10 s tick
// after the reservation.
func TestScanServersFaultRefusedIsNotCharged(t *testing.T) {
	c := startFaultCluster(t, 1)
	l := c.startFaultLoad(t, 0, 0)
	// A connection used a moment ago is handed out without a ping: the
	// reservation is written to it.
	if p := l.pay(0); p.first.status != http.StatusOK {
		t.Fatalf("paid scan: %v", p.first)
	}
	time.Sleep(time.Second) // its delivery mark is written
	// The reservation is one transaction; the fault strikes at its COMMIT
	// (a simple-protocol query).
	c.gate.holdOn([]byte("commit\x00"))
	p := l.pay(0)
	if !c.gate.held() {
		t.Fatal("no commit was sent: the fault did not strike")
	}
	c.gate.open()
	if p.first.status != http.StatusServiceUnavailable || p.first.code != "store_unavailable" {
		t.Fatalf("paid scan whose reservation could not be committed: %v, want 503 store_unavailable", p.first)
	}
	time.Sleep(500 * time.Millisecond)
	reserved := readFaultBooks(t, c.dsn).settling
	if reserved != 1 {
		t.Fatalf("%d payments in flight in the database after the held commit went through, want 1", reserved)
	}
	// Reserved as the request came in; left behind, for the server's own
	// reconciliation, 17 s later, and looked at on its next 10 s tick.
	answered := p.first.sent.Add(p.first.took)
	for end := p.first.sent.Add(30 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if !c.fac.wasSettled(p.key) {
			continue
		}
		rows := readFaultBooks(t, c.dsn).rows
		again := faultPost(c.urls[0]+"/scan", scanText, p.header)
		t.Fatalf("a payment answered 503 store_unavailable (nothing was charged) was settled %v later, with %d ledger row(s); "+
			"a retry with the same payment: %v (scan given: %v)",
			time.Since(answered).Round(time.Second), rows[p.payer], again, again.result)
	}
}
