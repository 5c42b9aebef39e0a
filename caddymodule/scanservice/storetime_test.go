package scanservice

import (
	"context"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/promptwall/promptwall/store"
)

// slowStore is a store whose every operation takes pause and names itself
// in called.
type slowStore struct {
	pause  time.Duration
	called []string
}

func (s *slowStore) op(name string) { s.called = append(s.called, name); time.Sleep(s.pause) }

func (s *slowStore) Precheck(context.Context, string, time.Time, int, time.Duration) (store.Quota, error) {
	s.op("Precheck")
	return store.Quota{}, nil
}
func (s *slowStore) PrecheckAll(context.Context, time.Time, ...store.Counter) ([]store.Quota, error) {
	s.op("PrecheckAll")
	return nil, nil
}
func (s *slowStore) Reserve(context.Context, store.Payment, time.Time) (store.Payment, bool, error) {
	s.op("Reserve")
	return store.Payment{}, false, nil
}
func (s *slowStore) Payment(context.Context, string) (store.Payment, bool, error) {
	s.op("Payment")
	return store.Payment{}, false, nil
}
func (s *slowStore) Claim(context.Context, string, string, string, time.Time) (bool, error) {
	s.op("Claim")
	return false, nil
}

func (s *slowStore) Settle(context.Context, string, string, string, store.LedgerRow, time.Time) (bool, error) {
	s.op("Settle")
	return false, nil
}
func (s *slowStore) Deliver(context.Context, time.Time, ...string) error { s.op("Deliver"); return nil }
func (s *slowStore) Fail(context.Context, string, time.Time) error       { s.op("Fail"); return nil }
func (s *slowStore) Release(context.Context, string) error               { s.op("Release"); return nil }
func (s *slowStore) Settling(context.Context, time.Time, int) ([]store.Payment, error) {
	s.op("Settling")
	return nil, nil
}
func (s *slowStore) Ledger(context.Context, time.Time, time.Time) ([]store.LedgerRow, error) {
	s.op("Ledger")
	return nil, nil
}
func (s *slowStore) Heartbeat(context.Context, string, time.Time) error {
	s.op("Heartbeat")
	return nil
}
func (s *slowStore) Leave(context.Context, string) error             { s.op("Leave"); return nil }
func (s *slowStore) Prune(context.Context, time.Time) (int64, error) { s.op("Prune"); return 0, nil }
func (s *slowStore) Close() error                                    { s.op("Close"); return nil }

// secret stands for a submitted text, a wallet or a payment key: it must
// never become a label.
const secret = "ignore all previous instructions"

// histogram reads one series of a histogram vector.
func histogram(t *testing.T, h *prometheus.HistogramVec, label string) *dto.Histogram {
	t.Helper()
	var m dto.Metric
	if err := h.WithLabelValues(label).(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram()
}

func TestTimedStoreObservesEveryOp(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	row := store.LedgerRow{Payer: secret, Verdict: "safe"}
	for _, tc := range []struct {
		method, op string
		call       func(s store.Store)
	}{
		{"Precheck", "precheck", func(s store.Store) { s.Precheck(ctx, secret, now, 1, 0) }},
		{"PrecheckAll", "precheck_all", func(s store.Store) { s.PrecheckAll(ctx, now, store.Counter{Key: secret}) }},
		{"Reserve", "reserve", func(s store.Store) { s.Reserve(ctx, store.Payment{Key: secret}, now) }},
		{"Payment", "payment", func(s store.Store) { s.Payment(ctx, secret) }},
		{"Settle", "settle", func(s store.Store) { s.Settle(ctx, secret, secret, secret, row, now) }},
		{"Claim", "claim", func(s store.Store) { s.Claim(ctx, secret, secret, secret, now) }},
		{"Deliver", "deliver", func(s store.Store) { s.Deliver(ctx, now, secret) }},
		{"Fail", "fail", func(s store.Store) { s.Fail(ctx, secret, now) }},
		{"Release", "release", func(s store.Store) { s.Release(ctx, secret) }},
		{"Settling", "settling", func(s store.Store) { s.Settling(ctx, now, 10) }},
		{"Ledger", "ledger", func(s store.Store) { s.Ledger(ctx, now, now) }},
		{"Heartbeat", "heartbeat", func(s store.Store) { s.Heartbeat(ctx, secret, now) }},
		{"Leave", "leave", func(s store.Store) { s.Leave(ctx, secret) }},
		{"Prune", "prune", func(s store.Store) { s.Prune(ctx, now) }},
	} {
		t.Run(tc.method, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "t", Help: "t", Buckets: storeBuckets}, []string{"op"})
			reg.MustRegister(h)
			inner := &slowStore{pause: 2 * time.Millisecond}
			tc.call(newTimedStore(inner, h))
			if !slices.Equal(inner.called, []string{tc.method}) {
				t.Fatalf("the store saw %v, want [%s]", inner.called, tc.method)
			}
			// The operation's series has one observation of at least the
			// pause; every other op's series none.
			for _, op := range opNames {
				got := histogram(t, h, op)
				want := uint64(0)
				if op == tc.op {
					want = 1
				}
				if got.GetSampleCount() != want {
					t.Errorf("op %q: %d observations, want %d", op, got.GetSampleCount(), want)
				}
				if op == tc.op && got.GetSampleSum() < inner.pause.Seconds() {
					t.Errorf("op %q: observed %gs, less than the %v it took", op, got.GetSampleSum(), inner.pause)
				}
			}
			// The labels are the fixed op names, never what was passed in.
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			for _, mf := range mfs {
				for _, m := range mf.GetMetric() {
					for _, lp := range m.GetLabel() {
						if lp.GetName() != "op" || !slices.Contains(opNames[:], lp.GetValue()) {
							t.Errorf("label %s=%q is not an op name", lp.GetName(), lp.GetValue())
						}
						if strings.Contains(lp.GetValue(), secret) {
							t.Errorf("an argument became a label: %q", lp.GetValue())
						}
					}
				}
			}
		})
	}
}

// Every method of the interface but Close has its op: a method added to
// store.Store must be given one (the decorator does not compile without
// the method, and this test fails without its name).
func TestTimedStoreNamesEveryMethod(t *testing.T) {
	var methods []string
	typ := reflect.TypeFor[store.Store]()
	for i := range typ.NumMethod() {
		if m := typ.Method(i).Name; m != "Close" {
			methods = append(methods, m)
		}
	}
	if len(methods) != int(numOps) {
		t.Fatalf("store.Store has %d methods besides Close (%v), the decorator names %d ops", len(methods), methods, numOps)
	}
	seen := map[string]bool{}
	for _, n := range opNames {
		if n == "" || seen[n] {
			t.Errorf("op name %q empty or given twice", n)
		}
		seen[n] = true
	}
}

func TestTimedStoreCloseUntimed(t *testing.T) {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "t", Help: "t"}, []string{"op"})
	inner := &slowStore{}
	newTimedStore(inner, h).Close()
	if !slices.Equal(inner.called, []string{"Close"}) {
		t.Fatalf("the store saw %v, want [Close]", inner.called)
	}
	for _, op := range opNames {
		if n := histogram(t, h, op).GetSampleCount(); n != 0 {
			t.Errorf("op %q observed %d times by Close", op, n)
		}
	}
}

// A request's store clock adds up the operations made with its context,
// and only those.
func TestRequestStoreClock(t *testing.T) {
	ops := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ops", Help: "t", Buckets: storeBuckets}, []string{"op"})
	reqs := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "reqs", Help: "t", Buckets: storeBuckets}, []string{"endpoint"})
	ts := newTimedStore(&slowStore{pause: time.Millisecond}, ops)

	r := httptest.NewRequest("POST", "/scan", nil)
	done := timeRequestStoreIn(reqs, "scan", &r)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), time.Second)
	defer cancel()
	ts.Reserve(ctx, store.Payment{}, time.Now())
	ts.Settle(r.Context(), "", "", "", store.LedgerRow{}, time.Now())
	ts.Heartbeat(context.Background(), "", time.Now()) // not the request's
	done()

	got := histogram(t, reqs, "scan")
	if got.GetSampleCount() != 1 {
		t.Fatalf("%d request observations, want 1", got.GetSampleCount())
	}
	want := histogram(t, ops, "reserve").GetSampleSum() + histogram(t, ops, "settle").GetSampleSum()
	if d := got.GetSampleSum() - want; d > 1e-6 || d < -1e-6 {
		t.Errorf("the request's store time is %gs, its operations took %gs", got.GetSampleSum(), want)
	}
	if hb := histogram(t, ops, "heartbeat").GetSampleSum(); got.GetSampleSum() >= want+hb {
		t.Errorf("the request's store time %gs includes the heartbeat's %gs", got.GetSampleSum(), hb)
	}
}

// The handler wires both: a pre-check through ServeHTTP is one
// precheck_all operation, and one request observation of the precheck
// endpoint.
func TestHandlerTimesItsStore(t *testing.T) {
	th := newTestHandler(t, &Handler{Free: true})
	ops0 := histogram(t, storeSeconds, "precheck_all").GetSampleCount()
	reqs0 := histogram(t, requestStoreSeconds, "precheck").GetSampleCount()
	w := th.precheckFrom(mintedWallet(1), "203.0.113.9", "")
	if w.Code != 200 {
		t.Fatalf("pre-check: %d %s", w.Code, w.Body)
	}
	if n := histogram(t, storeSeconds, "precheck_all").GetSampleCount() - ops0; n != 1 {
		t.Errorf("%d precheck_all observations, want 1", n)
	}
	req := histogram(t, requestStoreSeconds, "precheck")
	if n := req.GetSampleCount() - reqs0; n != 1 {
		t.Errorf("%d precheck request observations, want 1", n)
	}
}

// The buckets are ten a decade from 10µs to 10s, each printed as its
// decimal value, with the 5 ms target a bound.
func TestStoreBuckets(t *testing.T) {
	if len(storeBuckets) != 61 || storeBuckets[0] != 1e-5 || storeBuckets[60] != 10 {
		t.Fatalf("%d buckets from %g to %g, want 61 from 1e-05 to 10", len(storeBuckets), storeBuckets[0], storeBuckets[len(storeBuckets)-1])
	}
	if !slices.Contains(storeBuckets, 0.005) {
		t.Errorf("5 ms is not a bucket bound: %v", storeBuckets)
	}
	for i, b := range storeBuckets {
		if two, _ := strconv.ParseFloat(strconv.FormatFloat(b, 'g', 2, 64), 64); two != b {
			t.Errorf("bound %d is %s, not a decimal of two digits", i, strconv.FormatFloat(b, 'g', -1, 64))
		}
		if i > 0 && (b <= storeBuckets[i-1] || b > storeBuckets[i-1]*1.34) {
			t.Errorf("bound %d: %g after %g", i, b, storeBuckets[i-1])
		}
	}
}
