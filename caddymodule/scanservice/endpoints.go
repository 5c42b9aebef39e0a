package scanservice

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/store"
)

// serveRules answers GET /rules with the rulebook document byte for byte.
// http.ServeContent does HEAD, If-None-Match (304) and ranges with the
// ETag set here, the quoted sha256 of the document.
func (h *Handler) serveRules(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		methodNotAllowed(w, "GET, HEAD")
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("ETag", h.rulesETag)
	// Revalidate every time: a reload can change the rulebook, and the
	// ETag makes revalidation cost a 304.
	hdr.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(h.engine.Engine.Rulebook().Raw))
}

// precheckResponse is the free pre-check's answer: the verdict line only.
type precheckResponse struct {
	Verdict engine.Verdict `json:"verdict"`
	RulesID string         `json:"rules_id"`
}

// servePrecheck answers POST /precheck, and GET /precheck with a sign-in
// challenge when sign-in is on. The body, the caller and its proof if any
// are checked first; the quotas (of the caller and its client address, or
// of the proven wallet and the proof) are charged only for a request that
// then gets its verdict.
func (h *Handler) servePrecheck(w http.ResponseWriter, r *http.Request) {
	if h.serveSignInMethods(w, r) {
		return
	}
	if !allowPost(w, r) {
		return
	}
	req, ok := readRequest(w, r, true)
	if !ok {
		return
	}
	proof, ok := h.readProof(w, r, req.Caller)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	var q store.Quota
	var err error
	if proof != nil {
		q, err = h.chargeProvenPrecheck(ctx, proof)
	} else {
		q, err = h.chargePrecheck(ctx, req.Caller, clientAddress(r))
	}
	if err != nil {
		h.logger.Error("pre-check quota", zap.Error(err))
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, codeStoreUnavailable, "the quota store is unavailable; try again shortly")
		return
	}
	if q.Exceeded == limitSignInUsed {
		writeError(w, http.StatusUnauthorized, codeInvalidSignIn, "this sign-in was used already; GET /precheck for a new challenge")
		return
	}
	if !q.Allowed {
		secs := retryAfterSeconds(q.RetryAfter)
		w.Header().Set("Retry-After", fmt.Sprint(secs))
		writeJSON(w, http.StatusTooManyRequests, apiError{errorBody{
			Code: codeRateLimited, Message: h.refusalMessage(q), Limit: string(q.Exceeded), RetryAfter: secs,
		}})
		h.logRequest("precheck", http.StatusTooManyRequests, zap.String("caller", req.Caller), zap.String("limit", string(q.Exceeded)))
		return
	}
	res := h.scan(req.Text)
	writeJSON(w, http.StatusOK, precheckResponse{Verdict: res.Verdict, RulesID: h.engine.Engine.Rulebook().ID})
	h.logRequest("precheck", http.StatusOK, zap.String("caller", req.Caller), zap.Bool("proven", proof != nil), zap.String("verdict", string(res.Verdict)))
}

// scanResponse is the full result of docs/SPEC.md section 8 with the rules_id
// first, as docs/DESIGN.md lists the fields.
type scanResponse struct {
	RulesID string `json:"rules_id"`
	engine.Result
}

// MarshalJSON splices rules_id in front of the engine's own encoding, so
// the result keeps exactly the engine's shape.
func (s scanResponse) MarshalJSON() ([]byte, error) {
	res, err := s.Result.MarshalJSON()
	if err != nil {
		return nil, err
	}
	id, err := jsonString(s.RulesID)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"rules_id":`)
	b.Write(id)
	if len(res) > 2 {
		b.WriteByte(',')
		b.Write(res[1:])
	} else {
		b.WriteByte('}')
	}
	return b.Bytes(), nil
}

// allowPost answers 405 (or 204 to OPTIONS) unless the method is POST.
func allowPost(w http.ResponseWriter, r *http.Request) bool {
	switch r.Method {
	case http.MethodPost:
		return true
	case http.MethodOptions:
		w.Header().Set("Allow", "POST, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
	default:
		methodNotAllowed(w, "POST")
	}
	return false
}

// logRequest writes one entry per answered pre-check or scan: endpoint,
// status and the given fields (wallet, verdict, counts). Never the text.
func (h *Handler) logRequest(endpoint string, status int, fields ...zap.Field) {
	if ce := h.logger.Check(zapcore.InfoLevel, "prompt_scan"); ce != nil {
		ce.Write(append([]zap.Field{zap.String("endpoint", endpoint), zap.Int("status", status)}, fields...)...)
	}
}
