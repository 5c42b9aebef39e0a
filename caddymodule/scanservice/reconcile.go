package scanservice

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/x402"
)

// Reconciliation: a payment left settling (the server stopped while the
// facilitator settled it, or the ledger could not be written) is finished
// here, in the background, or when the client retries with it.
const (
	// reconcileEvery is how often payments left in flight are looked at.
	reconcileEvery = 10 * time.Second
	// staleMargin is added to the settle timeout before a settling
	// payment counts as left behind: until then its own request, here or
	// on another server, may still be waiting for the facilitator.
	staleMargin = 15 * time.Second
	// unresolvedAfter is how long a payment whose fate cannot be learnt
	// stays settling before it is marked failed and left to the operator.
	unresolvedAfter = 15 * time.Minute
)

// fate is what became of a payment whose settlement was in flight.
type fate int

const (
	fateUnknown fate = iota // not known yet: try again later
	fateLanded              // it landed: record it
	fateNever               // it did not land and never can: released
	fateFailed              // settlement failed after it may have been sent: marked failed
)

// resolve finds out what became of a settling payment. asked is true when
// its client retried with it: the client still wants the scan, so a payment
// that was never sent may be sent now.
//
// With a chain RPC the chain answers (chain.go's FindPayment): landed,
// never landed (released), or not yet known. Without one, or when the
// chain does not know yet and the client asked, the facilitator is asked
// to settle it again: the same signed transaction, which the chain runs at
// most once, so a payment that landed is not charged twice and one that was
// never sent is sent now. A facilitator that cannot tell leaves it unknown,
// and after unresolvedAfter the payment is marked failed with an error log
// naming payer and key, for the operator to check on chain.
func (h *Handler) resolve(ctx context.Context, p store.Payment, asked bool) (fate, *x402.SettleResponse) {
	if sr, ok := h.store.unrecorded.get(p.Key); ok {
		return fateLanded, sr
	}
	payload, err := x402.DecodePaymentHeader(p.Header)
	var accepted x402.Requirements
	if err == nil {
		err = json.Unmarshal([]byte(p.Accepted), &accepted)
	}
	if err != nil {
		// Unreadable: nothing can be settled with it.
		h.logger.Error("a payment in flight cannot be read back", zap.String("payment_key", p.Key), zap.Error(err))
		return h.failed(ctx, p)
	}
	if h.chain != nil {
		switch f, sr := h.onChain(ctx, p, payload); f {
		case fateLanded, fateNever, fateFailed:
			return f, sr
		}
		if !asked {
			return fateUnknown, nil
		}
	}
	sr, err := h.fac.Settle(ctx, payload, accepted)
	switch {
	case err != nil:
		return fateUnknown, nil
	case sr.Success:
		return fateLanded, sr
	case h.chain != nil || sr.ErrorReason == reasonSettlementPending || sr.ErrorReason == x402.ReasonDuplicateSettlement:
		// In flight at the facilitator, or settled by it a moment ago;
		// with a chain RPC, the chain will tell.
		return fateUnknown, nil
	}
	if h.now().Sub(p.Since) < unresolvedAfter {
		return fateUnknown, nil
	}
	h.logger.Error("could not learn whether a payment landed; check the chain and make good if it did",
		zap.String("payer", p.Row.Payer), zap.String("payment_key", p.Key),
		zap.Time("since", p.Since), zap.String("reason", sr.ErrorReason))
	return h.failed(ctx, p)
}

// onChain asks the chain about a payment.
func (h *Handler) onChain(ctx context.Context, p store.Payment, payload *x402.PaymentPayload) (fate, *x402.SettleResponse) {
	tx, source, err := x402.PaymentTransaction(payload)
	if err != nil {
		return fateUnknown, nil
	}
	f, err := h.chain.FindPayment(ctx, tx, source, p.Since)
	if err != nil {
		if ce := h.logger.Check(zapcore.DebugLevel, "asking the chain about a payment in flight"); ce != nil {
			ce.Write(zap.String("payment_key", p.Key), zap.Error(err))
		}
		return fateUnknown, nil
	}
	switch f.State {
	case x402.PaymentLanded:
		if !f.Succeeded {
			// It ran and failed: no tokens moved, and it cannot run again.
			return h.failed(ctx, p)
		}
		return fateLanded, &x402.SettleResponse{Success: true, Transaction: f.Signature,
			Network: h.network.CAIP2, Payer: p.Row.Payer}
	case x402.PaymentNeverLanded:
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
		defer cancel()
		if err := h.store.Release(ctx, p.Key); err != nil {
			return fateUnknown, nil
		}
		return fateNever, nil
	}
	return fateUnknown, nil
}

func (h *Handler) failed(ctx context.Context, p store.Payment) (fate, *x402.SettleResponse) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := h.store.Fail(ctx, p.Key, h.now()); err != nil {
		return fateUnknown, nil
	}
	return fateFailed, nil
}

// reconcile finishes payments left settling, every reconcileEvery, until
// the config is unloaded.
func (h *Handler) reconcile(ctx context.Context) {
	every := h.reconcileEvery
	if every <= 0 {
		every = reconcileEvery
	}
	repeat(ctx, every, func() { h.reconcileOnce(ctx) })
}

// reconcileOnce looks once at each payment settling that no live request
// is handling.
func (h *Handler) reconcileOnce(ctx context.Context) {
	lctx, cancel := context.WithTimeout(ctx, storeTimeout)
	ps, err := h.store.Settling(lctx, h.now(), 100)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			h.logger.Error("reading payments in flight", zap.Error(err))
		}
		return
	}
	for _, p := range ps {
		if ctx.Err() != nil {
			return
		}
		// A payment of another live server is that server's to finish:
		// only it knows whether it sent it (see unreserved), and its own
		// reconciliation takes it up once its request is over. A payment
		// of this server is its request's until the request's deadline;
		// one of a dead server is left behind at once. One this server
		// never sent, whose client was told its reservation failed, is
		// let go; one it knows landed is recorded without waiting.
		if h.store.busy(p) {
			continue
		}
		unsent := h.store.unreserved.has(p.Key, h.now())
		_, landed := h.store.unrecorded.get(p.Key)
		if !unsent && !landed && p.Owner == h.store.id && h.now().Sub(p.Since) < h.stale() {
			continue
		}
		if !h.store.inflight.claim(p.Key) {
			continue // its request is still here
		}
		if released, err := h.releaseUnsent(ctx, p); released || err != nil {
			if err != nil && ctx.Err() == nil {
				h.logger.Error("releasing a payment whose reservation had failed", zap.String("payment_key", p.Key), zap.Error(err))
			}
			h.store.inflight.drop(p.Key)
			continue
		}
		switch fate, sr := h.resolve(ctx, p, false); fate {
		case fateLanded:
			row := p.Row
			row.Payer = nonEmpty(sr.Payer, row.Payer)
			row.Time = h.now()
			// Recorded with no owner: whichever server the client's
			// retry reaches gives the scan.
			if _, err := h.record(ctx, p.Key, "", sr.Transaction, row); err != nil {
				h.store.unrecorded.put(p.Key, sr)
			} else {
				h.logger.Info("reconciled a payment left in flight: settled and recorded; a retry with it gets its scan",
					zap.String("payer", row.Payer), zap.String("transaction", sr.Transaction))
			}
		}
		h.store.inflight.drop(p.Key)
	}
}

// stale is the longest a payment's own request can keep it settling.
func (h *Handler) stale() time.Duration { return h.settleTimeout() + staleMargin }

// settleTimeout is the facilitator's settle bound, as the client uses it.
func (h *Handler) settleTimeout() time.Duration {
	if h.fac != nil && h.fac.SettleTimeout > 0 {
		return h.fac.SettleTimeout
	}
	return x402.DefaultSettleTimeout
}

// inflight is the set of payment keys a request or the reconciliation of
// this process is handling.
type inflight struct {
	mu   sync.Mutex
	keys map[string]struct{}
}

// claim takes key, and reports false when it is taken already.
func (f *inflight) claim(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.keys[key]; ok {
		return false
	}
	if f.keys == nil {
		f.keys = map[string]struct{}{}
	}
	f.keys[key] = struct{}{}
	return true
}

func (f *inflight) drop(key string) {
	f.mu.Lock()
	delete(f.keys, key)
	f.mu.Unlock()
}

// unrecorded remembers settlements that landed while the ledger could not
// be written, so reconciliation records them without asking anyone.
type unrecorded struct {
	mu sync.Mutex
	m  map[string]*x402.SettleResponse
}

func (u *unrecorded) put(key string, sr *x402.SettleResponse) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = map[string]*x402.SettleResponse{}
	}
	u.m[key] = sr
}

func (u *unrecorded) get(key string) (*x402.SettleResponse, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	sr, ok := u.m[key]
	return sr, ok
}

func (u *unrecorded) drop(key string) {
	u.mu.Lock()
	delete(u.m, key)
	u.mu.Unlock()
}
