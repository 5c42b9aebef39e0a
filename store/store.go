// Package store keeps what the scan service must remember between requests
// and across restarts: the payments ledger, the free pre-check counters and
// the keys of payments already used.
//
// The Store interface is the whole contract. SQLite (one local file, a
// pure-Go driver) is the default backend; PostgreSQL is the backend of
// several servers sharing one store. Both pass the same suite (package
// storetest). The scan service names them as Caddy modules (package
// caddymodule/stores); this package knows nothing of Caddy.
//
// Nothing here ever sees a submitted text: the ledger holds the payer, the
// time, the price, the verdict and per-category counts, and nothing else;
// a payment holds its signed transaction and the ledger row it will write.
package store

import (
	"context"
	"fmt"
	"time"
)

// Store is a backend. Every method is safe for concurrent use, also from
// several processes sharing one backing store.
type Store interface {
	// Precheck charges one free pre-check to caller at now if the caller
	// is within its quota: at most limit per UTC day (limit <= 0: no daily
	// limit) and at least interval since its last charged pre-check
	// (interval <= 0: none). Checking and charging are one atomic step per
	// caller, so concurrent requests never overrun the quota. A refused
	// pre-check charges nothing.
	Precheck(ctx context.Context, caller string, now time.Time, limit int, interval time.Duration) (Quota, error)

	// PrecheckAll charges one free pre-check to every counter at now if
	// each is within its own quota, and to none of them otherwise: the
	// checks and the charges are one atomic step over all the counters,
	// so a pre-check refused by one counter costs nothing on the others.
	// It returns one Quota per counter, in order; Allowed is the same in
	// all of them. Keys must be distinct.
	PrecheckAll(ctx context.Context, now time.Time, counters ...Counter) ([]Quota, error)

	// Reserve stores p as settling since now, unless a payment with its
	// key is known. It returns the payment stored under the key and
	// whether that is p, reserved by this call: of any number of
	// concurrent calls with one key, exactly one gets true. When p.Ident
	// names a payment with another key, it stores nothing and returns that
	// payment, false and ErrIdentInUse.
	Reserve(ctx context.Context, p Payment, now time.Time) (Payment, bool, error)

	// Payment returns the payment with key, and false when none is known.
	Payment(ctx context.Context, key string) (Payment, bool, error)

	// Settle moves a settling payment to settled, with its on-chain
	// transaction, and appends row to the ledger, in one durable step: when
	// it returns nil both survive a crash of the process (and, for SQLite
	// with synchronous=FULL, of the machine). It reports false, and
	// writes nothing, when the payment is not settling: whoever settles it
	// first writes the one ledger row it ever has.
	//
	// owner is the server settling it, which gives its answer: the
	// payment's owner from now on. An empty owner means none gives it
	// yet (a reconciliation recorded it): the next retry claims it.
	Settle(ctx context.Context, key, owner, transaction string, row LedgerRow, now time.Time) (bool, error)

	// Claim makes to the owner of a settled payment, the server giving
	// its answer, if its owner is still from; of any number of servers
	// that read one owner and claim the payment, exactly one gets true.
	// to may be empty: the owner did not give the answer, and the next
	// retry, on any server, may claim it. since becomes now.
	Claim(ctx context.Context, key, from, to string, now time.Time) (bool, error)

	// Deliver moves settled payments to delivered.
	Deliver(ctx context.Context, now time.Time, keys ...string) error

	// Fail moves a settling payment to failed: its key stays used.
	Fail(ctx context.Context, key string, now time.Time) error

	// Release forgets a settling payment, freeing its key. Call it only
	// when the payment definitely did not and cannot take effect.
	Release(ctx context.Context, key string) error

	// Settling returns up to limit payments settling since before before,
	// oldest first: the ones a crash may have left in flight.
	Settling(ctx context.Context, before time.Time, limit int) ([]Payment, error)

	// Ledger returns the rows with from <= Time < to, oldest first.
	Ledger(ctx context.Context, from, to time.Time) ([]LedgerRow, error)

	// Heartbeat records that the server id is alive at now. A payment in
	// flight names its owner, and reports when the owner was last seen
	// (Payment.OwnerSeen): another server tells a payment being handled
	// from one a dead server left behind.
	Heartbeat(ctx context.Context, id string, now time.Time) error

	// Leave forgets the server id, which stops cleanly: its payments in
	// flight are left behind at once.
	Leave(ctx context.Context, id string) error

	// Prune deletes pre-check counters of callers not seen since before.
	// It returns how many it deleted. Ledger rows and payment keys are
	// never pruned: the first is the accounting record, the second is what
	// stops an old transaction from being accepted twice.
	Prune(ctx context.Context, before time.Time) (int64, error)

	// Close releases the backend's resources.
	Close() error
}

// LedgerRow is one paid scan. These five fields are everything the ledger
// keeps, as the published retention promise says.
type LedgerRow struct {
	// Payer is the paying wallet (base58), as the facilitator reported it.
	Payer string `json:"payer"`
	// Time is when the scan was paid for (stored in UTC, microseconds).
	Time time.Time `json:"time"`
	// Price is the amount paid in the asset's smallest units (USDC has 6
	// decimals: 10000 is $0.01). Integers keep sums exact.
	Price uint64 `json:"price"`
	// Verdict is safe, suspicious or malicious.
	Verdict string `json:"verdict"`
	// CategoryCounts maps each category to its number of matches;
	// categories without a match are left out.
	CategoryCounts map[string]int `json:"category_counts"`
}

// Limit names the quota a refused pre-check ran into.
type Limit string

// The two pre-check limits.
const (
	LimitDaily    Limit = "daily_limit"
	LimitInterval Limit = "interval"
)

// Counter is one quota a pre-check is charged against, such as a caller
// wallet or a client address.
type Counter struct {
	// Key names the counter. Callers choose a namespace per kind of
	// counter (a wallet's base58 address has no colon, so "ip:..." keys
	// cannot collide with wallets).
	Key string
	// Limit is the most pre-checks per UTC day (<= 0: no daily limit).
	Limit int
	// Interval is the least time between two charged pre-checks
	// (<= 0: none).
	Interval time.Duration
}

// Quota is the outcome of a pre-check.
type Quota struct {
	// Allowed reports whether the pre-check was charged and may be answered.
	Allowed bool
	// Used is how many pre-checks the caller (the counter) has had today,
	// this one included when Allowed.
	Used int
	// Exceeded says which limit refused the pre-check (empty when Allowed).
	// When both apply, the daily limit is named: it is the longer wait.
	Exceeded Limit
	// RetryAfter is how long until a pre-check would be allowed again
	// (zero when Allowed).
	RetryAfter time.Duration
}

// precheckState is one caller's counter as a backend keeps it.
type precheckState struct {
	Day   string // UTC day of the counted pre-checks, "2006-01-02"
	Count int    // pre-checks charged on Day
	Last  int64  // Unix milliseconds of the last charged pre-check
}

// utcDay is the counter's day key for t.
func utcDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// decide applies the quota to a caller's state (nil: never seen) and
// returns the answer and, when allowed, the state to store. Backends run it
// inside their atomic read-modify-write, so the rule lives in one place.
func decide(st *precheckState, now time.Time, limit int, interval time.Duration) (Quota, precheckState) {
	today := utcDay(now)
	nowMs := now.UnixMilli()
	count := 0
	if st != nil && st.Day == today {
		count = st.Count
	}
	var q Quota
	q.Used = count
	if limit > 0 && count >= limit {
		next := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
		q.Exceeded = LimitDaily
		q.RetryAfter = next.Sub(now)
	}
	if st != nil && interval > 0 {
		elapsed := time.Duration(nowMs-st.Last) * time.Millisecond
		if elapsed < interval {
			wait := interval - elapsed
			// A clock that went backwards must not lock a caller out
			// for longer than one interval.
			wait = min(wait, interval)
			if q.Exceeded == "" {
				q.Exceeded = LimitInterval
			}
			q.RetryAfter = max(q.RetryAfter, wait)
		}
	}
	if q.Exceeded != "" {
		return q, precheckState{}
	}
	q.Allowed = true
	q.Used = count + 1
	return q, precheckState{Day: today, Count: count + 1, Last: nowMs}
}

// decideAll applies decide to every counter, states[i] being counter i's
// state (nil: never seen). When any counter refuses, none is charged: the
// quotas of the others say not allowed, with their counts as they were,
// and no state is returned to store.
func decideAll(states []*precheckState, now time.Time, counters []Counter) ([]Quota, []precheckState) {
	qs := make([]Quota, len(counters))
	next := make([]precheckState, len(counters))
	allowed := true
	for i, c := range counters {
		qs[i], next[i] = decide(states[i], now, c.Limit, c.Interval)
		allowed = allowed && qs[i].Allowed
	}
	if allowed {
		return qs, next
	}
	for i := range qs {
		if qs[i].Allowed {
			qs[i].Allowed = false
			qs[i].Used--
		}
	}
	return qs, nil
}

// checkKeys refuses a list of counters with a key given twice: charging
// one counter twice in one step is a mistake of the caller.
func checkKeys(counters []Counter) error {
	for i, c := range counters {
		for _, d := range counters[:i] {
			if c.Key == d.Key {
				return fmt.Errorf("store: pre-check: counter %q given twice", c.Key)
			}
		}
	}
	return nil
}
