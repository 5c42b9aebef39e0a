package integration

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store/pgtest"
	"github.com/promptwall/promptwall/x402"
)

// The fault suite (scan_servers_faults_test.go) runs several servers of one
// paid site on one PostgreSQL of the test's own, which it stops, restarts
// or leaves running while it kills a server. Every request and its answer
// is recorded; the invariants are stated against those records, what the
// counting facilitator settled and what the database holds at the end.

// faultCluster is n caddy servers sharing one PostgreSQL database.
type faultCluster struct {
	pg    *pgtest.Server
	dsn   string     // the database, directly
	gate  *faultGate // the servers' way to it
	fac   *countingFacilitator
	srvs  []*server
	urls  []string // base URLs, "http://host:port"
	offer *x402.PaymentRequired
}

// startFaultCluster starts a private PostgreSQL and n servers on one
// database of it, reached through a faultGate, with limits on pre-checks
// no load reaches, so that every one the store is asked to charge is
// charged: the counters then count answers.
func startFaultCluster(t *testing.T, n int) *faultCluster {
	t.Helper()
	pg, err := pgtest.Start()
	if err != nil {
		if errors.Is(err, pgtest.ErrNoPostgres) && os.Getenv("CI") != "true" {
			t.Skipf("skipped: %v (CI=true never skips)", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(pg.Stop) // after the servers: cleanups run last first
	c := &faultCluster{pg: pg, dsn: pg.Database(t), fac: startCountingFacilitator(t)}
	u, err := url.Parse(c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	c.gate = startFaultGate(t, u.Host)
	u.Host = c.gate.addr
	// The server trusts every local connection; the password is there to
	// be looked for in the logs, where it must never be.
	u.User = url.UserPassword("postgres", faultPassword)
	merchant := newGoPayer("fault merchant")
	for range n {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		cfg := fmt.Sprintf(`{
	admin off
}

http://%s {
	prompt_scan {
		pay_to %s
		facilitator %s {
			settle_timeout 2s
		}
		store postgres "%s"
		precheck_daily_limit unlimited
		precheck_interval none
		precheck_address_daily_limit 100000000
	}
}
`, addr, merchant.addr, c.fac.URL, u)
		c.srvs = append(c.srvs, startCaddy(t, cfg, nil, addr))
		c.urls = append(c.urls, "http://"+addr)
	}
	c.offer = fetchOffer(t, c.urls[0]+"/scan")
	return c
}

// faultPassword is in the servers' DSN.
const faultPassword = "fault-dsn-secret"

// checkLogs fails the test if a server logged a panic or the DSN's password.
func (c *faultCluster) checkLogs(t *testing.T) {
	t.Helper()
	for i, s := range c.srvs {
		log := s.Log()
		if p := logLines(log, "panic"); len(p) > 0 {
			t.Errorf("server %d logged a panic: %s", i, p[0])
		}
		if p := logLines(log, faultPassword); len(p) > 0 {
			t.Errorf("server %d logged the database password: %s", i, p[0])
		}
	}
}

// faultAnswer is one request's outcome as its client saw it.
type faultAnswer struct {
	sent    time.Time
	took    time.Duration
	status  int
	code    string // the error code of an error body
	result  bool   // the body is a scan result or a pre-check verdict
	receipt bool   // a PAYMENT-RESPONSE header came with it
	err     error  // transport error; status is 0
}

func (a faultAnswer) String() string {
	if a.err != nil {
		return a.err.Error()
	}
	return fmt.Sprintf("%d %s", a.status, a.code)
}

// faultClient has a timeout far above the store's bounds, so that a
// request the service left hanging shows up as a long one, not as an error.
var faultClient = &http.Client{Timeout: 60 * time.Second}

func faultPost(url string, body []byte, payment string) faultAnswer {
	start := time.Now()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return faultAnswer{sent: start, err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	if payment != "" {
		req.Header.Set("PAYMENT-SIGNATURE", payment)
	}
	resp, err := faultClient.Do(req)
	if err != nil {
		return faultAnswer{sent: start, took: time.Since(start), err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	a := faultAnswer{sent: start, took: time.Since(start), status: resp.StatusCode, err: err,
		code: errorCode(b), result: givesResult(b), receipt: resp.Header.Get("PAYMENT-RESPONSE") != ""}
	return a
}

// faultPayment is one payment, sent once to one server, and the answers
// of any retries with it.
type faultPayment struct {
	srv           int
	payer, header string
	key           string
	first         faultAnswer
	retries       []faultAnswer
	inOutage      bool // sent while the database was down or restarting
}

// faultLoad is paid scans and pre-checks sent round robin to the live
// servers of a cluster until stop.
type faultLoad struct {
	c       *faultCluster
	t       *testing.T
	mu      sync.Mutex
	pays    []*faultPayment
	checks  map[string][]faultAnswer // caller -> answers
	dead    []atomic.Bool            // servers killed: not sent to any more
	outage  atomic.Bool              // the database is down now
	stopped chan struct{}
	wg      sync.WaitGroup
	seq     atomic.Int64
}

// startFaultLoad runs payers paid-scan workers and checkers pre-check
// workers, each pre-check worker with a wallet of its own.
func (c *faultCluster) startFaultLoad(t *testing.T, payers, checkers int) *faultLoad {
	l := &faultLoad{c: c, t: t, checks: map[string][]faultAnswer{}, dead: make([]atomic.Bool, len(c.srvs)),
		stopped: make(chan struct{})}
	// A refused request is followed by a short pause, as a client told
	// to retry later would make, so that the servers keep the cores.
	pause := func(status int) {
		if status != http.StatusOK {
			time.Sleep(10 * time.Millisecond)
		}
	}
	for w := range payers {
		l.wg.Go(func() {
			for i := w; !l.done(); i++ {
				pause(l.pay(l.pick(i)).first.status)
			}
		})
	}
	for w := range checkers {
		caller := newGoPayer(fmt.Sprint("fault caller ", w)).addr
		l.wg.Go(func() {
			for i := w; !l.done(); i++ {
				pause(l.precheck(l.pick(i), caller).status)
			}
		})
	}
	return l
}

func (l *faultLoad) done() bool {
	select {
	case <-l.stopped:
		return true
	default:
		return false
	}
}

// stop ends the load and waits for the requests in flight.
func (l *faultLoad) stop() {
	close(l.stopped)
	l.wg.Wait()
}

// pick is the i-th live server in turn.
func (l *faultLoad) pick(i int) int {
	for j := range len(l.dead) {
		if s := (i + j) % len(l.dead); !l.dead[s].Load() {
			return s
		}
	}
	return 0
}

// pay sends one new payment to server s and records it.
func (l *faultLoad) pay(s int) *faultPayment {
	n := l.seq.Add(1)
	p := newGoPayer(fmt.Sprintf("%s payer %d", l.t.Name(), n))
	h := p.header(l.t, l.c.offer, fmt.Sprint("fault ", n))
	fp := &faultPayment{srv: s, payer: p.addr, header: h, key: headerKey(l.t, h),
		inOutage: l.outage.Load()}
	l.mu.Lock()
	l.pays = append(l.pays, fp)
	l.mu.Unlock()
	a := faultPost(l.c.urls[s]+"/scan", scanText, h)
	l.mu.Lock()
	fp.first = a
	l.mu.Unlock()
	return fp
}

// precheck sends one pre-check for caller to server s and records it.
func (l *faultLoad) precheck(s int, caller string) faultAnswer {
	body := fmt.Appendf(nil, `{"text":"hello","caller":%q}`, caller)
	a := faultPost(l.c.urls[s]+"/precheck", body, "")
	l.mu.Lock()
	l.checks[caller] = append(l.checks[caller], a)
	l.mu.Unlock()
	return a
}

// payments is a snapshot of the payments sent so far.
func (l *faultLoad) payments() []*faultPayment {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*faultPayment(nil), l.pays...)
}

// faultTally counts answers by their String.
func faultTally(as []faultAnswer) map[string]int {
	m := map[string]int{}
	for _, a := range as {
		m[a.String()]++
	}
	return m
}

// waitResumed sends a paid scan and a pre-check to every live server until
// each answers 200, and returns how long that took from since.
func (c *faultCluster) waitResumed(t *testing.T, l *faultLoad, since time.Time, within time.Duration) time.Duration {
	t.Helper()
	caller := newGoPayer("fault probe caller").addr
	for s := range c.srvs {
		if l.dead[s].Load() {
			continue
		}
		for {
			p := l.pay(s)
			a := l.precheck(s, caller)
			if p.first.status == http.StatusOK && a.status == http.StatusOK {
				break
			}
			if time.Since(since) > within {
				t.Fatalf("server %d has not resumed %v after the database came back: scan %v, pre-check %v; log:\n%s",
					s, within, p.first, a, c.srvs[s].Log())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return time.Since(since)
}
