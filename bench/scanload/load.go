package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/promptwall/promptwall/bench/proccpu"
	"github.com/promptwall/promptwall/x402"
)

// kinds of request a round sends.
const (
	kindPaid     = "paid"
	kindPrecheck = "precheck"
)

// target is one server under load.
type target struct {
	name, base string // base: http://host:port, no path
	admin      string // its admin API (http://host:port), for /metrics; "" if none
	client     *http.Client
}

// group is what a round loads: one server, or several sharing one store,
// with the clients spread over them round robin. Its servers make one
// offer (one pay_to, one facilitator), so a payment is good on any of them.
type group struct {
	name    string
	servers []*target
	pids    []int // the servers' processes, charged with the round's CPU time
	shared  []int // processes the servers share (a database), charged too
	pay     *payments
}

// round is what one round of one kind against one group measured.
type round struct {
	rate      float64 // answered requests per second
	p50, p99  time.Duration
	n         int
	cpu       time.Duration // of the group's processes, shared ones included; 0 if unknown
	sharedCPU time.Duration // of its shared processes
	cpuPerReq time.Duration
	store     *storeTimes // the store's own timing, from the servers' metrics; nil without admin
}

// call is one prepared request: everything that costs the client CPU (the
// signed payment, the wallet, the body) is made before the clock starts.
type call struct {
	body    []byte
	payment string // PAYMENT-SIGNATURE, for a paid scan
	text    int    // index into loader.texts
}

// loader runs rounds and checks every answer.
type loader struct {
	texts []text
	conc  int
	// pace is the rate (requests a second) at which a round of a kind
	// sends its calls, however fast the servers answer; 0 or absent: each
	// client sends its next call when its last is answered.
	pace map[string]float64
	seq  atomic.Uint64 // numbers wallets, memos and texts across the run
	// nonce keeps this run's wallets and payments apart from an earlier
	// run's against the same store, which would refuse them as used.
	nonce int64

	mu       sync.Mutex
	verdicts map[int]string // text index -> the verdict every answer gave it
	paidOK   int64          // paid scans answered 200 with their result
}

func newTarget(name, base string, conc int) *target {
	tr := &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc, DisableCompression: true}
	return &target{name: name, base: base, client: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
}

// fetchOffer asks each server of g for its 402 offer once: every paid scan
// of the run pays it, on whichever server, so all must make the same.
func (l *loader) fetchOffer(g *group) error {
	for _, t := range g.servers {
		offer, err := l.offerOf(t)
		if err != nil {
			return err
		}
		if g.pay == nil {
			if g.pay, err = newPayments(offer); err != nil {
				return fmt.Errorf("%s: %v", t.name, err)
			}
			continue
		}
		a, _ := json.Marshal(offer.Accepts)
		b, _ := json.Marshal(g.pay.offer.Accepts)
		if !bytes.Equal(a, b) {
			return fmt.Errorf("%s: %s offers %s, but %s offers %s", g.name, t.name, a, g.servers[0].name, b)
		}
	}
	return nil
}

func (l *loader) offerOf(t *target) (*x402.PaymentRequired, error) {
	req, _ := http.NewRequest(http.MethodPost, t.base+"/scan", bytes.NewReader(scanBody(l.texts[0])))
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: fetching the offer: %v", t.name, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPaymentRequired {
		return nil, fmt.Errorf("%s: an unpaid scan got %s, want 402", t.name, resp.Status)
	}
	offer, err := x402.DecodePaymentRequired(resp.Header.Get(x402.HeaderPaymentRequired))
	if err != nil {
		return nil, fmt.Errorf("%s: the 402's offer: %v", t.name, err)
	}
	return offer, nil
}

// prepare makes n calls of kind for g: each paid scan by a wallet of its
// own with a payment of its own, each pre-check from a wallet of its own
// (so the per-wallet interval never refuses one).
func (l *loader) prepare(g *group, kind string, n int) ([]call, error) {
	calls := make([]call, n)
	for i := range calls {
		seq := l.seq.Add(1)
		ti := int(seq % uint64(len(l.texts)))
		c := call{text: ti}
		switch kind {
		case kindPaid:
			w := newWallet(fmt.Sprintf("scanload payer %d/%d", l.nonce, seq))
			h, err := g.pay.header(w, fmt.Sprintf("scanload %d/%d", l.nonce, seq))
			if err != nil {
				return nil, err
			}
			c.body, c.payment = scanBody(l.texts[ti]), h
		case kindPrecheck:
			sum := sha256.Sum256(fmt.Appendf(nil, "scanload caller %d/%d", l.nonce, seq))
			c.body = precheckBody(l.texts[ti], x402.Base58Encode(sum[:]))
		}
		calls[i] = c
	}
	return calls, nil
}

// run sends calls to g from l.conc clients, back to back, client i to
// server i mod the servers, and checks every answer; the first wrong one
// stops the round with its error.
func (l *loader) run(g *group, kind string, calls []call) (round, error) {
	path := "/scan"
	if kind == kindPrecheck {
		path = "/precheck"
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		next     atomic.Int64
		errOnce  sync.Once
		firstErr error
		lat      = make([][]time.Duration, l.conc)
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel() })
	}
	before, err := scrapeStore(g)
	if err != nil {
		return round{}, err
	}
	cpu0, shared0 := groupCPU(g)
	start := time.Now()
	for w := range l.conc {
		t := g.servers[w%len(g.servers)]
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(calls) {
					return
				}
				c := calls[i]
				t0 := time.Now()
				if rate := l.pace[kind]; rate > 0 {
					// A call is due at its place in the schedule, and its
					// latency counts from then: a call sent late because
					// every client was waiting has waited too.
					due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
					time.Sleep(time.Until(due))
					t0 = due
				}
				if err := l.send(ctx, t, kind, path, c); err != nil {
					if ctx.Err() == nil || !errors.Is(err, context.Canceled) {
						fail(fmt.Errorf("%s %s request %d (text %d, %s): %w", t.name, kind, i, c.text, l.texts[c.text].label, err))
					}
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, shared1 := groupCPU(g)
	if firstErr != nil {
		return round{}, firstErr
	}
	after, err := scrapeStore(g)
	if err != nil {
		return round{}, err
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	r := round{n: len(all), rate: float64(len(all)) / elapsed.Seconds()}
	if len(all) > 0 {
		r.p50 = all[len(all)/2]
		r.p99 = all[min(len(all)-1, len(all)*99/100)]
	}
	if cpu0 >= 0 && cpu1 >= 0 && r.n > 0 {
		r.cpu, r.sharedCPU = cpu1-cpu0, shared1-shared0
		r.cpuPerReq = r.cpu / time.Duration(r.n)
	}
	if before != nil {
		r.store = after.minus(before)
	}
	return r, nil
}

// groupCPU is the CPU time of g's processes and their children, and of
// its shared ones (included in the first), or -1 if one cannot be read
// (or g names none).
func groupCPU(g *group) (all, shared time.Duration) {
	if len(g.pids) == 0 {
		return -1, -1
	}
	for i, p := range slices.Concat(g.shared, g.pids) {
		c := proccpu.Tree(p)
		if c < 0 {
			return -1, -1
		}
		all += c
		if i < len(g.shared) {
			shared += c
		}
	}
	return all, shared
}

// send posts one call and checks its answer: a 200 with a verdict, and for
// a paid scan the PAYMENT-RESPONSE of a settled payment.
func (l *loader) send(ctx context.Context, t *target, kind, path string, c call) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+path, bytes.NewReader(c.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.payment != "" {
		req.Header.Set(x402.HeaderPaymentSignature, c.payment)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, clip(b))
	}
	var res struct {
		Verdict string `json:"verdict"`
		RulesID string `json:"rules_id"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("200 with a body that is not JSON: %v: %s", err, clip(b))
	}
	switch res.Verdict {
	case "safe", "suspicious", "malicious":
	default:
		return fmt.Errorf("200 without a verdict: %s", clip(b))
	}
	if res.RulesID == "" {
		return fmt.Errorf("200 without a rules_id: %s", clip(b))
	}
	if kind == kindPaid {
		sr, err := x402.DecodePaymentResponse(resp.Header.Get(x402.HeaderPaymentResponse))
		if err != nil {
			return fmt.Errorf("200 with no usable PAYMENT-RESPONSE: %v", err)
		}
		if !sr.Success || sr.Transaction == "" {
			return fmt.Errorf("200 with a PAYMENT-RESPONSE of no settlement: %+v", sr)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if kind == kindPaid {
		l.paidOK++
	}
	if v, ok := l.verdicts[c.text]; ok && v != res.Verdict {
		return fmt.Errorf("verdict %q, but %q for the same text before", res.Verdict, v)
	}
	l.verdicts[c.text] = res.Verdict
	return nil
}

// clip shortens an answer for an error message.
func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}
