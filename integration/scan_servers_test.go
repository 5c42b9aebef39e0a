package integration

import (
	"fmt"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/x402"
)

// serversPrecheckConfig is one of the pre-check servers: three free sites
// on one database, one per quota under test, each with the others turned
// off. All requests come from 127.0.0.1, so only the third site keeps an
// address bound.
func serversPrecheckConfig(line string, addrs []string) string {
	return fmt.Sprintf(`{
	admin off
}

http://%[2]s {
	prompt_scan {
		free
		precheck_interval none
		precheck_address_daily_limit unlimited
		%[1]s
	}
}

http://%[3]s {
	prompt_scan {
		free
		precheck_daily_limit unlimited
		precheck_interval 2s
		precheck_address_daily_limit unlimited
		%[1]s
	}
}

http://%[4]s {
	prompt_scan {
		free
		precheck_daily_limit unlimited
		precheck_interval none
		precheck_address_daily_limit 50
		%[1]s
	}
}
`, line, addrs[0], addrs[1], addrs[2])
}

// The sites of serversPrecheckConfig.
const (
	serversDailySite = iota
	serversIntervalSite
	serversAddressSite
)

// TestServersPrecheckExact runs three servers on one PostgreSQL database
// and spreads bursts of concurrent pre-checks over them round robin: the
// daily limit of a wallet, the address bound and the minimum interval each
// hold exactly across the servers, as they do on one, and the store's
// counters say what was answered.
func TestServersPrecheckExact(t *testing.T) {
	db := serversDatabase(t)
	const servers = 3
	_, addrs := serversStart(t, servers, 3, func(_ int, addrs []string) string {
		return serversPrecheckConfig(db.line(), addrs)
	})
	urls := func(site int) []string {
		var u []string
		for _, a := range addrs {
			u = append(u, "http://"+a[site]+"/precheck")
		}
		return u
	}

	wallet := mintedWallet(18_000)
	for _, tc := range []struct {
		name     string
		site     int
		caller   func(i int) string
		allowed  int
		refused  map[string]int
		counter  string // the store counter the burst was charged to
		charged  int
		uncharge bool // refused callers must have been charged nothing
	}{
		{"daily limit of one wallet", serversDailySite, func(int) string { return wallet },
			100, map[string]int{string(store.LimitDaily): 200}, wallet, 100, false},
		{"address bound of many wallets", serversAddressSite, func(i int) string { return mintedWallet(18_100 + i) },
			50, map[string]int{"address_daily_limit": 250}, "ip:127.0.0.1", 50, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 300
			as := serversBurst(urls(tc.site), n, tc.caller)
			allowed, refused := serversTally(t, as)
			t.Logf("%d concurrent pre-checks over %d servers in %v: %d answered, refused %v",
				n, servers, serversSpan(as).Round(time.Millisecond), allowed, refused)
			if allowed != tc.allowed || !maps.Equal(refused, tc.refused) {
				t.Fatalf("%d answered, refused %v; want %d and %v", allowed, refused, tc.allowed, tc.refused)
			}
			if got := db.counter(t, tc.counter); got != tc.charged {
				t.Fatalf("the store's counter %s says %d, want %d", tc.counter, got, tc.charged)
			}
			if !tc.uncharge {
				return
			}
			// Every answered wallet was charged one; every refused
			// one nothing (reading charges it one: read each once).
			for i, a := range as {
				want := 1
				if a.status == 429 {
					want = 0
				}
				if got := db.counter(t, tc.caller(i)); got != want {
					t.Fatalf("wallet %d, answered %d: its counter says %d, want %d", i, a.status, got, want)
				}
			}
		})
	}

	// The interval: a burst gets one pre-check; a second burst at once
	// gets none, whichever server it reaches; one after the interval gets
	// one again.
	t.Run("minimum interval of one wallet", func(t *testing.T) {
		const n, interval = 90, 2 * time.Second
		wallet := mintedWallet(18_001)
		burst := func(name string, want int) serversAnswer {
			as := serversBurst(urls(serversIntervalSite), n, func(int) string { return wallet })
			allowed, refused := serversTally(t, as)
			t.Logf("%s: %d concurrent pre-checks over %d servers in %v: %d answered, refused %v",
				name, n, servers, serversSpan(as).Round(time.Millisecond), allowed, refused)
			if allowed != want || refused[string(store.LimitInterval)] != n-want {
				t.Fatalf("%s: %d answered, refused %v; want %d and %d by the interval", name, allowed, refused, want, n-want)
			}
			for _, a := range as {
				if a.status == 200 {
					return a
				}
			}
			return as[len(as)-1]
		}
		first := burst("first burst", 1)
		last := burst("at once after it", 0)
		// The one pre-check was charged after it was sent; had the second
		// burst ended after that plus the interval, it could rightly have
		// had one.
		if last.recv.Sub(first.sent) >= interval {
			t.Fatalf("the bursts took %v: too slow to tell the interval", last.recv.Sub(first.sent))
		}
		time.Sleep(time.Until(first.recv.Add(interval + 100*time.Millisecond)))
		burst("after the interval", 1)
		if got := db.counter(t, wallet); got != 2 {
			t.Fatalf("the store's counter says %d pre-checks, want 2", got)
		}
	})
}

// TestServersOnePaymentAtOnce sends one payment on many connections at
// once, spread over three servers on one PostgreSQL database, to a
// facilitator that settles it again whenever asked: one scan, one
// settlement, one ledger row.
func TestServersOnePaymentAtOnce(t *testing.T) {
	onePaymentManyConnections(t, serversPostgres, 3)
}

// TestServersReplayOnTheOthers pays on one of three servers on one
// PostgreSQL database and replays the payment on the two others, at once
// and after its delivery mark was written: each is refused as used.
func TestServersReplayOnTheOthers(t *testing.T) {
	replayOnTheOtherServer(t, serversPostgres, 3, 0, time.Second)
}

// TestServersRetryAfterSIGKILL has server A of three on one PostgreSQL
// database killed with SIGKILL once a payment settled, before its client
// got the answer: either the facilitator's answer never reached A, or A
// recorded the payment and its answer never reached the client. The client
// retries the payment on the other servers: it is told to wait while A
// still counts as alive, then gets its scan once; once that is marked
// delivered every retry is refused as used, and the payment has exactly
// one ledger row.
func TestServersRetryAfterSIGKILL(t *testing.T) {
	for _, tc := range []struct {
		name string
		serversKill
	}{
		{"settled, the facilitator's answer lost; retried on B and C in turn", serversKill{front: false, retryOn: 2}},
		{"recorded, the answer to the client lost; retried on B", serversKill{front: true, retryOn: 1}},
		{"recorded, the answer to the client lost; retried on B and C in turn", serversKill{front: true, retryOn: 2}},
		{"settled, the facilitator's answer lost; retried on B and C at once", serversKill{front: false, retryOn: 2, together: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			serversKillAndRetry(t, tc.serversKill)
		})
	}
}

// serversKill is a case of TestServersRetryAfterSIGKILL.
type serversKill struct {
	// front: A is killed when its answer is on its way to the client,
	// after it recorded the payment; else while it waits for the
	// facilitator, which settled the payment.
	front    bool
	retryOn  int  // how many of the two other servers the retries go to
	together bool // to those at once, not in turn
}

func serversKillAndRetry(t *testing.T, c serversKill) {
	db := serversDatabase(t)
	fac := startCountingFacilitator(t)
	merchant := newGoPayer("servers kill merchant")
	var once sync.Once
	var killA func()
	var killed atomic.Pointer[time.Time]
	kill := func() {
		once.Do(func() {
			now := time.Now()
			killed.Store(&now)
			killA()
		})
	}
	facA, state := fac.URL, store.PaymentSettled
	if !c.front {
		facA, state = newStepFacilitator(t, fac.URL, "during settle", "", kill).URL, store.PaymentSettling
	}
	srvs, addrs := serversStart(t, 3, 1, func(i int, addrs []string) string {
		f := fac.URL
		if i == 0 {
			f = facA
		}
		return paidConfigStore("", addrs[0], merchant.addr, f, db.line(), "")
	})
	killA = srvs[0].Kill
	urlA := "http://" + addrs[0][0] + "/scan"
	if c.front {
		urlA = "http://" + newKillingFront(t, addrs[0][0], kill) + "/scan"
	}
	others := []string{"http://" + addrs[1][0] + "/scan", "http://" + addrs[2][0] + "/scan"}
	offer := fetchOffer(t, others[0])
	payer := newGoPayer(fmt.Sprintf("servers kill payer %+v", c))
	h := payer.header(t, offer, "servers kill")
	key := headerKey(t, h)

	st, _, b, err := rawPost(urlA, scanText, map[string]string{"PAYMENT-SIGNATURE": h})
	if err == nil || givesResult(b) || !srvs[0].exited(5*time.Second) {
		t.Fatalf("server A was not killed in the middle of the payment: %d %v %.200s", st, err, b)
	}
	if p := db.payment(t, key); !fac.wasSettled(key) || p.State != state {
		t.Fatalf("at the kill: settled %v, the store says %s; want settled and %s", fac.wasSettled(key), p.State, state)
	}

	r := serversRetry(t, others[:c.retryOn], h, c.together)
	after := r.first.Sub(*killed.Load())
	t.Logf("answers to the retries %v; the scan came %v after the kill", r.statuses, after.Round(time.Millisecond))
	if r.results != 1 {
		// Go on: what the store holds tells what else went wrong.
		t.Errorf("retries on the other servers: answers %v, %d scans; want exactly one", r.statuses, r.results)
	}
	// A beat at most heartbeatEvery (2 s) before it died; it owns a
	// payment settling until ownerTimeout (6 s) after that.
	if !c.front && after < 3500*time.Millisecond {
		t.Fatalf("the scan came %v after the kill, while A still owned the payment", after)
	}
	for deadline := time.Now().Add(2 * time.Second); db.payment(t, key).State != store.PaymentDelivered; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the payment is %s 2 s after its scan, want delivered", db.payment(t, key).State)
		}
	}
	for i, url := range append(others, others...) {
		st, hdr, b := serversUntilSettled(t, url, h)
		if st != 402 || offerError(hdr) != x402.ReasonDuplicateSettlement || givesResult(b) {
			t.Fatalf("further retry %d: %d %q %.200s, want 402 duplicate_settlement", i, st, offerError(hdr), b)
		}
	}
	if rows := db.payers(t); len(rows) != 1 || rows[payer.addr] != 1 {
		t.Fatalf("ledger rows per payer %v, want one row of %s", rows, payer.addr)
	}
}

// serversRetried is what a client's retries of one payment got.
type serversRetried struct {
	statuses map[int]int
	results  int
	first    time.Time // when the first scan arrived
}

// serversRetry retries the payment h on urls until one of them gives its
// scan, every 200 ms for at most 20 s: in turn, or all at once when
// together. Before the scan the servers may only say to wait (409).
func serversRetry(t *testing.T, urls []string, h string, together bool) serversRetried {
	t.Helper()
	r := serversRetried{statuses: map[int]int{}}
	var mu sync.Mutex
	try := func(url string) {
		st, hdr, b, err := rawPost(url, scanText, map[string]string{"PAYMENT-SIGNATURE": h})
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			t.Errorf("retry on %s: %v", url, err)
		case givesResult(b):
			r.results++
			if r.first.IsZero() {
				r.first = time.Now()
			}
		case st != 409 && (st != 402 || offerError(hdr) != x402.ReasonDuplicateSettlement):
			t.Errorf("retry on %s: %d %q %.200s", url, st, offerError(hdr), b)
		}
		r.statuses[st]++
	}
	for deadline := time.Now().Add(20 * time.Second); r.results == 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var wg sync.WaitGroup
		for _, url := range urls {
			if together {
				wg.Go(func() { try(url) })
			} else {
				try(url)
			}
		}
		wg.Wait()
	}
	return r
}

// serversUntilSettled posts the payment h to url until it is not told to
// wait (409), for at most 5 s, and returns the last answer.
func serversUntilSettled(t *testing.T, url, h string) (int, http.Header, []byte) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st, hdr, b, err := rawPost(url, scanText, map[string]string{"PAYMENT-SIGNATURE": h})
		if err != nil {
			t.Fatal(err)
		}
		if st != 409 || time.Now().After(deadline) {
			return st, hdr, b
		}
	}
}
