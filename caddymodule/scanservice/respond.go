package scanservice

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Error codes of the {"error": {"code", "message"}} bodies.
const (
	codeInvalidJSON         = "invalid_json"
	codeMissingText         = "missing_text"
	codeInvalidText         = "invalid_text"
	codeBodyTooLarge        = "body_too_large"
	codeUnsupportedEncoding = "unsupported_encoding"
	codeTextTooLarge        = "text_too_large"
	codeInvalidCaller       = "invalid_caller"
	codeInvalidSignIn       = "invalid_sign_in"
	codeRateLimited         = "rate_limited"
	codeMethodNotAllowed    = "method_not_allowed"
	codeInvalidPayment      = "invalid_payment"
	codeFacilitatorUnavail  = "facilitator_unavailable"
	codeStoreUnavailable    = "store_unavailable"
	codeLedgerUnavailable   = "ledger_unavailable"
	codePaymentInProgress   = "payment_in_progress"
	codePaymentConflict     = "payment_conflict"
)

// apiError is the body of every error answer but the 402s, which carry the
// x402 PaymentRequired document instead.
type apiError struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Limit and RetryAfter are set on rate_limited answers only.
	Limit      string `json:"limit,omitempty"`
	RetryAfter int64  `json:"retry_after,omitempty"`
}

// writeJSON answers status with v as JSON. Answers depend on the request
// body or on payment state, so no cache may keep them.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		// Every value passed here is made of strings, numbers, maps
		// and slices; this cannot happen, but never answer half a body.
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"code":"internal","message":"encoding the answer failed"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	_, err = w.Write(append(body, '\n'))
	return err
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, apiError{errorBody{Code: code, Message: msg}})
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, codeMethodNotAllowed, "use "+allow)
}

// retryAfterSeconds rounds a wait up to whole seconds, as Retry-After
// needs: rounding down would invite a retry that is refused again.
func retryAfterSeconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return max(s, 1)
}

// statusWriter remembers the status code written, for the metrics.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) status() int {
	if s.code == 0 {
		return http.StatusOK
	}
	return s.code
}

// Unwrap lets http.ResponseController reach the real writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
