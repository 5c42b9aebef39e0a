package scanservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/x402"
)

// ledgerWriteTimeout bounds writing the ledger row after settlement. The
// request's own context is not used: a client that hangs up after paying
// must still get its row.
const ledgerWriteTimeout = 10 * time.Second

// storeTimeout bounds each request's wait for a store operation before
// money moves (a pre-check, reserving a payment key, releasing it), on its
// own: while another process holds the database, each request gives up at
// its own deadline, not after the requests queued before it.
const storeTimeout = 10 * time.Second

// serveScan answers POST /scan: the full result, free or against an x402
// payment. The order is what keeps the promises: the body is checked
// before any payment is asked for or taken; a payment key is reserved
// before settling, so a payment is used once; the result is released only
// after settlement succeeded and its ledger row is on disk.
func (h *Handler) serveScan(w http.ResponseWriter, r *http.Request) {
	if !allowPost(w, r) {
		return
	}
	// Browsers may read the payment headers of any answer of this endpoint.
	w.Header().Set("Access-Control-Expose-Headers", x402.HeaderPaymentRequired+", "+x402.HeaderPaymentResponse)
	req, ok := readRequest(w, r, false)
	if !ok {
		return
	}
	if h.Free {
		res := h.scan(req.Text)
		writeJSON(w, http.StatusOK, scanResponse{RulesID: h.rulesID(), Result: res})
		h.logRequest("scan", http.StatusOK, zap.Bool("free", true), zap.String("verdict", string(res.Verdict)),
			zap.Any("category_counts", res.CategoryCounts))
		return
	}

	// Facilitator calls run on a context the client cannot cancel: once a
	// payment is on its way, hanging up must not leave it half-handled.
	ctx := context.WithoutCancel(r.Context())
	offer, err := h.offer(ctx, r)
	if err != nil {
		h.unavailable(w, "building the payment requirements", err)
		return
	}

	sig := r.Header.Get(x402.HeaderPaymentSignature)
	if sig == "" {
		h.metrics.payment(outcomeRequired)
		h.paymentRequired(w, offer, "PAYMENT-SIGNATURE header is required")
		return
	}
	payload, err := x402.DecodePaymentHeader(sig)
	if err != nil {
		h.metrics.payment(outcomeMalformed)
		writeError(w, http.StatusBadRequest, codeInvalidPayment, "the PAYMENT-SIGNATURE header is not an x402 payment: "+err.Error())
		return
	}
	accepted, err := x402.Match(payload.Accepted, offer.Accepts)
	if err != nil {
		h.refuse(w, offer, reasonOf(err))
		return
	}
	checked, err := x402.CheckExactSVM(payload, accepted)
	if err != nil {
		if _, ok := errors.AsType[*x402.Invalid](err); !ok {
			// Not the payment's fault: our own requirements are unusable.
			h.logger.Error("checking a payment against our requirements", zap.Error(err))
			writeError(w, http.StatusInternalServerError, "internal", "the payment requirements are misconfigured")
			return
		}
		h.refuse(w, offer, reasonOf(err))
		return
	}

	// Scanning is cheap and cannot fail; its result is held back until
	// the payment has settled.
	res := h.scan(req.Text)

	sr, payer, ok := h.charge(ctx, w, offer, payload, accepted, checked)
	if !ok {
		return
	}

	row := store.LedgerRow{
		Payer:          payer,
		Time:           h.now(),
		Price:          checked.Amount,
		Verdict:        string(res.Verdict),
		CategoryCounts: res.CategoryCounts,
	}
	if err := h.record(ctx, row); err != nil {
		// Paid but not recorded: the result stays unreleased (an
		// answer is only given with its ledger row), and the log holds
		// what the operator needs to make good: payer and transaction.
		h.metrics.payment(outcomeUnrecorded)
		h.logger.Error("settled payment could not be recorded in the ledger",
			zap.String("payer", payer), zap.String("transaction", sr.Transaction), zap.Error(err))
		w.Header().Set(x402.HeaderPaymentResponse, sr.Header())
		writeError(w, http.StatusInternalServerError, codeLedgerUnavailable,
			"the payment settled but could not be recorded; quote the transaction in PAYMENT-RESPONSE to be made good")
		return
	}
	h.metrics.payment(outcomeSettled)
	w.Header().Set(x402.HeaderPaymentResponse, sr.Header())
	writeJSON(w, http.StatusOK, scanResponse{RulesID: h.rulesID(), Result: res})
	h.logRequest("scan", http.StatusOK, zap.String("payer", payer), zap.String("transaction", sr.Transaction),
		zap.String("verdict", string(res.Verdict)), zap.Any("category_counts", res.CategoryCounts))
}

// charge takes the payment: it reserves the payment's key, has the
// facilitator verify and settle it, and releases the key only after a
// definite failure that cannot have moved money. When it returns false it
// has answered the request.
func (h *Handler) charge(ctx context.Context, w http.ResponseWriter, offer x402.PaymentRequired,
	payload *x402.PaymentPayload, accepted x402.Requirements, checked *x402.Checked) (*x402.SettleResponse, string, bool) {
	rctx, cancel := context.WithTimeout(ctx, storeTimeout)
	reserved, err := h.store.Reserve(rctx, checked.Key, h.now())
	cancel()
	if err != nil {
		h.unavailableStore(w, err)
		return nil, "", false
	}
	if !reserved {
		h.metrics.payment(outcomeDuplicate)
		h.paymentRequired(w, offer, x402.ReasonDuplicateSettlement)
		h.logRequest("scan", http.StatusPaymentRequired, zap.String("payer", checked.Payer), zap.String("reason", x402.ReasonDuplicateSettlement))
		return nil, "", false
	}

	vr, err := h.fac.Verify(ctx, payload, accepted)
	if err != nil {
		// Verify submits nothing: the payment cannot have been taken,
		// so the client may use it again once the facilitator is back.
		h.release(checked.Key)
		h.unavailable(w, "verifying a payment", err)
		return nil, "", false
	}
	if !vr.IsValid {
		h.release(checked.Key)
		h.refuse(w, offer, nonEmpty(vr.InvalidReason, "invalid_payment"))
		return nil, "", false
	}

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
		// key stays reserved, so the same payment can never buy a
		// second answer, and no result is given for this one.
		if err == nil {
			err = errors.New("settlement still pending")
		}
		h.unsettled(w, checked, err)
		return nil, "", false
	}
	if !sr.Success {
		reason := nonEmpty(sr.ErrorReason, "settlement_failed")
		if settleFailedBeforeSending(reason) {
			h.release(checked.Key)
		}
		h.metrics.payment(outcomeFailed)
		w.Header().Set(x402.HeaderPaymentResponse, sr.Header())
		h.paymentRequired(w, offer, reason)
		h.logRequest("scan", http.StatusPaymentRequired, zap.String("payer", nonEmpty(sr.Payer, checked.Payer)),
			zap.String("reason", reason))
		return nil, "", false
	}

	return sr, nonEmpty(sr.Payer, vr.Payer, checked.Payer), true
}

// offer is this request's 402 document: one exact-SVM requirement whose
// resource URL is the URL the client asked for.
func (h *Handler) offer(ctx context.Context, r *http.Request) (x402.PaymentRequired, error) {
	feePayer, err := h.feePayer(ctx)
	if err != nil {
		return x402.PaymentRequired{}, err
	}
	req, err := h.network.Requirements(h.amount, h.PayTo, feePayer)
	if err != nil {
		return x402.PaymentRequired{}, fmt.Errorf("the facilitator's fee payer is unusable: %w", err)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return x402.PaymentRequired{
		X402Version: x402.Version,
		Resource: x402.Resource{
			URL:         scheme + "://" + r.Host + r.URL.EscapedPath(),
			Description: resourceDescr,
			MimeType:    "application/json",
		},
		Accepts: []x402.Requirements{req},
	}, nil
}

// paymentRequired answers 402 with the offer, reason in its error field,
// in the PAYMENT-REQUIRED header and as the JSON body.
func (h *Handler) paymentRequired(w http.ResponseWriter, offer x402.PaymentRequired, reason string) {
	offer.Error = reason
	w.Header().Set(x402.HeaderPaymentRequired, offer.Header())
	writeJSON(w, http.StatusPaymentRequired, offer)
}

// refuse answers 402 to a payment that failed verification.
func (h *Handler) refuse(w http.ResponseWriter, offer x402.PaymentRequired, reason string) {
	h.metrics.payment(outcomeInvalid)
	h.paymentRequired(w, offer, reason)
	h.logRequest("scan", http.StatusPaymentRequired, zap.String("reason", reason))
}

// unavailable answers 503 when the facilitator cannot be asked: nothing is
// given, and the client may try again.
func (h *Handler) unavailable(w http.ResponseWriter, what string, err error) {
	h.metrics.payment(outcomeUnavailable)
	h.logger.Warn("facilitator unavailable", zap.String("while", what), zap.Error(err))
	w.Header().Set("Retry-After", "5")
	writeError(w, http.StatusServiceUnavailable, codeFacilitatorUnavail,
		"the payment facilitator is unavailable; no payment was taken, try again shortly")
}

// unsettled answers 503 when settlement was asked for but its outcome is
// unknown: no result is given, and the payment cannot be used again.
func (h *Handler) unsettled(w http.ResponseWriter, c *x402.Checked, err error) {
	h.metrics.payment(outcomeUnavailable)
	// Payer and payment key let the operator find the transaction on
	// chain and make good if it landed.
	h.logger.Warn("facilitator unavailable", zap.String("while", "settling a payment"),
		zap.String("payer", c.Payer), zap.String("payment_key", c.Key), zap.Error(err))
	w.Header().Set("Retry-After", "5")
	writeError(w, http.StatusServiceUnavailable, codeFacilitatorUnavail,
		"the payment facilitator did not confirm the settlement; no result is given and this payment cannot be used again; if it settled, the operator can find it by your wallet address")
}

func (h *Handler) unavailableStore(w http.ResponseWriter, err error) {
	h.metrics.payment(outcomeUnavailable)
	h.logger.Error("payment store unavailable", zap.Error(err))
	w.Header().Set("Retry-After", "5")
	writeError(w, http.StatusServiceUnavailable, codeStoreUnavailable, "the payment store is unavailable; nothing was charged, try again shortly")
}

// release frees a payment key after a definite failure. If that fails the
// key stays used: the safe side, the client pays with a new transaction.
func (h *Handler) release(key string) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := h.store.Release(ctx, key); err != nil {
		h.logger.Error("releasing a payment key", zap.Error(err))
	}
}

// record writes the ledger row, retrying briefly: the payment has already
// settled, so a passing lock or I/O hiccup should not cost the answer.
func (h *Handler) record(ctx context.Context, row store.LedgerRow) error {
	ctx, cancel := context.WithTimeout(ctx, ledgerWriteTimeout)
	defer cancel()
	var err error
	for attempt := range 3 {
		if err = h.store.Record(ctx, row); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		}
	}
	return err
}

// Settlement reasons of the reference facilitator (@x402/svm) that say
// the transaction was, or may have been, sent.
const (
	reasonSettlementPending    = "settlement_pending"
	reasonTransactionFailed    = "invalid_exact_svm_transaction_failed"
	reasonPostSettlementUnseen = "post_settlement_transfer_not_confirmed"
)

// settleFailedBeforeSending reports whether a settlement failure reason
// says the transaction was refused before it was sent: the verification
// reasons (invalid_exact_svm_...), which the facilitator re-checks first
// when settling. invalid_exact_svm_transaction_failed is the exception: the
// reference facilitator also uses it when sending or confirming failed,
// after which the transaction may still land. Any other reason
// (duplicate_settlement, settlement_pending, one we do not know) keeps the
// key used too: refusing an honest retry costs the client a new signature,
// accepting a landed payment twice gives a scan away.
func settleFailedBeforeSending(reason string) bool {
	switch reason {
	case reasonTransactionFailed, reasonSettlementPending, reasonPostSettlementUnseen:
		return false
	}
	return strings.HasPrefix(reason, "invalid_")
}

// reasonOf is the x402 reason of a refused payment.
func reasonOf(err error) string {
	if inv, ok := errors.AsType[*x402.Invalid](err); ok && inv.Reason != "" {
		return inv.Reason
	}
	return err.Error()
}

func nonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func (h *Handler) rulesID() string { return h.engine.Engine.Rulebook().ID }

// jsonString encodes s as a JSON string.
func jsonString(s string) ([]byte, error) { return json.Marshal(s) }
