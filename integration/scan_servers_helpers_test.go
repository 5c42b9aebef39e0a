package integration

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/store/pgtest"
)

// The servers suite (scan_servers_*_test.go) runs several caddy processes
// on one PostgreSQL database, the test binary's shared server, one fresh
// database per test, and states its invariants against what the database
// holds at the end.

// serversDB is one test's database.
type serversDB struct {
	dsn  string
	once sync.Once
	st   *store.PostgreSQL
	err  error
}

// serversDatabase is a fresh database on the shared PostgreSQL.
func serversDatabase(t *testing.T) *serversDB {
	t.Helper()
	d := &serversDB{dsn: pgtest.Shared(t).Database(t)}
	t.Cleanup(func() {
		if d.st != nil {
			d.st.Close()
		}
	})
	return d
}

// line is the Caddyfile store line of the database.
func (d *serversDB) line() string { return fmt.Sprintf(`store postgres "%s"`, d.dsn) }

// store opens the database as the servers do, once, for the test to read
// what they wrote. It is opened on first use: by then the servers have
// migrated the schema themselves, at once.
func (d *serversDB) store(t *testing.T) *store.PostgreSQL {
	t.Helper()
	d.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		d.st, d.err = store.OpenPostgreSQL(ctx, d.dsn)
	})
	if d.err != nil {
		t.Fatal(d.err)
	}
	return d.st
}

// ledger is every ledger row.
func (d *serversDB) ledger(t *testing.T) []store.LedgerRow {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := d.store(t).Ledger(ctx, time.Time{}, time.Now().Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// payers counts ledger rows per payer.
func (d *serversDB) payers(t *testing.T) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, r := range d.ledger(t) {
		m[r.Payer]++
	}
	return m
}

// serversPostgres is a fresh database as the paid-store helpers take it.
func serversPostgres(t *testing.T) paidStore {
	d := serversDatabase(t)
	return paidStore{d.line(), d.payers}
}

// counter is what the store holds of a pre-check counter today, read
// through the store's own contract: a pre-check with a limit of one is
// refused by a counter that has any and charges nothing, and its Used is
// the count. It reports zero, and charges one, to a counter that has none.
func (d *serversDB) counter(t *testing.T, key string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q, err := d.store(t).Precheck(ctx, key, time.Now(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if q.Allowed {
		return 0
	}
	return q.Used
}

// payment is the store's record of the payment key.
func (d *serversDB) payment(t *testing.T, key string) store.Payment {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, ok, err := d.store(t).Payment(ctx, key)
	if err != nil || !ok {
		t.Fatalf("payment %s: found %v, %v", key, ok, err)
	}
	return p
}

// serversStart runs n caddy processes at once, the i-th with the
// Caddyfile caddyfile(i, addrs[i]), each on its own free addresses (sites
// per process), and waits until all of them listen.
func serversStart(t *testing.T, n, sites int, caddyfile func(i int, addrs []string) string) ([]*server, [][]string) {
	t.Helper()
	srvs := make([]*server, n)
	addrs := make([][]string, n)
	for i := range n {
		for range sites {
			addrs[i] = append(addrs[i], fmt.Sprintf("127.0.0.1:%d", freePort(t)))
		}
		srvs[i] = launchCaddy(t, caddyfile(i, addrs[i]), nil, nil)
	}
	for i, s := range srvs {
		for _, a := range addrs[i] {
			s.waitTCP(a)
		}
	}
	return srvs, addrs
}

// serversAnswer is one pre-check of a burst, as its client saw it.
type serversAnswer struct {
	status     int
	limit      string // the limit a 429 names
	sent, recv time.Time
	err        error
}

// serversBurst sends n pre-checks at once, the i-th for caller(i) to
// urls[i%len(urls)] (round robin), every one on its own connection, all
// released together.
func serversBurst(urls []string, n int, caller func(i int) string) []serversAnswer {
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	defer c.CloseIdleConnections()
	out := make([]serversAnswer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			a := &out[i]
			a.sent = time.Now()
			a.status, a.limit, a.err = precheckAs(c, urls[i%len(urls)], caller(i), "")
			a.recv = time.Now()
		})
	}
	close(start)
	wg.Wait()
	return out
}

// serversTally counts a burst's answers: 200s, and 429s by the limit
// named. Any other answer fails the test.
func serversTally(t *testing.T, as []serversAnswer) (allowed int, refused map[string]int) {
	t.Helper()
	refused = map[string]int{}
	for i, a := range as {
		switch {
		case a.err != nil:
			t.Fatalf("pre-check %d: %v", i, a.err)
		case a.status == 200:
			allowed++
		case a.status == 429:
			refused[a.limit]++
		default:
			t.Fatalf("pre-check %d: status %d", i, a.status)
		}
	}
	return allowed, refused
}

// serversSpan is how long a burst took, from its first request sent to its last
// answer received.
func serversSpan(as []serversAnswer) time.Duration {
	first, last := as[0].sent, as[0].recv
	for _, a := range as {
		if a.sent.Before(first) {
			first = a.sent
		}
		if a.recv.After(last) {
			last = a.recv
		}
	}
	return last.Sub(first)
}
