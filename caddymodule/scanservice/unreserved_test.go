package scanservice

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
)

// lateCommitStore takes a reservation but reports an error, as a commit
// the network held past the request's deadline does.
type lateCommitStore struct{ store.Store }

func (s lateCommitStore) Reserve(ctx context.Context, p store.Payment, now time.Time) (store.Payment, bool, error) {
	s.Store.Reserve(ctx, p, now)
	return store.Payment{}, false, errors.New("commit timed out")
}

// TestFailedReservationIsNeverCharged: a reservation that failed as far as
// the client was told, but that the store took, is released by
// reconciliation, never settled, however long after its reservation
// reconciliation comes to it; a retry with the payment is charged once and
// gets its scan at once.
func TestFailedReservationIsNeverCharged(t *testing.T) {
	for _, c := range []struct {
		retry bool
		after time.Duration // from the failed reservation to reconciliation
	}{{false, time.Second}, {false, time.Minute}, {true, 0}} {
		f := newFakeFacilitator(t)
		th := paidHandler(t, f, nil)
		header := payment(t, ask(t, th), nil)
		w := payThrough(t, th, func(s store.Store) store.Store { return lateCommitStore{s} }, header)
		if w.Code != 503 || errorCode(t, w) != codeStoreUnavailable || !strings.Contains(w.Body.String(), "retry with the same payment") {
			t.Fatalf("reservation failed: %d %s", w.Code, w.Body)
		}
		key := paymentKey(t, header)
		if p, ok, _ := th.store.Payment(context.Background(), key); !ok || p.State != store.PaymentSettling {
			t.Fatalf("the store did not keep the late reservation: %+v %v", p, ok)
		}
		if c.retry {
			if w := pay(t, th, header); w.Code != 200 || f.count("/settle") != 1 || len(th.ledger(t)) != 1 {
				t.Fatalf("retry: %d %s, %d settle calls, %d rows; want 200, 1, 1", w.Code, w.Body, f.count("/settle"), len(th.ledger(t)))
			}
			continue
		}
		th.clock.Add(c.after)
		th.reconcileOnce(context.Background())
		if _, ok, _ := th.store.Payment(context.Background(), key); ok || f.count("/settle") != 0 || f.count("/verify") != 0 {
			t.Fatalf("reconciled %v after: payment kept %v, %d settle calls; want released and 0", c.after, ok, f.count("/settle"))
		}
		th.clock.Add(time.Hour)
		th.reconcileOnce(context.Background())
		if f.count("/settle") != 0 || len(th.ledger(t)) != 0 {
			t.Fatal("the released payment was charged later")
		}
	}
}

// TestLiveServersPaymentIsItsOwn: a payment another live server holds in
// flight is left to it, however old: only it knows whether it sent it.
// Once it stops beating, the payment is left behind and settled here.
func TestLiveServersPaymentIsItsOwn(t *testing.T) {
	f := newFakeFacilitator(t)
	th := paidHandler(t, f, nil)
	header := payment(t, ask(t, th), nil)
	p := leaveSettling(t, th, f, header)
	ctx := context.Background()
	// Hand it to another server, alive (busy reads the wall clock).
	settles := f.count("/settle")
	if err := th.store.Release(ctx, p.Key); err != nil {
		t.Fatal(err)
	}
	p.Owner = "other"
	if _, reserved, err := th.store.Reserve(ctx, p, th.now()); !reserved || err != nil {
		t.Fatalf("reserving for another server: %v %v", reserved, err)
	}
	if err := th.store.Heartbeat(ctx, "other", time.Now()); err != nil {
		t.Fatal(err)
	}
	th.clock.Add(time.Hour)
	th.reconcileOnce(ctx)
	if f.count("/settle") != settles || state(t, th, p.Key) != store.PaymentSettling {
		t.Fatalf("another live server's payment was reconciled here: %d settle calls, state %s", f.count("/settle")-settles, state(t, th, p.Key))
	}
	if err := th.store.Leave(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	th.reconcileOnce(ctx)
	if state(t, th, p.Key) != store.PaymentSettled || len(th.ledger(t)) != 1 {
		t.Fatalf("left behind by a server gone: state %s, %d rows; want settled, 1", state(t, th, p.Key), len(th.ledger(t)))
	}
}
