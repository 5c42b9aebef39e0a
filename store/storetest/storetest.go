// Package storetest is the behaviour every store backend must show. A
// backend's test calls Run with a function that makes a fresh, empty
// backing store and returns a way to open handles to it, so the same tests
// prove SQLite today and PostgreSQL when it comes.
package storetest

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
)

// Fresh makes one new empty backing store for a test and returns a
// function opening a new handle to it (as another server process would).
// Handles are closed by the test's cleanup.
type Fresh func(t *testing.T) (open func() store.Store)

// Run runs the whole suite against a backend.
func Run(t *testing.T, fresh Fresh) {
	t.Run("PrecheckConcurrentOneWallet", func(t *testing.T) { testPrecheckConcurrent(t, fresh, 1) })
	t.Run("PrecheckConcurrentTwoHandles", func(t *testing.T) { testPrecheckConcurrent(t, fresh, 2) })
	t.Run("PrecheckDailyLimit", func(t *testing.T) { testPrecheckDaily(t, fresh) })
	t.Run("PrecheckInterval", func(t *testing.T) { testPrecheckInterval(t, fresh) })
	t.Run("PrecheckWalletsIndependent", func(t *testing.T) { testPrecheckWallets(t, fresh) })
	t.Run("PrecheckAllOrNothing", func(t *testing.T) { testPrecheckAllOrNothing(t, fresh) })
	t.Run("PrecheckAllConcurrentSharedCounter", func(t *testing.T) { testPrecheckAllConcurrent(t, fresh) })
	t.Run("ReserveOnce", func(t *testing.T) { testReserve(t, fresh) })
	t.Run("ReserveIdent", func(t *testing.T) { testReserveIdent(t, fresh) })
	t.Run("SettleOnce", func(t *testing.T) { testSettleOnce(t, fresh) })
	t.Run("PaymentLifecycle", func(t *testing.T) { testLifecycle(t, fresh) })
	t.Run("SettlingInFlight", func(t *testing.T) { testSettling(t, fresh) })
	t.Run("Owners", func(t *testing.T) { testOwners(t, fresh) })
	t.Run("Claim", func(t *testing.T) { testClaim(t, fresh) })
	t.Run("LedgerRoundTrip", func(t *testing.T) { testLedger(t, fresh) })
	t.Run("Prune", func(t *testing.T) { testPrune(t, fresh) })
}

// noon is a fixed time well inside one UTC day.
var noon = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

const wallet = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"

func testPrecheckConcurrent(t *testing.T, fresh Fresh, handles int) {
	open := fresh(t)
	var stores []store.Store
	for range handles {
		stores = append(stores, open())
	}
	ctx := context.Background()
	const n, limit = 200, 100
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// Distinct instants, all in one UTC day, no interval.
			now := noon.Add(time.Duration(i) * time.Millisecond)
			q, err := stores[i%handles].Precheck(ctx, wallet, now, limit, 0)
			if err != nil {
				errs <- err
				return
			}
			if q.Allowed {
				ok.Add(1)
				return
			}
			if q.Exceeded != store.LimitDaily {
				errs <- fmt.Errorf("refused with %q, want %q", q.Exceeded, store.LimitDaily)
			}
			refused.Add(1)
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if ok.Load() != limit || refused.Load() != n-limit {
		t.Fatalf("%d concurrent pre-checks with limit %d over %d handle(s): %d allowed, %d refused; want %d and %d",
			n, limit, handles, ok.Load(), refused.Load(), limit, n-limit)
	}
}

func testPrecheckDaily(t *testing.T, fresh Fresh) {
	s := fresh(t)()
	ctx := context.Background()
	late := time.Date(2026, 3, 14, 23, 59, 58, 250_000_000, time.UTC)
	for i := 1; i <= 3; i++ {
		q, err := s.Precheck(ctx, wallet, late, 3, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !q.Allowed || q.Used != i {
			t.Fatalf("pre-check %d: %+v, want allowed with used=%d", i, q, i)
		}
	}
	q, err := s.Precheck(ctx, wallet, late, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := store.Quota{Used: 3, Exceeded: store.LimitDaily, RetryAfter: 1750 * time.Millisecond}
	if q != want {
		t.Fatalf("4th pre-check of the day: %+v, want %+v (wait until UTC midnight)", q, want)
	}
	// A new UTC day starts a new count.
	q, err = s.Precheck(ctx, wallet, late.Add(1750*time.Millisecond), 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !q.Allowed || q.Used != 1 {
		t.Fatalf("first pre-check of the next day: %+v, want allowed with used=1", q)
	}
}

func testPrecheckInterval(t *testing.T, fresh Fresh) {
	s := fresh(t)()
	ctx := context.Background()
	iv := 5 * time.Second
	steps := []struct {
		at      time.Duration
		allowed bool
		retry   time.Duration
	}{
		{0, true, 0},
		{2 * time.Second, false, 3 * time.Second},
		// A refused attempt charges nothing and does not restart the wait.
		{4*time.Second + 500*time.Millisecond, false, 500 * time.Millisecond},
		{5 * time.Second, true, 0},
		{9 * time.Second, false, time.Second},
	}
	used := 0
	for _, st := range steps {
		q, err := s.Precheck(ctx, wallet, noon.Add(st.at), 100, iv)
		if err != nil {
			t.Fatal(err)
		}
		if st.allowed {
			used++
		}
		want := store.Quota{Allowed: st.allowed, Used: used, RetryAfter: st.retry}
		if !st.allowed {
			want.Exceeded = store.LimitInterval
		}
		if q != want {
			t.Fatalf("pre-check at +%v: %+v, want %+v", st.at, q, want)
		}
	}
	// Both limits at once: the daily one is named, with the longer wait.
	s2 := fresh(t)()
	if q, err := s2.Precheck(ctx, wallet, noon, 1, time.Hour); err != nil || !q.Allowed {
		t.Fatalf("first: %+v %v", q, err)
	}
	q, err := s2.Precheck(ctx, wallet, noon.Add(time.Second), 1, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if q.Allowed || q.Exceeded != store.LimitDaily || q.RetryAfter != 12*time.Hour-time.Second {
		t.Fatalf("over both limits: %+v, want daily_limit with 11h59m59s", q)
	}
}

func testPrecheckWallets(t *testing.T, fresh Fresh) {
	s := fresh(t)()
	ctx := context.Background()
	other := "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"
	if q, err := s.Precheck(ctx, wallet, noon, 1, time.Minute); err != nil || !q.Allowed {
		t.Fatalf("first wallet: %+v %v", q, err)
	}
	if q, err := s.Precheck(ctx, wallet, noon, 1, time.Minute); err != nil || q.Allowed {
		t.Fatalf("first wallet again: %+v %v, want refused", q, err)
	}
	if q, err := s.Precheck(ctx, other, noon, 1, time.Minute); err != nil || !q.Allowed || q.Used != 1 {
		t.Fatalf("second wallet: %+v %v, want allowed: quotas are per wallet", q, err)
	}
}

func testLedger(t *testing.T, fresh Fresh) {
	open := fresh(t)
	s := open()
	ctx := context.Background()
	rows := []store.LedgerRow{
		{Payer: wallet, Time: noon.Add(1500 * time.Microsecond), Price: 10000, Verdict: "malicious",
			CategoryCounts: map[string]int{"instruction_override": 2, "exfiltration": 1}},
		{Payer: wallet, Time: noon.Add(time.Hour), Price: 10000, Verdict: "safe", CategoryCounts: map[string]int{}},
		{Payer: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T", Time: noon.Add(2 * time.Hour).In(time.FixedZone("X", 3600)),
			Price: 25000, Verdict: "suspicious", CategoryCounts: map[string]int{"concealment": 1}},
	}
	for i, r := range rows {
		record(t, s, fmt.Sprintf("ledger-key-%d", i), r)
	}
	// Another handle (another server) sees every row, in time order.
	got, err := open().Ledger(ctx, noon, noon.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("ledger has %d rows, want %d", len(got), len(rows))
	}
	for i, r := range rows {
		g := got[i]
		if g.Payer != r.Payer || !g.Time.Equal(r.Time) || g.Price != r.Price || g.Verdict != r.Verdict ||
			!reflect.DeepEqual(g.CategoryCounts, r.CategoryCounts) {
			t.Errorf("row %d: got %+v, want %+v", i, g, r)
		}
	}
	// The range is half-open.
	got, err = s.Ledger(ctx, noon.Add(time.Hour), noon.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Verdict != "safe" {
		t.Fatalf("ledger [noon+1h, noon+2h): %+v, want the one safe row", got)
	}
}

func testPrune(t *testing.T, fresh Fresh) {
	s := fresh(t)()
	ctx := context.Background()
	old := "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"
	if q, err := s.Precheck(ctx, old, noon.Add(-72*time.Hour), 1, 0); err != nil || !q.Allowed {
		t.Fatalf("%+v %v", q, err)
	}
	if q, err := s.Precheck(ctx, wallet, noon, 1, 0); err != nil || !q.Allowed {
		t.Fatalf("%+v %v", q, err)
	}
	n, err := s.Prune(ctx, noon.Add(-48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("pruned %d counters, want 1", n)
	}
	// The recent counter survived: the wallet is still at its limit.
	if q, err := s.Precheck(ctx, wallet, noon, 1, 0); err != nil || q.Allowed {
		t.Fatalf("recent counter was pruned: %+v %v", q, err)
	}
}
