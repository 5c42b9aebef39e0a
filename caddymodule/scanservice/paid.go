package scanservice

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/x402"
)

// answer is the outcome of one paid scan, for a transport (POST /scan, the
// MCP tool) to render. Result is set only with status 200, and only once
// the payment has landed and its ledger row is written.
type answer struct {
	status     int                  // 200, 400, 402, 409, 500 or 503
	result     *engine.Result       // with 200
	key        string               // with 200: the payment, for sent
	settle     *x402.SettleResponse // for PAYMENT-RESPONSE, when there is one
	reason     string               // with 402: the offer's error
	code       string               // with the other errors
	message    string
	retryAfter int // seconds, with 409 and 503
}

// paidScan is the money path of a scan of text paid with the x402 payment
// in header (base64 JSON, as PAYMENT-SIGNATURE carries it), shared by every
// transport. The payment goes through states the store keeps (store.Payment):
// a crash at any step leaves it where reconciliation (reconcile.go) or a
// retry with the same payment finishes it, so a payment that lands gets
// exactly one ledger row and its scan is given once.
//
// ctx must not be one the client can cancel: once a payment is on its way,
// hanging up must not leave it half-handled.
func (h *Handler) paidScan(ctx context.Context, offer x402.PaymentRequired, header, text string) answer {
	payload, err := x402.DecodePaymentHeader(header)
	if err != nil {
		h.metrics.payment(outcomeMalformed)
		return answer{status: http.StatusBadRequest, code: codeInvalidPayment,
			message: "the PAYMENT-SIGNATURE header is not an x402 payment: " + err.Error()}
	}
	accepted, err := x402.Match(payload.Accepted, offer.Accepts)
	if err != nil {
		return h.refused(reasonOf(err))
	}
	checked, err := x402.CheckExactSVM(payload, accepted)
	if err != nil {
		if _, ok := errors.AsType[*x402.Invalid](err); !ok {
			// Not the payment's fault: our own requirements are unusable.
			h.logger.Error("checking a payment against our requirements", zap.Error(err))
			return answer{status: http.StatusInternalServerError, code: "internal", message: "the payment requirements are misconfigured"}
		}
		return h.refused(reasonOf(err))
	}
	ident, err := paymentIdent(payload)
	if err != nil {
		h.metrics.payment(outcomeMalformed)
		return answer{status: http.StatusBadRequest, code: codeInvalidPayment, message: err.Error()}
	}

	// One request per payment at a time in this process: a second one
	// (a client retrying early) is told to wait, not handled twice.
	if !h.store.inflight.claim(checked.Key) {
		return h.inProgress()
	}
	defer h.store.inflight.drop(checked.Key)

	// Scanning is cheap and cannot fail; its result is held back until
	// the payment has landed.
	res := h.scan(text)

	acc, err := json.Marshal(accepted)
	if err != nil {
		return answer{status: http.StatusInternalServerError, code: "internal", message: "the payment requirements are misconfigured"}
	}
	p := store.Payment{Key: checked.Key, Ident: ident, Header: keptHeader(payload, acc), Accepted: string(acc), Owner: h.store.id,
		Row: store.LedgerRow{Payer: checked.Payer, Price: checked.Amount,
			Verdict: string(res.Verdict), CategoryCounts: res.CategoryCounts}}
	// Reserving first is also the lookup: a payment seen before (a
	// retry, a replay, another server's) comes back as it is stored,
	// before the facilitator is asked anything. One that never landed
	// and never can is released by again, and reserved anew.
	for attempt := 0; ; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, storeTimeout)
		got, reserved, err := h.store.Reserve(rctx, p, h.now())
		cancel()
		switch {
		case errors.Is(err, store.ErrIdentInUse):
			return h.identConflict()
		case err != nil:
			h.store.unreserved.put(p.Key, h.now())
			return h.storeDown(err)
		}
		if reserved {
			h.store.unreserved.drop(p.Key)
			break
		}
		if a, done := h.again(ctx, got, ident, &res, text); done {
			return a
		}
		if attempt > 0 {
			return h.inProgress()
		}
	}

	vr, err := h.fac.Verify(ctx, payload, accepted)
	if err != nil {
		// Verify submits nothing: the payment cannot have been taken,
		// so the client may use it again once the facilitator is back.
		h.release(ctx, p.Key)
		return h.facilitatorDown("verifying a payment", err)
	}
	if !vr.IsValid {
		h.release(ctx, p.Key)
		return h.refused(nonEmpty(vr.InvalidReason, "invalid_payment"))
	}
	p.Row.Payer = nonEmpty(vr.Payer, p.Row.Payer)
	return h.settle(ctx, p, payload, accepted, &res, text)
}

// keptHeader is the part of a payment header kept while it settles: what
// settling it again needs (the signed transaction and the requirements it
// was checked against), without the resource and the extensions a client
// echoes, which can be larger than the transaction.
func keptHeader(p *x402.PaymentPayload, accepted []byte) string {
	b, err := json.Marshal(struct {
		X402Version int             `json:"x402Version"`
		Accepted    json.RawMessage `json:"accepted"`
		Payload     any             `json:"payload"`
	}{p.X402Version, accepted, p.Payload})
	if err != nil { // strings and raw JSON already parsed: cannot happen
		return ""
	}
	return base64.StdEncoding.EncodeToString(b)
}

// release frees a reserved payment that definitely was not sent. If that
// fails the key stays used: the safe side, the client pays with a new
// transaction.
func (h *Handler) release(ctx context.Context, key string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := h.store.Release(ctx, key); err != nil {
		h.logger.Error("releasing a payment key", zap.Error(err))
	}
}

// settle has the facilitator settle a reserved payment and finishes it.
func (h *Handler) settle(ctx context.Context, p store.Payment, payload *x402.PaymentPayload,
	accepted x402.Requirements, res *engine.Result, text string) answer {
	sr, err := h.fac.Settle(ctx, payload, accepted)
	if err == nil && !sr.Success && sr.ErrorReason == reasonSettlementPending {
		// Broadcast but not yet seen confirmed. Asking again makes the
		// reference facilitator wait on that same transaction; one that
		// re-sends it sends the identical transaction, which the chain
		// runs at most once.
		sr, err = h.fac.Settle(ctx, payload, accepted)
	}
	if err != nil || (!sr.Success && sr.ErrorReason == reasonSettlementPending) {
		// The transaction may have been sent and may still land: the
		// payment stays settling, so reconciliation or a retry with
		// the same payment finds out, and no result is given for now.
		if err == nil {
			err = errors.New("settlement still pending")
		}
		h.metrics.payment(outcomeUnavailable)
		h.logger.Warn("facilitator unavailable", zap.String("while", "settling a payment"),
			zap.String("payer", p.Row.Payer), zap.String("payment_key", p.Key), zap.Error(err))
		return answer{status: http.StatusServiceUnavailable, code: codeFacilitatorUnavail, retryAfter: 5,
			message: "the payment facilitator did not confirm the settlement; retry with the same payment to get the scan once it has settled (it is never charged twice)"}
	}
	if !sr.Success {
		reason := nonEmpty(sr.ErrorReason, "settlement_failed")
		ctx, cancel := context.WithTimeout(ctx, storeTimeout)
		defer cancel()
		if settleFailedBeforeSending(reason) {
			h.release(ctx, p.Key)
		} else if h.chain == nil {
			if err := h.store.Fail(ctx, p.Key, h.now()); err != nil {
				h.logger.Error("marking a payment failed", zap.String("payment_key", p.Key), zap.Error(err))
			}
		}
		// With a chain RPC the payment stays settling: the transaction
		// may have been sent before the facilitator gave up on it, and
		// reconciliation asks the chain whether it landed after all.
		h.metrics.payment(outcomeFailed)
		h.logRequest("scan", http.StatusPaymentRequired, zap.String("payer", nonEmpty(sr.Payer, p.Row.Payer)),
			zap.String("reason", reason))
		return answer{status: http.StatusPaymentRequired, reason: reason, settle: sr}
	}
	return h.landed(ctx, p, sr, res, text)
}

// landed records a payment that landed and gives its scan. The ledger row
// and the settled state are one store step; when it cannot be written the
// result stays unreleased, and reconciliation writes it once the store is
// back (the settlement is remembered in memory for that).
func (h *Handler) landed(ctx context.Context, p store.Payment, sr *x402.SettleResponse, res *engine.Result, text string) answer {
	row := p.Row
	row.Payer = nonEmpty(sr.Payer, row.Payer)
	row.Time = h.now()
	// This server owns the answer only if it has the scan the row holds
	// (a retry may bring another text): else a retry on any server may
	// claim it.
	same := sameScan(p.Row, res)
	owner := ""
	if same {
		owner = h.store.id
	}
	won, err := h.record(ctx, p.Key, owner, sr.Transaction, row)
	if err != nil {
		h.store.unrecorded.put(p.Key, sr)
		h.metrics.payment(outcomeUnrecorded)
		h.logger.Error("settled payment could not be recorded in the ledger yet",
			zap.String("payer", row.Payer), zap.String("transaction", sr.Transaction),
			zap.String("payment_key", p.Key), zap.Error(err))
		return answer{status: http.StatusInternalServerError, code: codeLedgerUnavailable, settle: sr, retryAfter: 5,
			message: "the payment settled but could not be recorded yet; retry with the same payment to get the scan"}
	}
	if !same {
		return h.scanConflict()
	}
	if !won {
		// Another server, or this one's reconciliation, recorded it
		// first: it is given as the store now has it, by whoever claims
		// it.
		cur, ok, err := h.store.Payment(ctx, p.Key)
		if err != nil {
			return h.storeDown(err)
		}
		if ok && cur.State != store.PaymentSettling { // settling again cannot be: Settle would have won
			if a, done := h.again(ctx, cur, "", res, text); done {
				return a
			}
		}
		return h.inProgress()
	}
	return h.deliver(p, sr, res, text)
}

// giveSettled gives the scan of a settled payment once, across servers: a
// live server that owns it is giving it (409); else the servers a retry
// reaches race to claim it in the store, and only the winner answers.
func (h *Handler) giveSettled(ctx context.Context, p store.Payment, res *engine.Result, text string) answer {
	if h.store.busy(p) {
		return h.inProgress()
	}
	if !sameScan(p.Row, res) {
		return h.scanConflict()
	}
	if p.Owner != h.store.id { // this server's own is this request's: it holds the claim in process
		cctx, cancel := context.WithTimeout(ctx, storeTimeout)
		won, err := h.store.Claim(cctx, p.Key, p.Owner, h.store.id, h.now())
		cancel()
		if err != nil {
			return h.storeDown(err)
		}
		if !won {
			return h.inProgress()
		}
	}
	return h.deliver(p, h.settleResponse(p), res, text)
}

// deliver gives the scan of a settled payment. The transport calls sent
// once the answer is out.
func (h *Handler) deliver(p store.Payment, sr *x402.SettleResponse, res *engine.Result, text string) answer {
	h.store.deliveries.hold(p.Key)
	if p.Ident != "" {
		h.store.replays.put(p.Key, text, h.now())
	}
	h.metrics.payment(outcomeSettled)
	h.logRequest("scan", http.StatusOK, zap.String("payer", nonEmpty(sr.Payer, p.Row.Payer)),
		zap.String("transaction", sr.Transaction), zap.String("verdict", string(res.Verdict)),
		zap.Any("category_counts", res.CategoryCounts))
	return answer{status: http.StatusOK, result: res, settle: sr, key: p.Key}
}

// sent tells whether a's scan reached the client's connection: then the
// payment is marked delivered; if not, a retry with it gets the scan, on
// any server.
func (h *Handler) sent(a answer, ok bool) {
	if a.key == "" {
		return
	}
	if ok {
		h.store.deliveries.sent(a.key)
		return
	}
	h.store.deliveries.unsent(a.key)
	h.disown(a.key)
}

// disown gives up this server's claim on a settled payment whose answer
// did not go out, so that other servers need not wait for this one.
func (h *Handler) disown(key string) {
	if !h.store.inflight.claim(key) {
		return // a retry here has it now, and gives it itself
	}
	defer h.store.inflight.drop(key)
	if h.store.deliveries.has(key) {
		return // a retry here gave it meanwhile
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if _, err := h.store.Claim(ctx, key, h.store.id, "", h.now()); err != nil {
		h.logger.Error("giving up a paid scan that was not delivered: until this server stops, only it can give it",
			zap.String("payment_key", key), zap.Error(err))
	}
}

// again handles a payment the store already knows. It reports false when
// the payment was released (it never landed and never can) and the request
// should go on as a new payment.
func (h *Handler) again(ctx context.Context, p store.Payment, ident string, res *engine.Result, text string) (answer, bool) {
	if ident != "" && p.Ident != "" && ident != p.Ident {
		return h.identConflict(), true
	}
	switch p.State {
	case store.PaymentSettling:
		if released, err := h.releaseUnsent(ctx, p); err != nil {
			return h.storeDown(err), true
		} else if released {
			return answer{}, false
		}
		// Not in flight in this process (this request holds the claim).
		// Another server that is alive may be settling it: wait for it,
		// up to the longest its request can take. Else a crash left it:
		// find out now.
		if h.store.busy(p) && h.now().Sub(p.Since) < h.stale() {
			return h.inProgress(), true
		}
		switch fate, sr := h.resolve(ctx, p, true); fate {
		case fateLanded:
			return h.landed(ctx, p, sr, res, text), true
		case fateNever:
			return answer{}, false
		case fateFailed:
			return h.duplicate(p), true
		default:
			h.metrics.payment(outcomeUnavailable)
			return answer{status: http.StatusServiceUnavailable, code: codeFacilitatorUnavail, retryAfter: 5,
				message: "this payment's settlement is still being confirmed; retry with the same payment shortly"}, true
		}
	case store.PaymentSettled:
		if h.store.deliveries.has(p.Key) {
			return h.resent(p, ident, res, text), true
		}
		// Landed and recorded, but its scan has not reached the client:
		// its owner is giving it, or a crash or a hang-up came between.
		return h.giveSettled(ctx, p, res, text), true
	case store.PaymentDelivered:
		return h.resent(p, ident, res, text), true
	default: // failed
		return h.duplicate(p), true
	}
}

// resent answers a payment whose scan was given: the same scan again when
// the client named it by its payment-identifier and sent the same text
// (replays.go), else 402 as a used payment.
func (h *Handler) resent(p store.Payment, ident string, res *engine.Result, text string) answer {
	if p.Ident == "" || ident != p.Ident || !h.store.replays.match(p.Key, text, h.now()) {
		return h.duplicate(p)
	}
	sr := h.settleResponse(p)
	h.logRequest("scan", http.StatusOK, zap.String("payer", p.Row.Payer), zap.String("transaction", sr.Transaction),
		zap.Bool("resent", true))
	return answer{status: http.StatusOK, result: res, settle: sr}
}

// sameScan reports whether a retry scanned a text with the result the
// payment's ledger row holds: the row must stay true of what was given.
func sameScan(row store.LedgerRow, res *engine.Result) bool {
	if row.Verdict != string(res.Verdict) {
		return false
	}
	if len(row.CategoryCounts) == 0 && len(res.CategoryCounts) == 0 {
		return true
	}
	return maps.Equal(row.CategoryCounts, res.CategoryCounts)
}

// settleResponse is the PAYMENT-RESPONSE of a payment settled earlier.
func (h *Handler) settleResponse(p store.Payment) *x402.SettleResponse {
	return &x402.SettleResponse{Success: true, Transaction: p.Transaction, Network: h.network.CAIP2, Payer: p.Row.Payer}
}

// record writes the ledger row of a landed payment, retrying briefly: the
// payment has already settled, so a passing lock or I/O hiccup should not
// cost the answer. The request's own context is not used: a client that
// hangs up after paying must still get its row.
func (h *Handler) record(ctx context.Context, key, owner, transaction string, row store.LedgerRow) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ledgerWriteTimeout)
	defer cancel()
	var err error
	for attempt := range 3 {
		var won bool
		if won, err = h.store.Settle(ctx, key, owner, transaction, row, h.now()); err == nil {
			h.store.unrecorded.drop(key)
			return won, nil
		}
		select {
		case <-ctx.Done():
			return false, err
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		}
	}
	return false, err
}

func (h *Handler) refused(reason string) answer {
	h.metrics.payment(outcomeInvalid)
	h.logRequest("scan", http.StatusPaymentRequired, zap.String("reason", reason))
	return answer{status: http.StatusPaymentRequired, reason: reason}
}

func (h *Handler) duplicate(p store.Payment) answer {
	h.metrics.payment(outcomeDuplicate)
	h.logRequest("scan", http.StatusPaymentRequired, zap.String("payer", p.Row.Payer), zap.String("reason", x402.ReasonDuplicateSettlement))
	return answer{status: http.StatusPaymentRequired, reason: x402.ReasonDuplicateSettlement}
}

func (h *Handler) inProgress() answer {
	return answer{status: http.StatusConflict, code: codePaymentInProgress, retryAfter: 2,
		message: "a request with this payment is being handled; retry with the same payment shortly"}
}

func (h *Handler) identConflict() answer {
	return answer{status: http.StatusConflict, code: codePaymentConflict,
		message: "this payment identifier belongs to another payment"}
}

func (h *Handler) scanConflict() answer {
	return answer{status: http.StatusConflict, code: codePaymentConflict,
		message: "this payment paid for the scan of another text; send that text with it, or pay for this one"}
}

// facilitatorDown answers 503 when the facilitator cannot be asked before
// anything was sent: nothing is taken, and the client may try again.
func (h *Handler) facilitatorDown(what string, err error) answer {
	h.metrics.payment(outcomeUnavailable)
	h.logger.Warn("facilitator unavailable", zap.String("while", what), zap.Error(err))
	return answer{status: http.StatusServiceUnavailable, code: codeFacilitatorUnavail, retryAfter: 5,
		message: "the payment facilitator is unavailable; no payment was taken, try again shortly"}
}

func (h *Handler) storeDown(err error) answer {
	h.metrics.payment(outcomeUnavailable)
	h.logger.Error("payment store unavailable", zap.Error(err))
	return answer{status: http.StatusServiceUnavailable, code: codeStoreUnavailable, retryAfter: 5,
		message: "the payment store is unavailable; retry with the same payment shortly: it is charged at most once, and the retry gets its scan"}
}
