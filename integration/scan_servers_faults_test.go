package integration

import (
	"net/http"
	"testing"
	"time"

	"github.com/promptwall/promptwall/x402"
)

// TestScanServersFaultDatabaseDown takes the PostgreSQL of two servers
// away under load of paid scans and pre-checks: restarted at once (a crash
// and recovery), stopped for five seconds (connections refused), and cut
// off for twelve (connections hang: a network partition). Throughout:
//   - a paid scan is answered with its scan, 503 store_unavailable
//     (nothing was taken), or, when its payment settled while the ledger
//     could not be written, 500 ledger_unavailable with the receipt, which
//     a retry with the same payment turns into its scan once;
//   - a pre-check is answered with its verdict or 503 store_unavailable;
//   - no answer takes longer than the store's bounds (10 s), none hangs;
//   - the books end exact (checkFaultBooks): no free result, no double
//     count, every pre-check counted once;
//   - once the database is back both servers serve again within a few
//     seconds, the same processes.
func TestScanServersFaultDatabaseDown(t *testing.T) {
	for _, tc := range []struct {
		name string
		away func(t *testing.T, c *faultCluster)
	}{
		{"restarted", func(t *testing.T, c *faultCluster) {
			if err := c.pg.Restart(); err != nil {
				t.Fatal(err)
			}
		}},
		{"stopped for 5s", func(t *testing.T, c *faultCluster) {
			if err := c.pg.Down(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Second)
			if err := c.pg.Up(); err != nil {
				t.Fatal(err)
			}
		}},
		// Unreachable without a refusal: requests wait on the store
		// until their own deadline.
		{"partitioned for 12s", func(t *testing.T, c *faultCluster) {
			c.gate.hold()
			time.Sleep(12 * time.Second)
			c.gate.open()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startFaultCluster(t, 2)
			c.fac.delay.Store(int64(20 * time.Millisecond)) // payments are caught settling too
			l := c.startFaultLoad(t, 6, 2)
			faultWaitScans(t, l, 40)

			l.outage.Store(true)
			wentDown := time.Now()
			tc.away(t, c)
			l.outage.Store(false)
			back := time.Now()
			resumed := c.waitResumed(t, l, back, 5*time.Second)
			time.Sleep(time.Second)
			l.stop()
			for i, s := range c.srvs {
				if s.exited(0) {
					t.Fatalf("server %d exited; log:\n%s", i, s.Log())
				}
			}

			var scans, checks, inOutage, afterBack []faultAnswer
			var slowest time.Duration
			for _, p := range l.payments() {
				scans = append(scans, p.first)
				if p.inOutage {
					inOutage = append(inOutage, p.first)
				}
				if p.first.sent.After(back) {
					afterBack = append(afterBack, p.first)
				}
				slowest = max(slowest, p.first.took)
				switch a := p.first; {
				case a.status == http.StatusOK && a.result:
				case a.status == http.StatusServiceUnavailable && a.code == "store_unavailable" && !a.receipt:
				case a.status == http.StatusInternalServerError && a.code == "ledger_unavailable" && a.receipt:
				default:
					t.Errorf("paid scan answered %v (result %v, receipt %v)", a, a.result, a.receipt)
				}
			}
			for _, as := range l.checks {
				for _, a := range as {
					checks = append(checks, a)
					if a.sent.After(back) {
						afterBack = append(afterBack, a)
					}
					slowest = max(slowest, a.took)
					if !(a.status == http.StatusOK && a.result) && !(a.status == http.StatusServiceUnavailable && a.code == "store_unavailable") {
						t.Errorf("pre-check answered %v", a)
					}
				}
			}
			if slowest > 11*time.Second {
				t.Errorf("the slowest answer took %v: longer than the store's 10 s bound", slowest)
			}
			st, ct := faultTally(scans), faultTally(checks)
			if st["200 "] == len(scans) && ct["200 "] == len(checks) {
				t.Fatal("every request was answered 200: the fault caught no request, the test proves little")
			}

			retried := c.retryUnanswered(t, l)
			for _, p := range l.payments() {
				if n := len(p.retries); n > 0 && p.retries[n-1].status != http.StatusOK {
					t.Errorf("payment %s (first answer %v) retried: %v, want its scan", p.payer, p.first, p.retries)
				}
			}
			// Stopped, the servers reconcile nothing more while the
			// books are read.
			for _, s := range c.srvs {
				s.Stop()
			}
			rows, uncounted := c.checkFaultBooks(t, l, wentDown, back)
			c.checkLogs(t)
			t.Logf("database away %v; paid scans %v (sent while away: %v); pre-checks %v; slowest answer %v; "+
				"both servers serving %v after it was back; requests sent after it was back: %v; "+
				"%d payments retried; %d ledger rows, %d payments settled; "+
				"%d payments left reserved (their 503 came after the reservation was written); "+
				"%d pre-checks charged whose answer was 503 (their commit went through after it)",
				back.Sub(wentDown).Round(time.Millisecond), st, faultTally(inOutage), ct, slowest.Round(time.Millisecond),
				resumed.Round(time.Millisecond), faultTally(afterBack), retried, len(rows), c.fac.settledKeys(), readFaultBooks(t, c.dsn).settling, uncounted)
		})
	}
}

// TestScanServersFaultSIGKILL kills one of three servers on one PostgreSQL
// with SIGKILL while paid scans run on all three and each settlement takes
// 100 ms, so payments are caught at every step. The other two go on
// answering; the payments the dead server left in flight are finished by
// their reconciliation once its heartbeat is 6 s old, each with exactly one
// ledger row; each payment the dead server left unanswered gets its scan on
// a survivor when retried, and a scan given is not given again.
func TestScanServersFaultSIGKILL(t *testing.T) {
	c := startFaultCluster(t, 3)
	c.fac.delay.Store(int64(100 * time.Millisecond))
	l := c.startFaultLoad(t, 9, 0)
	faultWaitScans(t, l, 60)

	l.dead[0].Store(true)
	c.srvs[0].Kill()
	killed := time.Now()
	time.Sleep(2 * time.Second)
	l.stop()

	after := 0 // scans the survivors gave after the kill
	var lost []*faultPayment
	for _, p := range l.payments() {
		switch a := p.first; {
		case a.status == http.StatusOK && a.result:
			if p.srv != 0 && a.sent.After(killed) {
				after++
			}
		case p.srv == 0 && a.err != nil:
			lost = append(lost, p) // in flight on the dead server
		default:
			t.Errorf("server %d answered a paid scan %v (result %v)", p.srv, a, a.result)
		}
	}
	if after < 20 {
		t.Errorf("the survivors gave %d scans in the 2 s after the kill", after)
	}
	if len(lost) == 0 {
		t.Fatal("the kill caught no payment in flight: the test proves little")
	}
	atFacilitator := 0 // lost payments the facilitator settled: the dead server had sent them
	for _, p := range lost {
		if c.fac.wasSettled(p.key) {
			atFacilitator++
		}
	}

	// Reconciliation alone, no client retrying: every payment the dead
	// server left settling is finished, with its row.
	var missing []string
	var left int
	for end := time.Now().Add(40 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		books := readFaultBooks(t, c.dsn)
		missing = missing[:0]
		for _, p := range l.payments() {
			if c.fac.wasSettled(p.key) && books.rows[p.payer] != 1 {
				missing = append(missing, p.payer)
			}
		}
		left = books.settling
		if (len(missing) == 0 && left == 0) || time.Now().After(end) {
			break
		}
	}
	reconciled := time.Since(killed)
	if len(missing) > 0 || left > 0 {
		t.Fatalf("%v after the kill: %d settled payments without their one ledger row, %d still in flight", reconciled, len(missing), left)
	}

	retried := c.retryUnanswered(t, l)
	for _, p := range lost {
		if n := len(p.retries); n == 0 || p.retries[n-1].status != http.StatusOK {
			t.Errorf("payment %s, unanswered by the dead server: retried on a survivor %v, want its scan", p.payer, p.retries)
		}
	}
	// A scan a survivor gave, replayed on the other survivor: refused as
	// used, never a second scan.
	replayed := 0
	for _, p := range l.payments() {
		if p.srv == 0 || p.first.status != http.StatusOK || replayed == 20 {
			continue
		}
		replayed++
		st, hdr, _, err := rawPost(c.urls[3-p.srv]+"/scan", scanText, map[string]string{"PAYMENT-SIGNATURE": p.header})
		if err != nil || st != http.StatusPaymentRequired || offerError(hdr) != x402.ReasonDuplicateSettlement {
			t.Errorf("payment %s, scanned on server %d, replayed on the other: %d %q %v", p.payer, p.srv, st, offerError(hdr), err)
		}
	}
	for _, s := range c.srvs[1:] {
		s.Stop()
	}
	rows, _ := c.checkFaultBooks(t, l, time.Time{}, time.Time{})
	c.checkLogs(t)
	t.Logf("%d payments sent; %d left unanswered by the killed server, %d of them sent to the facilitator; "+
		"survivors gave %d scans in the 2 s after the kill; all in flight reconciled %v after the kill; "+
		"%d retried, %d replays refused; %d ledger rows, %d payments settled",
		len(l.payments()), len(lost), atFacilitator, after, reconciled.Round(time.Millisecond), retried, replayed,
		len(rows), c.fac.settledKeys())
}

// TestScanServersFaultRefusedIsNotCharged has the commit of a payment's
// reservation held on the wire, as a network partition does, until the
// request gives up on the store: the answer is 503 store_unavailable, retry
// with the same payment. Then the partition heals, and the commit, held,
// reaches the database after all. The server never sent that payment, so
// it must not charge it on its own (the client may pay anew instead): it
// lets the reservation go, and a retry with it is charged once, at once.
// The window watched is the
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
	// 1, or 0 when the server's reconciliation already let it go.
	if reserved := readFaultBooks(t, c.dsn).settling; reserved > 1 {
		t.Fatalf("%d payments in flight in the database after the held commit went through, want at most 1", reserved)
	}
	// The server's reconciliation lets it go on its next 10 s tick; until
	// the row is gone, nothing may charge it. Once gone, nothing can.
	answered := p.first.sent.Add(p.first.took)
	for end := p.first.sent.Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		books := readFaultBooks(t, c.dsn)
		if c.fac.wasSettled(p.key) {
			again := faultPost(c.urls[0]+"/scan", scanText, p.header)
			t.Fatalf("a payment answered 503 store_unavailable, never sent, was settled %v later, with %d ledger row(s); "+
				"a retry with the same payment: %v (scan given: %v)",
				time.Since(answered).Round(time.Second), books.rows[p.payer], again, again.result)
		}
		if books.settling == 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the reservation the client was told had failed is still in flight 30 s later")
		}
	}
	again := faultPost(c.urls[0]+"/scan", scanText, p.header)
	if again.status != http.StatusOK || !again.result || c.fac.settles(p.key) != 1 || readFaultBooks(t, c.dsn).rows[p.payer] != 1 {
		t.Fatalf("a retry with the payment: %v (scan given: %v), settled %d times; want 200, a scan, settled once, one row",
			again, again.result, c.fac.settles(p.key))
	}
}

// faultWaitScans waits until the load has had n paid scans answered 200.
func faultWaitScans(t *testing.T, l *faultLoad, n int) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ok := 0
		l.mu.Lock()
		for _, p := range l.pays {
			if p.first.status == http.StatusOK {
				ok++
			}
		}
		l.mu.Unlock()
		if ok >= n {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%d paid scans answered 200 in 30 s, want %d", ok, n)
		}
	}
}
