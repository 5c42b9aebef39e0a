package scanservice

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/x402"
)

// TestCleanupWaitsForRequestsInFlight: a config cleaned up (a reload)
// while a paid scan waits on its settlement does not pull the engine or
// the store from under it: the scan is answered and its ledger row
// written, and the store closes after it. A request that comes after the
// cleanup gets 503, not a panic.
func TestCleanupWaitsForRequestsInFlight(t *testing.T) {
	f := newFakeFacilitator(t)
	th := paidHandler(t, f, nil)
	offer := ask(t, th)
	settling, proceed := make(chan struct{}), make(chan struct{})
	f.mu.Lock()
	f.settle = func(p *x402.PaymentPayload, req x402.Requirements) (int, any) {
		close(settling)
		<-proceed
		return 200, map[string]any{"success": true, "transaction": "5xSettled", "network": req.Network, "payer": "payer"}
	}
	f.mu.Unlock()

	var wg sync.WaitGroup
	wg.Add(1)
	var code int
	go func() {
		defer wg.Done()
		code = pay(t, th, payment(t, offer, nil)).Code
	}()
	select {
	case <-settling:
	case <-time.After(10 * time.Second):
		t.Fatal("the scan never reached settlement")
	}
	if err := th.Cleanup(); err != nil {
		t.Fatalf("cleanup: %v", err)
	}
	if th.engine == nil || th.store == nil {
		t.Fatal("cleanup dropped the engine or store of a request in flight")
	}
	close(proceed)
	wg.Wait()
	if code != http.StatusOK {
		t.Fatalf("the paid scan in flight got %d", code)
	}
	// The row is in the file, which the last holder closed.
	st, err := store.OpenSQLite(context.Background(), th.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.Ledger(context.Background(), time.Unix(0, 0), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil || len(rows) != 1 {
		t.Fatalf("ledger rows %d (%v), want 1", len(rows), err)
	}
	if w := pay(t, th, payment(t, offer, nil)); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("a request after cleanup got %d, want 503", w.Code)
	}
}
