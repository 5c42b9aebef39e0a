package x402

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Header returns base64(JSON), the value of the PAYMENT-RESPONSE header.
// Extensions that are not valid JSON (never the case when they were
// decoded from the facilitator) are left out rather than losing the
// settlement record the header is.
func (s SettleResponse) Header() string {
	b, err := json.Marshal(s)
	if err != nil {
		s.Extensions = nil
		b, _ = json.Marshal(s) // strings and a bool always marshal
	}
	return base64.StdEncoding.EncodeToString(b)
}

// DecodePaymentResponse decodes a PAYMENT-RESPONSE header (for clients and
// tests).
func DecodePaymentResponse(h string) (*SettleResponse, error) {
	if len(h) > MaxPaymentHeaderBytes {
		return nil, errors.New("decoding payment response: too long")
	}
	b, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		return nil, fmt.Errorf("decoding payment response: %w", err)
	}
	var s SettleResponse
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decoding payment response: %w", err)
	}
	return &s, nil
}

// DecodePaymentRequired decodes a PAYMENT-REQUIRED header (for clients and
// tests).
func DecodePaymentRequired(h string) (*PaymentRequired, error) {
	if len(h) > MaxPaymentHeaderBytes {
		return nil, errors.New("decoding payment requirements: too long")
	}
	b, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		return nil, fmt.Errorf("decoding payment requirements: %w", err)
	}
	var p PaymentRequired
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("decoding payment requirements: %w", err)
	}
	return &p, nil
}
