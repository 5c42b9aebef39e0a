package x402

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ErrUnavailable wraps every facilitator failure that is not a definite
// answer: unreachable, timed out, an HTTP error without a verdict, or a
// body that is not the documented JSON. The server answers 503 and gives
// nothing away; the payment may be retried.
var ErrUnavailable = errors.New("facilitator unavailable")

// Default timeouts. Settlement waits for the transaction to be confirmed,
// which the reference facilitator polls for up to 30 seconds.
const (
	DefaultTimeout       = 10 * time.Second
	DefaultSettleTimeout = 45 * time.Second
)

// maxFacilitatorBody bounds what is read from a facilitator.
const maxFacilitatorBody = 1 << 20

// Facilitator is a client of an x402 facilitator's HTTP API. It holds no
// state of its own and is safe for concurrent use.
type Facilitator struct {
	URL    string      // base URL; the paths /supported, /verify, /settle are appended
	Header http.Header // sent with every request, e.g. Authorization
	Client *http.Client
	// Timeout bounds /supported and /verify (DefaultTimeout when zero).
	Timeout time.Duration
	// SettleTimeout bounds /settle (DefaultSettleTimeout when zero).
	SettleTimeout time.Duration
}

// SupportedKind is one payment kind a facilitator handles.
type SupportedKind struct {
	X402Version int            `json:"x402Version"`
	Scheme      string         `json:"scheme"`
	Network     string         `json:"network"`
	Extra       map[string]any `json:"extra,omitempty"`
}

// Supported is the answer of GET /supported.
type Supported struct {
	Kinds      []SupportedKind     `json:"kinds"`
	Extensions json.RawMessage     `json:"extensions,omitempty"`
	Signers    map[string][]string `json:"signers,omitempty"`
}

// FeePayer is the fee payer the facilitator announces for x402 v2 "exact"
// on network (a CAIP-2 id).
func (s *Supported) FeePayer(network string) (string, error) {
	for _, k := range s.Kinds {
		if k.X402Version != Version || k.Scheme != SchemeExact || k.Network != network {
			continue
		}
		fp, _ := k.Extra["feePayer"].(string)
		if _, err := ParsePublicKey(fp); err != nil {
			return "", fmt.Errorf("facilitator's fee payer for %s: %w", network, err)
		}
		return fp, nil
	}
	return "", fmt.Errorf("facilitator does not support x402 v%d %q payments on %s", Version, SchemeExact, network)
}

// VerifyResponse is the answer of POST /verify.
type VerifyResponse struct {
	IsValid        bool   `json:"isValid"`
	InvalidReason  string `json:"invalidReason,omitempty"`
	InvalidMessage string `json:"invalidMessage,omitempty"`
	Payer          string `json:"payer,omitempty"`
}

// SettleResponse is the answer of POST /settle and the body of the
// PAYMENT-RESPONSE header.
type SettleResponse struct {
	Success      bool   `json:"success"`
	ErrorReason  string `json:"errorReason,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	Payer        string `json:"payer,omitempty"`
	Transaction  string `json:"transaction"`
	Network      string `json:"network"`
	// Amount is what was settled, in atomic units, when the facilitator
	// says (x402-specification-v2.md 5.3.2; optional).
	Amount string `json:"amount,omitempty"`
	// Extensions are settlement data for buyer and server alike, passed
	// on in PAYMENT-RESPONSE as the facilitator gave them.
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// Supported asks the facilitator what it handles.
func (f *Facilitator) Supported(ctx context.Context) (*Supported, error) {
	var s Supported
	if err := f.do(ctx, http.MethodGet, "/supported", nil, f.timeout(), &s, nil); err != nil {
		return nil, err
	}
	if len(s.Kinds) == 0 {
		return nil, fmt.Errorf("%w: /supported lists no kinds", ErrUnavailable)
	}
	return &s, nil
}

// FeePayer asks /supported for the fee payer of x402 v2 "exact" payments on
// network (a CAIP-2 id): the value for extra.feePayer when the configuration
// does not name one.
func (f *Facilitator) FeePayer(ctx context.Context, network string) (string, error) {
	s, err := f.Supported(ctx)
	if err != nil {
		return "", err
	}
	return s.FeePayer(network)
}

// Verify asks the facilitator whether the payment is valid (it simulates the
// transaction). IsValid false is a definite refusal, not an error.
func (f *Facilitator) Verify(ctx context.Context, p *PaymentPayload, req Requirements) (*VerifyResponse, error) {
	body, err := requestBody(p, req)
	if err != nil {
		return nil, err
	}
	var v VerifyResponse
	if err := f.do(ctx, http.MethodPost, "/verify", body, f.timeout(), &v, []string{"isValid"}); err != nil {
		return nil, err
	}
	if !v.IsValid && v.InvalidReason == "" {
		v.InvalidReason = "invalid_payment"
	}
	return &v, nil
}

// Settle asks the facilitator to co-sign and submit the transaction.
// Success false is a definite failure, not an error. An error (ErrUnavailable)
// leaves the outcome unknown: the transaction may still land.
func (f *Facilitator) Settle(ctx context.Context, p *PaymentPayload, req Requirements) (*SettleResponse, error) {
	body, err := requestBody(p, req)
	if err != nil {
		return nil, err
	}
	var s SettleResponse
	if err := f.do(ctx, http.MethodPost, "/settle", body, f.settleTimeout(), &s, []string{"success"}); err != nil {
		return nil, err
	}
	if s.Success && s.Transaction == "" {
		return nil, fmt.Errorf("%w: /settle reported success without a transaction", ErrUnavailable)
	}
	if !s.Success && s.ErrorReason == "" {
		s.ErrorReason = "settlement_failed"
	}
	if s.Network == "" {
		s.Network = req.Network
	}
	return &s, nil
}

func (f *Facilitator) timeout() time.Duration {
	if f.Timeout > 0 {
		return f.Timeout
	}
	return DefaultTimeout
}

func (f *Facilitator) settleTimeout() time.Duration {
	if f.SettleTimeout > 0 {
		return f.SettleTimeout
	}
	return DefaultSettleTimeout
}

// requestBody is {"x402Version":2,"paymentPayload":...,"paymentRequirements":...}
// with the payload exactly as the client sent it.
func requestBody(p *PaymentPayload, req Requirements) ([]byte, error) {
	if p == nil {
		return nil, errors.New("calling facilitator: no payment payload")
	}
	raw := p.Raw
	if len(raw) == 0 {
		b, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encoding payment payload: %w", err)
		}
		raw = b
	}
	b, err := json.Marshal(struct {
		X402Version         int             `json:"x402Version"`
		PaymentPayload      json.RawMessage `json:"paymentPayload"`
		PaymentRequirements Requirements    `json:"paymentRequirements"`
	}{Version, raw, req})
	if err != nil {
		return nil, fmt.Errorf("encoding facilitator request: %w", err)
	}
	return b, nil
}

// do performs one call. A body holding every field of verdict is a definite
// answer whatever the HTTP status (some facilitators answer an invalid
// payment with 400 and {"isValid": false}); anything else is ErrUnavailable.
func (f *Facilitator) do(ctx context.Context, method, path string, body []byte, timeout time.Duration, out any, verdict []string) error {
	if f.URL == "" {
		return errors.New("calling facilitator: no URL configured")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(f.URL, "/")+path, rd)
	if err != nil {
		return fmt.Errorf("calling facilitator %s: %w", path, err)
	}
	for k, vs := range f.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	client := f.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnavailable, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxFacilitatorBody+1))
	if err != nil {
		return fmt.Errorf("%w: %s: reading answer: %v", ErrUnavailable, path, err)
	}
	if len(data) > maxFacilitatorBody {
		return fmt.Errorf("%w: %s: answer larger than %d bytes", ErrUnavailable, path, maxFacilitatorBody)
	}
	definite := resp.StatusCode < 500 && hasFields(data, verdict)
	if resp.StatusCode != http.StatusOK && !definite {
		return fmt.Errorf("%w: %s: HTTP %d: %s", ErrUnavailable, path, resp.StatusCode, snippet(data))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%w: %s: undecodable answer: %v", ErrUnavailable, path, err)
	}
	if !hasFields(data, verdict) {
		return fmt.Errorf("%w: %s: answer lacks %v: %s", ErrUnavailable, path, verdict, snippet(data))
	}
	return nil
}

// hasFields reports whether data is a JSON object with a boolean at each key.
func hasFields(data []byte, keys []string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil || m == nil {
		return false
	}
	for _, k := range keys {
		v := bytes.TrimSpace(m[k])
		if !bytes.Equal(v, []byte("true")) && !bytes.Equal(v, []byte("false")) {
			return false
		}
	}
	return true
}

func snippet(b []byte) string {
	const n = 200
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}
