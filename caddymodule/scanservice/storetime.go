package scanservice

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promptwall/promptwall/store"
)

// The store's operations, the values of the op label: one per method of
// store.Store but Close, fixed here so that nothing a request carries can
// become a label.
const (
	opPrecheck = iota
	opPrecheckAll
	opReserve
	opPayment
	opSettle
	opClaim
	opDeliver
	opFail
	opRelease
	opSettling
	opLedger
	opHeartbeat
	opLeave
	opPrune
	numOps
)

var opNames = [numOps]string{
	opPrecheck:    "precheck",
	opPrecheckAll: "precheck_all",
	opReserve:     "reserve",
	opPayment:     "payment",
	opSettle:      "settle",
	opClaim:       "claim",
	opDeliver:     "deliver",
	opFail:        "fail",
	opRelease:     "release",
	opSettling:    "settling",
	opLedger:      "ledger",
	opHeartbeat:   "heartbeat",
	opLeave:       "leave",
	opPrune:       "prune",
}

// storeBuckets run from 10µs to 10s, ten a decade (no bucket spans more
// than a third more than its lower bound): fine enough to read a p50 or
// p99 to within a few percent, with 5 ms (the target a store operation
// must stay under) a bucket bound.
var storeBuckets = func() []float64 {
	var b []float64
	for exp := -6; exp < 0; exp++ {
		for _, m := range []int{10, 12, 15, 20, 25, 30, 40, 50, 60, 80} {
			// Parsed from decimal, so that each bound is the float
			// nearest its decimal value and prints as it.
			v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, exp), 64)
			b = append(b, v)
		}
	}
	return append(b, 10)
}()

// storeSeconds and requestStoreSeconds say what the store costs the
// service: each operation, and each request's sum of them, to read beside
// the request latency (bench/scan-servers.sh does).
var (
	storeSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "promptwall",
		Subsystem: "scan",
		Name:      "store_seconds",
		Help:      "Time of each store operation, waiting for a connection included, by op (precheck, precheck_all, reserve, payment, settle, claim, deliver, fail, release, settling, ledger, heartbeat, leave, prune).",
		Buckets:   storeBuckets,
	}, []string{"op"})
	requestStoreSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "promptwall",
		Subsystem: "scan",
		Name:      "request_store_seconds",
		Help:      "Time a request spent in store operations, by endpoint (rules, precheck, scan, mcp).",
		Buckets:   storeBuckets,
	}, []string{"endpoint"})
)

// timeStore is s with every operation observed in storeSeconds.
func timeStore(s store.Store) store.Store { return newTimedStore(s, storeSeconds) }

// timedStore times the operations of a store. It names every method
// rather than embedding the Store, so that a method added to the interface
// cannot pass by untimed.
type timedStore struct {
	s   store.Store
	obs [numOps]prometheus.Observer
}

func newTimedStore(s store.Store, h *prometheus.HistogramVec) *timedStore {
	t := &timedStore{s: s}
	for i, name := range opNames {
		t.obs[i] = h.WithLabelValues(name)
	}
	return t
}

// observe records an operation that began at start, also on the clock of
// the request it was made for, if any.
func (t *timedStore) observe(ctx context.Context, op int, start time.Time) {
	d := time.Since(start)
	t.obs[op].Observe(d.Seconds())
	if c, ok := ctx.Value(storeClockKey{}).(*storeClock); ok {
		c.ns.Add(int64(d))
	}
}

// storeClock adds up the store time of one request.
type storeClock struct{ ns atomic.Int64 }

type storeClockKey struct{}

// timeRequestStore puts a store clock in *r's context and returns what
// observes its total for endpoint when the request is done: ServeHTTP
// defers it.
func timeRequestStore(endpoint string, r **http.Request) func() {
	return timeRequestStoreIn(requestStoreSeconds, endpoint, r)
}

func timeRequestStoreIn(h *prometheus.HistogramVec, endpoint string, r **http.Request) func() {
	c := new(storeClock)
	*r = (*r).WithContext(context.WithValue((*r).Context(), storeClockKey{}, c))
	obs := h.WithLabelValues(endpoint)
	return func() { obs.Observe(time.Duration(c.ns.Load()).Seconds()) }
}

func (t *timedStore) Precheck(ctx context.Context, caller string, now time.Time, limit int, interval time.Duration) (store.Quota, error) {
	defer t.observe(ctx, opPrecheck, time.Now())
	return t.s.Precheck(ctx, caller, now, limit, interval)
}

func (t *timedStore) PrecheckAll(ctx context.Context, now time.Time, counters ...store.Counter) ([]store.Quota, error) {
	defer t.observe(ctx, opPrecheckAll, time.Now())
	return t.s.PrecheckAll(ctx, now, counters...)
}

func (t *timedStore) Reserve(ctx context.Context, p store.Payment, now time.Time) (store.Payment, bool, error) {
	defer t.observe(ctx, opReserve, time.Now())
	return t.s.Reserve(ctx, p, now)
}

func (t *timedStore) Payment(ctx context.Context, key string) (store.Payment, bool, error) {
	defer t.observe(ctx, opPayment, time.Now())
	return t.s.Payment(ctx, key)
}

func (t *timedStore) Settle(ctx context.Context, key, owner, transaction string, row store.LedgerRow, now time.Time) (bool, error) {
	defer t.observe(ctx, opSettle, time.Now())
	return t.s.Settle(ctx, key, owner, transaction, row, now)
}

func (t *timedStore) Claim(ctx context.Context, key, from, to string, now time.Time) (bool, error) {
	defer t.observe(ctx, opClaim, time.Now())
	return t.s.Claim(ctx, key, from, to, now)
}

func (t *timedStore) Deliver(ctx context.Context, now time.Time, keys ...string) error {
	defer t.observe(ctx, opDeliver, time.Now())
	return t.s.Deliver(ctx, now, keys...)
}

func (t *timedStore) Fail(ctx context.Context, key string, now time.Time) error {
	defer t.observe(ctx, opFail, time.Now())
	return t.s.Fail(ctx, key, now)
}

func (t *timedStore) Release(ctx context.Context, key string) error {
	defer t.observe(ctx, opRelease, time.Now())
	return t.s.Release(ctx, key)
}

func (t *timedStore) Settling(ctx context.Context, before time.Time, limit int) ([]store.Payment, error) {
	defer t.observe(ctx, opSettling, time.Now())
	return t.s.Settling(ctx, before, limit)
}

func (t *timedStore) Ledger(ctx context.Context, from, to time.Time) ([]store.LedgerRow, error) {
	defer t.observe(ctx, opLedger, time.Now())
	return t.s.Ledger(ctx, from, to)
}

func (t *timedStore) Heartbeat(ctx context.Context, id string, now time.Time) error {
	defer t.observe(ctx, opHeartbeat, time.Now())
	return t.s.Heartbeat(ctx, id, now)
}

func (t *timedStore) Leave(ctx context.Context, id string) error {
	defer t.observe(ctx, opLeave, time.Now())
	return t.s.Leave(ctx, id)
}

func (t *timedStore) Prune(ctx context.Context, before time.Time) (int64, error) {
	defer t.observe(ctx, opPrune, time.Now())
	return t.s.Prune(ctx, before)
}

// Close is not an operation a request waits for: it is not timed.
func (t *timedStore) Close() error { return t.s.Close() }

var _ store.Store = (*timedStore)(nil)
