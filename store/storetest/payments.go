package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
)

// payment is a settling payment with key, as the scan service reserves it.
func payment(key string) store.Payment {
	return store.Payment{
		Key:      key,
		Header:   "eyJ4NDAyVmVyc2lvbiI6Mn0=",
		Accepted: `{"scheme":"exact"}`,
		Row: store.LedgerRow{Payer: wallet, Price: 10000, Verdict: "malicious",
			CategoryCounts: map[string]int{"instruction_override": 1}},
	}
}

// record writes row to the ledger the only way there is: a payment
// reserved and settled.
func record(t *testing.T, s store.Store, key string, row store.LedgerRow) {
	t.Helper()
	ctx := context.Background()
	p := payment(key)
	p.Row = row
	if _, ok, err := s.Reserve(ctx, p, row.Time); err != nil || !ok {
		t.Fatalf("reserve %s: %v %v", key, ok, err)
	}
	if ok, err := s.Settle(ctx, key, "server-a", "tx-"+key, row, row.Time); err != nil || !ok {
		t.Fatalf("settle %s: %v %v", key, ok, err)
	}
}

func testReserve(t *testing.T, fresh Fresh) {
	open := fresh(t)
	a, b := open(), open()
	ctx := context.Background()
	key := "3f1c0ffee0ddba11"
	var got atomic.Int32
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			p, ok, err := s.Reserve(ctx, payment(key), noon)
			if err != nil {
				t.Error(err)
			}
			if p.Key != key || p.State != store.PaymentSettling {
				t.Errorf("reserve returned %+v", p)
			}
			if ok {
				got.Add(1)
			}
		}()
	}
	wg.Wait()
	if got.Load() != 1 {
		t.Fatalf("50 concurrent reservations of one key over two handles: %d succeeded, want 1", got.Load())
	}
	if _, ok, err := a.Reserve(ctx, payment("another-key"), noon); err != nil || !ok {
		t.Fatalf("a different key: %v %v, want reserved", ok, err)
	}
	if err := b.Release(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := a.Reserve(ctx, payment(key), noon); err != nil || !ok {
		t.Fatalf("after release: %v %v, want reserved again", ok, err)
	}
	if _, ok, err := b.Reserve(ctx, payment(key), noon); err != nil || ok {
		t.Fatalf("reserved twice after release: %v %v", ok, err)
	}
}

func testReserveIdent(t *testing.T, fresh Fresh) {
	s := fresh(t)()
	ctx := context.Background()
	p := payment("key-one")
	p.Ident = "pay_7d5d747be160e280504c099d984bcfe0"
	if _, ok, err := s.Reserve(ctx, p, noon); err != nil || !ok {
		t.Fatalf("%v %v", ok, err)
	}
	q := payment("key-two")
	q.Ident = p.Ident
	got, ok, err := s.Reserve(ctx, q, noon)
	if !errors.Is(err, store.ErrIdentInUse) || ok || got.Key != "key-one" {
		t.Fatalf("one identifier for two payments: %+v %v %v, want key-one and ErrIdentInUse", got, ok, err)
	}
	if _, known, err := s.Payment(ctx, "key-two"); err != nil || known {
		t.Fatalf("the refused payment was stored: %v %v", known, err)
	}
	// Payments without an identifier never conflict on it.
	for _, k := range []string{"key-three", "key-four"} {
		if _, ok, err := s.Reserve(ctx, payment(k), noon); err != nil || !ok {
			t.Fatalf("%s: %v %v", k, ok, err)
		}
	}
	got, known, err := s.Payment(ctx, "key-one")
	if err != nil || !known || got.Ident != p.Ident || got.Header != p.Header || got.Accepted != p.Accepted ||
		!reflect.DeepEqual(got.Row.CategoryCounts, p.Row.CategoryCounts) || got.Row.Verdict != "malicious" ||
		got.Row.Price != 10000 || got.Row.Payer != wallet || !got.Since.Equal(noon) {
		t.Fatalf("read back %+v %v %v, want %+v", got, known, err, p)
	}
}

// testSettleOnce settles one payment from many goroutines over two handles:
// one wins, and the ledger has one row.
func testSettleOnce(t *testing.T, fresh Fresh) {
	open := fresh(t)
	a, b := open(), open()
	ctx := context.Background()
	p := payment("settle-once")
	if _, ok, err := a.Reserve(ctx, p, noon); err != nil || !ok {
		t.Fatal(ok, err)
	}
	row := p.Row
	row.Time = noon.Add(time.Second)
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			ok, err := s.Settle(ctx, p.Key, "server-a", "5sig", row, noon.Add(time.Second))
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		}()
	}
	wg.Wait()
	rows, err := b.Ledger(ctx, noon, noon.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if won.Load() != 1 || len(rows) != 1 {
		t.Fatalf("20 concurrent settlements: %d won, %d ledger rows; want 1 and 1", won.Load(), len(rows))
	}
	got, _, err := a.Payment(ctx, p.Key)
	if err != nil || got.State != store.PaymentSettled || got.Transaction != "5sig" {
		t.Fatalf("after settling: %+v %v", got, err)
	}
	// The signed payment is kept only while it may have to be settled again.
	if got.Header != "" || got.Accepted != "" || got.Row.Verdict != "malicious" || got.Row.Payer != wallet {
		t.Fatalf("a settled payment keeps %q / %q, or lost its row fields: %+v", got.Header, got.Accepted, got)
	}
	// A settled payment is not released: its key stays used.
	if err := a.Release(ctx, p.Key); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := b.Reserve(ctx, p, noon); err != nil || ok {
		t.Fatalf("a settled payment was released: %v %v", ok, err)
	}
}

func testLifecycle(t *testing.T, fresh Fresh) {
	s := fresh(t)()
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c", "f"} {
		if _, ok, err := s.Reserve(ctx, payment(k), noon); err != nil || !ok {
			t.Fatal(k, ok, err)
		}
	}
	for _, k := range []string{"a", "b"} {
		row := payment(k).Row
		row.Time = noon
		if ok, err := s.Settle(ctx, k, "server-a", "tx"+k, row, noon); err != nil || !ok {
			t.Fatal(k, ok, err)
		}
	}
	// Deliver moves settled payments only: c is still settling.
	if err := s.Deliver(ctx, noon, "a", "b", "c", "unknown"); err != nil {
		t.Fatal(err)
	}
	if err := s.Fail(ctx, "f", noon); err != nil {
		t.Fatal(err)
	}
	// Fail moves settling payments only.
	if err := s.Fail(ctx, "a", noon); err != nil {
		t.Fatal(err)
	}
	want := map[string]store.PaymentState{"a": store.PaymentDelivered, "b": store.PaymentDelivered,
		"c": store.PaymentSettling, "f": store.PaymentFailed}
	for k, st := range want {
		got, ok, err := s.Payment(ctx, k)
		if err != nil || !ok || got.State != st {
			t.Errorf("payment %s: %+v %v %v, want state %s", k, got, ok, err, st)
		}
	}
	// Settling a delivered or failed payment writes no second row.
	for _, k := range []string{"a", "f"} {
		if ok, err := s.Settle(ctx, k, "server-a", "again", payment(k).Row, noon); err != nil || ok {
			t.Errorf("settled %s again: %v %v", k, ok, err)
		}
	}
	if rows, err := s.Ledger(ctx, noon.Add(-time.Hour), noon.Add(time.Hour)); err != nil || len(rows) != 2 {
		t.Fatalf("ledger: %d rows %v, want 2", len(rows), err)
	}
	// A failed payment keeps its key.
	if err := s.Release(ctx, "f"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Reserve(ctx, payment("f"), noon); err != nil || ok {
		t.Fatalf("a failed payment was released: %v %v", ok, err)
	}
}

func testSettling(t *testing.T, fresh Fresh) {
	open := fresh(t)
	s := open()
	ctx := context.Background()
	for i := range 5 {
		if _, ok, err := s.Reserve(ctx, payment(fmt.Sprint("p", i)), noon.Add(time.Duration(i)*time.Minute)); err != nil || !ok {
			t.Fatal(ok, err)
		}
	}
	if ok, err := s.Settle(ctx, "p1", "server-a", "tx", payment("p1").Row, noon.Add(10*time.Minute)); err != nil || !ok {
		t.Fatal(ok, err)
	}
	got, err := open().Settling(ctx, noon.Add(3*time.Minute+time.Second), 10)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, p := range got {
		keys = append(keys, p.Key)
	}
	if !reflect.DeepEqual(keys, []string{"p0", "p2", "p3"}) {
		t.Fatalf("settling before +3m: %v, want [p0 p2 p3] (p1 settled, p4 too recent)", keys)
	}
	if got, err := s.Settling(ctx, noon.Add(time.Hour), 2); err != nil || len(got) != 2 || got[0].Key != "p0" {
		t.Fatalf("limit 2: %+v %v", got, err)
	}
}

// testOwners: a payment in flight names its owner and when the owner last
// beat, seen from another handle; settling hands it to the settling server;
// a server that leaves is seen no more.
func testOwners(t *testing.T, fresh Fresh) {
	open := fresh(t)
	a, b := open(), open()
	ctx := context.Background()
	if err := a.Heartbeat(ctx, "server-a", noon); err != nil {
		t.Fatal(err)
	}
	p := payment("owned")
	p.Owner = "server-a"
	if _, ok, err := a.Reserve(ctx, p, noon); err != nil || !ok {
		t.Fatal(ok, err)
	}
	orphan := payment("orphan")
	orphan.Owner = "server-gone"
	if _, ok, err := a.Reserve(ctx, orphan, noon); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := a.Heartbeat(ctx, "server-a", noon.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	got, _, err := b.Payment(ctx, "owned")
	if err != nil || got.Owner != "server-a" || !got.OwnerSeen.Equal(noon.Add(2*time.Second)) {
		t.Fatalf("owned payment seen from another handle: %+v %v", got, err)
	}
	got, _, err = b.Payment(ctx, "orphan")
	if err != nil || got.Owner != "server-gone" || !got.OwnerSeen.IsZero() {
		t.Fatalf("payment of a server that never beat: %+v %v, want a zero OwnerSeen", got, err)
	}
	list, err := b.Settling(ctx, noon.Add(time.Hour), 10)
	if err != nil || len(list) != 2 {
		t.Fatalf("settling: %+v %v", list, err)
	}
	for _, q := range list {
		if q.Key == "owned" && q.Owner != "server-a" {
			t.Fatalf("Settling lost the owner: %+v", q)
		}
	}
	row := p.Row
	row.Time = noon
	if ok, err := b.Settle(ctx, "owned", "server-b", "tx", row, noon.Add(3*time.Second)); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := b.Heartbeat(ctx, "server-b", noon.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, _, err = a.Payment(ctx, "owned"); err != nil || got.State != store.PaymentSettled || got.Owner != "server-b" ||
		!got.OwnerSeen.Equal(noon.Add(3*time.Second)) || !got.Since.Equal(noon.Add(3*time.Second)) {
		t.Fatalf("settled by server-b: %+v %v", got, err)
	}
	if err := b.Leave(ctx, "server-b"); err != nil {
		t.Fatal(err)
	}
	if got, _, err = a.Payment(ctx, "owned"); err != nil || !got.OwnerSeen.IsZero() {
		t.Fatalf("after its owner left: %+v %v, want a zero OwnerSeen", got, err)
	}
}

// testClaim: of servers claiming one settled payment from the owner they
// read, over several handles, exactly one wins; an owner that gives a
// payment up (to "") lets the next claim win; only settled payments are
// claimed.
func testClaim(t *testing.T, fresh Fresh) {
	open := fresh(t)
	a, b := open(), open()
	ctx := context.Background()
	for _, k := range []string{"settled", "settling"} {
		if _, ok, err := a.Reserve(ctx, payment(k), noon); err != nil || !ok {
			t.Fatal(ok, err)
		}
	}
	row := payment("settled").Row
	row.Time = noon
	if ok, err := a.Settle(ctx, "settled", "server-dead", "tx", row, noon); err != nil || !ok {
		t.Fatal(ok, err)
	}
	var won atomic.Int32
	var winner atomic.Value
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, id := a, fmt.Sprintf("server-%d", i)
			if i%2 == 1 {
				s = b
			}
			ok, err := s.Claim(ctx, "settled", "server-dead", id, noon.Add(time.Second))
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
				winner.Store(id)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d of 20 claims from one owner won, want exactly 1", won.Load())
	}
	id := winner.Load().(string)
	got, _, err := b.Payment(ctx, "settled")
	if err != nil || got.Owner != id || got.State != store.PaymentSettled || !got.Since.Equal(noon.Add(time.Second)) {
		t.Fatalf("after the claim: %+v %v, want owner %s since noon+1s", got, err, id)
	}
	if ok, err := a.Claim(ctx, "settled", id, "", noon.Add(2*time.Second)); err != nil || !ok {
		t.Fatalf("the owner giving it up: %v %v", ok, err)
	}
	if ok, err := b.Claim(ctx, "settled", id, "server-x", noon.Add(3*time.Second)); err != nil || ok {
		t.Fatalf("a claim from the old owner after it gave up: %v %v, want false", ok, err)
	}
	if ok, err := b.Claim(ctx, "settled", "", "server-x", noon.Add(3*time.Second)); err != nil || !ok {
		t.Fatalf("a claim of a payment nobody gives: %v %v", ok, err)
	}
	if ok, err := a.Claim(ctx, "settling", "", "server-x", noon); err != nil || ok {
		t.Fatalf("a claim of a settling payment: %v %v, want false", ok, err)
	}
	if ok, err := a.Claim(ctx, "unknown", "", "server-x", noon); err != nil || ok {
		t.Fatalf("a claim of an unknown payment: %v %v, want false", ok, err)
	}
	if err := a.Deliver(ctx, noon, "settled"); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.Claim(ctx, "settled", "server-x", "server-y", noon); err != nil || ok {
		t.Fatalf("a claim of a delivered payment: %v %v, want false", ok, err)
	}
}
