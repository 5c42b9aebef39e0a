package integration

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// faultBooks is what the database holds at one moment, read with pgx alone.
type faultBooks struct {
	rows     map[string]int // ledger rows per payer
	counters map[string]int // today's pre-check count per counter key
	settling int            // payments in flight
}

func readFaultBooks(t *testing.T, dsn string) faultBooks {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	read := func(q string) map[string]int {
		m := map[string]int{}
		rs, err := conn.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for rs.Next() {
			var k string
			var n int
			if err := rs.Scan(&k, &n); err != nil {
				t.Fatal(err)
			}
			m[k] = n
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	return faultBooks{
		rows:     read("SELECT payer, count(*) FROM ledger GROUP BY payer"),
		counters: read("SELECT caller, count FROM precheck WHERE day = to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD')"),
		settling: read("SELECT state, count(*) FROM inflight GROUP BY state")["settling"],
	}
}

// retryUnanswered retries, on its own server if alive and else on the next
// live one, every payment without a scan whose payment may have been taken:
// its answer said it settled, or none came. A retry answered 409 or 503 is
// repeated for up to 30 s, as a client told to wait would.
func (c *faultCluster) retryUnanswered(t *testing.T, l *faultLoad) (retried int) {
	t.Helper()
	for _, p := range l.payments() {
		if p.first.status == http.StatusOK || (p.first.err == nil && !p.first.receipt && !c.fac.wasSettled(p.key)) {
			continue
		}
		retried++
		s := p.srv
		if l.dead[s].Load() {
			s = l.pick(s + 1)
		}
		for end := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			a := faultPost(c.urls[s]+"/scan", scanText, p.header)
			p.retries = append(p.retries, a)
			if (a.status != http.StatusConflict && a.status != http.StatusServiceUnavailable) || time.Now().After(end) {
				break
			}
		}
	}
	return retried
}

// checkFaultBooks states the money invariants over everything l sent:
//   - a paid scan answered 200 carries a result and a receipt, and its
//     payment settled and has its ledger row: no free result;
//   - every payment the facilitator settled has exactly one ledger row,
//     and no other payment has one: nothing lost, nothing counted twice;
//   - no payment got its scan twice;
//   - each pre-check counter holds exactly the pre-checks answered 200,
//     but for those refused at the store's deadline, and those in flight
//     while the database was away (from down to back; zero: it never
//     was): the commit of such a one may have been held on the wire and
//     gone through after the answer, or landed just before a shutdown that
//     dropped its acknowledgement, as a client of any database cannot tell
//     (faultCharged).
//
// It returns the ledger rows per payer, and how many pre-checks were
// charged without an answer 200.
func (c *faultCluster) checkFaultBooks(t *testing.T, l *faultLoad, down, back time.Time) (rows map[string]int, unanswered int) {
	t.Helper()
	books := readFaultBooks(t, c.dsn)
	rows, counters := books.rows, books.counters
	total := 0
	for _, p := range l.payments() {
		settled := c.fac.wasSettled(p.key)
		n := rows[p.payer]
		total += n
		scans := 0
		for _, a := range append([]faultAnswer{p.first}, p.retries...) {
			if a.status != http.StatusOK {
				continue
			}
			scans++
			if !a.result || !a.receipt || !settled || n != 1 {
				t.Errorf("payment %s answered 200 (result %v, receipt %v) with settled %v and %d ledger rows: a free result",
					p.payer, a.result, a.receipt, settled, n)
			}
		}
		switch {
		case scans > 1:
			t.Errorf("payment %s got its scan %d times", p.payer, scans)
		case settled && n != 1:
			t.Errorf("payment %s settled and has %d ledger rows (first answer %v, retries %v)", p.payer, n, p.first, p.retries)
		case !settled && n != 0:
			t.Errorf("payment %s never settled and has %d ledger rows", p.payer, n)
		}
	}
	if len(rows) != total {
		t.Errorf("the ledger has rows of %d payers, %d of them sent by this test", len(rows), total)
	}
	okAll, heldAll := 0, 0
	for caller, as := range l.checks {
		ok, held := faultCharged(as, down, back)
		okAll, heldAll = okAll+ok, heldAll+held
		if n := counters[caller]; n < ok || n > ok+held {
			t.Errorf("pre-check caller %s: %d answered 200 (and %d refused at the store's deadline or in flight when it went away), the store counts %d (answers %v)",
				caller, ok, held, n, faultTally(as))
		}
	}
	if n := counters["ip:127.0.0.1"]; n < okAll || n > okAll+heldAll {
		t.Errorf("the address counter holds %d pre-checks, %d were answered 200 (and %d refused at the store's deadline or in flight when it went away)", n, okAll, heldAll)
	}
	return rows, counters["ip:127.0.0.1"] - okAll
}

// faultCharged counts the pre-checks answered 200, and those answered 503
// whose charge may have been committed after all: after waiting out the
// store's 10 s deadline, or in flight while the database went away (from
// down to back: a shutdown may commit a transaction and drop the connection
// before its acknowledgement).
func faultCharged(as []faultAnswer, down, back time.Time) (ok, held int) {
	for _, a := range as {
		inFlight := !down.IsZero() && !a.sent.After(back) && !a.sent.Add(a.took).Before(down)
		switch {
		case a.status == http.StatusOK:
			ok++
		case a.status == http.StatusServiceUnavailable && (a.took >= 9*time.Second || inFlight):
			held++
		}
	}
	return ok, held
}
