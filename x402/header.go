package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
)

// Header names of the x402 v2 HTTP transport.
const (
	HeaderPaymentRequired  = "PAYMENT-REQUIRED"
	HeaderPaymentSignature = "PAYMENT-SIGNATURE"
	HeaderPaymentResponse  = "PAYMENT-RESPONSE"
)

// Version is the x402 protocol version this package speaks.
const Version = 2

// SchemeExact is the only scheme this package implements.
const SchemeExact = "exact"

// MaxPaymentHeaderBytes bounds the PAYMENT-SIGNATURE header. A Solana
// transaction is at most 1,232 bytes (1,644 in base64); the rest is the
// accepted requirements and the resource, a few hundred bytes.
const MaxPaymentHeaderBytes = 16 << 10

// Resource describes what is being paid for.
type Resource struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// Requirements is one way to pay that the server accepts.
type Requirements struct {
	Scheme            string         `json:"scheme"`
	Network           string         `json:"network"`
	Amount            string         `json:"amount"`
	Asset             string         `json:"asset"`
	PayTo             string         `json:"payTo"`
	MaxTimeoutSeconds int            `json:"maxTimeoutSeconds"`
	Extra             map[string]any `json:"extra,omitempty"`
}

// FeePayer is extra.feePayer, or "" when absent or not a string.
func (r Requirements) FeePayer() string {
	s, _ := r.Extra["feePayer"].(string)
	return s
}

// Memo is extra.memo, or "" when absent or not a string.
func (r Requirements) Memo() string {
	s, _ := r.Extra["memo"].(string)
	return s
}

// PaymentRequired is the body of the PAYMENT-REQUIRED header.
type PaymentRequired struct {
	X402Version int            `json:"x402Version"`
	Error       string         `json:"error,omitempty"`
	Resource    Resource       `json:"resource"`
	Accepts     []Requirements `json:"accepts"`
	// Extensions maps an extension key to its value, by convention an
	// Extension ({"info", "schema"}); clients echo them in the payment.
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// Encode returns base64(JSON), the value of the PAYMENT-REQUIRED header.
// It fails only when Extra holds a value JSON cannot represent.
func (p PaymentRequired) Encode() (string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("encoding payment requirements: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// Header is Encode without the error, for requirements whose Extra holds only
// strings (as Network.Requirements builds them); it returns "" on failure.
func (p PaymentRequired) Header() string {
	s, _ := p.Encode()
	return s
}

// PaymentPayload is the decoded PAYMENT-SIGNATURE header.
type PaymentPayload struct {
	X402Version int          `json:"x402Version"`
	Resource    *Resource    `json:"resource,omitempty"`
	Accepted    Requirements `json:"accepted"`
	Payload     struct {
		Transaction string `json:"transaction"`
	} `json:"payload"`
	// Extensions are the client's echo of the offered extensions, with
	// what it added (a payment-identifier id). Values are kept raw: only
	// the ones the server reads (see PaymentIdentifier) are interpreted,
	// and the whole payload reaches the facilitator as Raw.
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
	// Raw is the JSON exactly as the client sent it. It is what goes to the
	// facilitator, so that fields this package does not know (extensions)
	// reach it unchanged.
	Raw json.RawMessage `json:"-"`
}

// DecodePaymentHeader decodes a PAYMENT-SIGNATURE header: base64 of a JSON
// object with x402Version 2, the accepted requirements and a transaction,
// and extensions that, when present, are an object. Any other shape is an
// error that says what is wrong (an HTTP 400).
func DecodePaymentHeader(h string) (*PaymentPayload, error) {
	if h == "" {
		return nil, errors.New("decoding payment header: empty")
	}
	if len(h) > MaxPaymentHeaderBytes {
		return nil, fmt.Errorf("decoding payment header: %d bytes is more than the %d allowed", len(h), MaxPaymentHeaderBytes)
	}
	raw, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		// Some clients drop the padding; the content is the same.
		var err2 error
		if raw, err2 = base64.RawStdEncoding.DecodeString(h); err2 != nil {
			return nil, fmt.Errorf("decoding payment header: not base64: %w", err)
		}
	}
	if !bytes.HasPrefix(bytes.TrimLeft(raw, " \t\r\n"), []byte("{")) {
		return nil, errors.New("decoding payment header: not a JSON object")
	}
	var p PaymentPayload
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("decoding payment header: not a JSON payment payload: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("decoding payment header: data after the JSON object")
	}
	switch {
	case p.X402Version != Version:
		return nil, fmt.Errorf("decoding payment header: x402Version %d is not supported, want %d", p.X402Version, Version)
	case p.Accepted.Scheme == "" || p.Accepted.Network == "":
		return nil, errors.New("decoding payment header: accepted requirements are missing")
	case p.Payload.Transaction == "":
		return nil, errors.New("decoding payment header: payload.transaction is missing")
	}
	p.Raw = json.RawMessage(raw)
	return &p, nil
}

// Match finds the offered requirements the client accepted. The accepted
// entry must equal an offered one on every field but extra, and every offered
// extra field must be in the accepted extra with the same value (the client
// may add fields, not drop or change them). It returns the server's own copy,
// which is what verification and settlement must use.
func Match(accepted Requirements, offered []Requirements) (Requirements, error) {
	for _, o := range offered {
		if o.Scheme != accepted.Scheme || o.Network != accepted.Network ||
			o.Amount != accepted.Amount || o.Asset != accepted.Asset ||
			o.PayTo != accepted.PayTo || o.MaxTimeoutSeconds != accepted.MaxTimeoutSeconds {
			continue
		}
		if extraContained(o.Extra, accepted.Extra) {
			return o, nil
		}
	}
	return Requirements{}, fmt.Errorf("accepted requirements (%s %s, amount %s of %s to %s) match none offered",
		accepted.Scheme, accepted.Network, accepted.Amount, accepted.Asset, accepted.PayTo)
}

// extraContained reports whether every key of want is in got with an equal
// value. Values are compared after a JSON round trip so that a number the
// server configured as int equals the float64 the decoder produced.
func extraContained(want, got map[string]any) bool {
	for k, v := range want {
		g, ok := got[k]
		if !ok || !reflect.DeepEqual(jsonValue(v), jsonValue(g)) {
			return false
		}
	}
	return true
}

func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}
