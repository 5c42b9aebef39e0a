package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
)

// testPrecheckAllOrNothing: a pre-check charged to several counters is
// charged to all of them or, when any one refuses, to none.
func testPrecheckAllOrNothing(t *testing.T, fresh Fresh) {
	const other = "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"
	const addr = "ip:192.0.2.1"
	walletC := func(limit int) store.Counter {
		return store.Counter{Key: wallet, Limit: limit, Interval: 5 * time.Second}
	}
	addrC := func(limit int) store.Counter { return store.Counter{Key: addr, Limit: limit} }
	type step struct {
		name     string
		at       time.Duration
		counters []store.Counter
		want     []store.Quota
	}
	steps := []step{
		{"both fresh", 0, []store.Counter{walletC(2), addrC(2)},
			[]store.Quota{{Allowed: true, Used: 1}, {Allowed: true, Used: 1}}},
		{"wallet's interval refuses, address uncharged", time.Second, []store.Counter{walletC(2), addrC(2)},
			[]store.Quota{{Used: 1, Exceeded: store.LimitInterval, RetryAfter: 4 * time.Second}, {Used: 1}}},
		{"another wallet from the address", time.Second, []store.Counter{{Key: other, Limit: 2}, addrC(2)},
			[]store.Quota{{Allowed: true, Used: 1}, {Allowed: true, Used: 2}}},
		{"address full, wallet uncharged", 6 * time.Second, []store.Counter{walletC(2), addrC(2)},
			[]store.Quota{{Used: 1}, {Used: 2, Exceeded: store.LimitDaily, RetryAfter: 12*time.Hour - 6*time.Second}}},
		{"address full and wallet too soon", 7 * time.Second, []store.Counter{{Key: other, Limit: 2, Interval: time.Minute}, addrC(2)},
			[]store.Quota{{Used: 1, Exceeded: store.LimitInterval, RetryAfter: 54 * time.Second}, {Used: 2, Exceeded: store.LimitDaily, RetryAfter: 12*time.Hour - 7*time.Second}}},
		// The refusals above charged the wallet nothing: with a raised
		// address limit it has its second pre-check, no interval wait.
		{"wallet alone still has its second", 8 * time.Second, []store.Counter{walletC(2), addrC(3)},
			[]store.Quota{{Allowed: true, Used: 2}, {Allowed: true, Used: 3}}},
		{"one counter alone", 8 * time.Second, []store.Counter{{Key: "ip:198.51.100.7", Limit: 1}},
			[]store.Quota{{Allowed: true, Used: 1}}},
		{"no counters", 8 * time.Second, nil, []store.Quota{}},
	}
	s := fresh(t)()
	ctx := context.Background()
	for _, st := range steps {
		qs, err := s.PrecheckAll(ctx, noon.Add(st.at), st.counters...)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if fmt.Sprint(qs) != fmt.Sprint(st.want) {
			t.Fatalf("%s: %+v, want %+v", st.name, qs, st.want)
		}
	}
	if _, err := s.PrecheckAll(ctx, noon.Add(time.Minute), addrC(10), addrC(10)); err == nil {
		t.Fatal("one key given twice was accepted")
	}
	// The refused call with a doubled key charged nothing either.
	if q, err := s.Precheck(ctx, addr, noon.Add(time.Minute), 4, 0); err != nil || !q.Allowed || q.Used != 4 {
		t.Fatalf("address after the doubled-key call: %+v %v, want allowed with used=4", q, err)
	}
}

// testPrecheckAllConcurrent: many distinct wallets sharing one counter
// (a client address) at once, over two handles: exactly the shared
// counter's limit pass, and the wallets refused are charged nothing.
func testPrecheckAllConcurrent(t *testing.T, fresh Fresh) {
	open := fresh(t)
	stores := []store.Store{open(), open()}
	ctx := context.Background()
	const n, limit = 200, 60
	const addr = "ip:2001:db8:1:2::/64"
	allowed := make([]atomic.Bool, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			qs, err := stores[i%2].PrecheckAll(ctx, noon.Add(time.Duration(i)*time.Millisecond),
				store.Counter{Key: fmt.Sprintf("wallet-%d", i), Limit: 1, Interval: time.Hour},
				store.Counter{Key: addr, Limit: limit})
			if err != nil {
				t.Error(err)
				return
			}
			if qs[0].Allowed != qs[1].Allowed {
				t.Errorf("pre-check %d: counters disagree: %+v", i, qs)
			}
			if !qs[0].Allowed && qs[1].Exceeded != store.LimitDaily {
				t.Errorf("pre-check %d refused by %q, want the shared counter's daily_limit", i, qs[1].Exceeded)
			}
			allowed[i].Store(qs[0].Allowed)
		}()
	}
	close(start)
	wg.Wait()
	got := 0
	for i := range allowed {
		if !allowed[i].Load() {
			continue
		}
		got++
	}
	if got != limit {
		t.Fatalf("%d concurrent pre-checks sharing a counter with limit %d: %d allowed", n, limit, got)
	}
	// Every wallet's own counter is exact: charged once if it passed,
	// untouched if it was refused.
	for i := range n {
		q, err := stores[0].Precheck(ctx, fmt.Sprintf("wallet-%d", i), noon.Add(time.Second), 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if q.Allowed == allowed[i].Load() {
			t.Errorf("wallet %d (allowed before: %v): a second pre-check got %+v", i, allowed[i].Load(), q)
		}
	}
}
