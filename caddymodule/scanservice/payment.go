package scanservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/promptwall/promptwall/x402"
)

// ledgerWriteTimeout bounds writing the ledger row after settlement.
const ledgerWriteTimeout = 10 * time.Second

// storeTimeout bounds each request's wait for a store operation before
// money moves (a pre-check, reserving a payment key, releasing it), on its
// own: while another process holds the database, each request gives up at
// its own deadline, not after the requests queued before it.
const storeTimeout = 10 * time.Second

// serveScan answers POST /scan: the full result, free or against an x402
// payment. The body is checked before any payment is asked for or taken;
// the money path is paidScan's.
func (h *Handler) serveScan(w http.ResponseWriter, r *http.Request) {
	if !allowPost(w, r) {
		return
	}
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
		h.metrics.payment(outcomeUnavailable)
		h.logger.Warn("facilitator unavailable", zap.String("while", "building the payment requirements"), zap.Error(err))
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, codeFacilitatorUnavail,
			"the payment facilitator is unavailable; no payment was taken, try again shortly")
		return
	}
	sig := r.Header.Get(x402.HeaderPaymentSignature)
	if sig == "" {
		h.metrics.payment(outcomeRequired)
		h.paymentRequired(w, offer, missingPaymentReason(r))
		return
	}
	a := h.paidScan(ctx, offer, sig, req.Text)
	// A client that hung up while its payment settled did not get the
	// answer, though writing it into the server's buffer succeeds: its
	// retry with the payment gets the scan.
	wrote := h.writeAnswer(w, offer, a)
	h.sent(a, wrote && r.Context().Err() == nil)
}

// writeAnswer renders a paid scan's answer as POST /scan gives it, and
// reports whether it reached the connection.
func (h *Handler) writeAnswer(w http.ResponseWriter, offer x402.PaymentRequired, a answer) bool {
	if a.settle != nil {
		w.Header().Set(x402.HeaderPaymentResponse, a.settle.Header())
	}
	if a.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(a.retryAfter))
	}
	switch a.status {
	case http.StatusOK:
		// A write error means the client is gone. No flush here: the
		// server sends the answer as the handler returns, and an early
		// flush costs a round trip on keep-alive connections.
		return writeJSON(w, http.StatusOK, scanResponse{RulesID: h.rulesID(), Result: *a.result}) == nil
	case http.StatusPaymentRequired:
		h.paymentRequired(w, offer, a.reason)
	default:
		writeError(w, a.status, a.code, a.message)
	}
	return true
}

// offer is this request's 402 document: one exact-SVM requirement whose
// resource URL is the URL the client asked for, and the extensions the
// service advertises (offer.go).
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
		Accepts:    []x402.Requirements{req},
		Extensions: h.extensions, // shared: never changed after Provision
	}, nil
}

// paymentRequired answers 402 with the offer, reason in its error field,
// in the PAYMENT-REQUIRED header and as the JSON body.
func (h *Handler) paymentRequired(w http.ResponseWriter, offer x402.PaymentRequired, reason string) {
	offer.Error = reason
	w.Header().Set(x402.HeaderPaymentRequired, offer.Header())
	writeJSON(w, http.StatusPaymentRequired, offer)
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

// paymentIdent is the payment's payment-identifier (x402 extension), or
// empty. One that is malformed is the client's error.
func paymentIdent(p *x402.PaymentPayload) (string, error) {
	id, _, err := x402.PaymentIdentifier(p)
	return id, err
}
