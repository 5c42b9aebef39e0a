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
// reconciliation, never settled; a retry with the payment is charged once
// and gets its scan at once.
func TestFailedReservationIsNeverCharged(t *testing.T) {
	for _, retry := range []bool{false, true} {
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
		if retry {
			if w := pay(t, th, header); w.Code != 200 || f.count("/settle") != 1 || len(th.ledger(t)) != 1 {
				t.Fatalf("retry: %d %s, %d settle calls, %d rows; want 200, 1, 1", w.Code, w.Body, f.count("/settle"), len(th.ledger(t)))
			}
			continue
		}
		th.clock.Add(time.Second)
		th.reconcileOnce(context.Background())
		if _, ok, _ := th.store.Payment(context.Background(), key); ok || f.count("/settle") != 0 || f.count("/verify") != 0 {
			t.Fatalf("after reconciliation: payment kept %v, %d settle calls; want released and 0", ok, f.count("/settle"))
		}
		th.clock.Add(time.Hour)
		th.reconcileOnce(context.Background())
		if f.count("/settle") != 0 || len(th.ledger(t)) != 0 {
			t.Fatal("the released payment was charged later")
		}
	}
}
