package scanservice

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/promptwall/promptwall/mcp"
	"github.com/promptwall/promptwall/x402"
)

// How the endpoints' answers become the MCP tool results that mcp.go
// describes.

// toolAnswer renders a paid scan's answer as scan_text gives it.
func (h *Handler) toolAnswer(offer x402.PaymentRequired, a answer) (*mcp.Result, error) {
	var res *mcp.Result
	var err error
	switch {
	case a.status == http.StatusOK:
		if res, err = jsonResult(scanResponse{RulesID: h.rulesID(), Result: *a.result}); err != nil {
			h.sent(a, false)
			return nil, err
		}
		res.Sent = func(ok bool) { h.sent(a, ok) }
	case a.status == http.StatusPaymentRequired:
		res, err = paymentRequiredResult(offer, a.reason)
	case a.status == http.StatusBadRequest && a.code == codeInvalidPayment:
		// Not a payment at all: the x402 binding answers an unusable
		// payment with the requirements, so the client can pay afresh.
		res, err = paymentRequiredResult(offer, codeInvalidPayment+": "+a.message)
	default:
		res = errorResult(a.code, a.message)
	}
	if err != nil {
		return nil, err
	}
	if a.settle != nil {
		res.Meta = map[string]any{metaPaymentResponse: a.settle}
	}
	return res, nil
}

// jsonResult is a successful tool result: v as structured content and as
// JSON text.
func jsonResult(v any) (*mcp.Result, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding a tool result: %w", err)
	}
	return &mcp.Result{Content: []mcp.Content{mcp.TextContent(string(b))}, StructuredContent: json.RawMessage(b)}, nil
}

// errorResult is a failed tool result in the endpoints' error shape: the
// body {"error": {"code", "message"}} as structured content, the message
// as text.
func errorResult(code, message string) *mcp.Result {
	return &mcp.Result{
		IsError:           true,
		Content:           []mcp.Content{mcp.TextContent(message)},
		StructuredContent: apiError{errorBody{Code: code, Message: message}},
	}
}

// paymentRequiredResult is the x402 tool-result binding's payment
// required: isError, the offer with reason as its error, as structured
// content and as JSON text.
func paymentRequiredResult(offer x402.PaymentRequired, reason string) (*mcp.Result, error) {
	offer.Error = reason
	b, err := json.Marshal(offer)
	if err != nil {
		return nil, fmt.Errorf("encoding payment requirements: %w", err)
	}
	return &mcp.Result{
		IsError:           true,
		Content:           []mcp.Content{mcp.TextContent(string(b))},
		StructuredContent: json.RawMessage(b),
	}, nil
}

// capture is an in-memory HTTP response, of servePrecheck or of the body
// checks.
type capture struct {
	header http.Header
	status int
	body   []byte
}

func newCapture() *capture { return &capture{header: http.Header{}} }

func (c *capture) Header() http.Header { return c.header }

func (c *capture) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
}

func (c *capture) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.body = append(c.body, b...)
	return len(b), nil
}

// json is the body without writeJSON's final newline.
func (c *capture) json() json.RawMessage { return bytes.TrimRight(c.body, "\n") }

// errorResult is the captured error answer as a failed tool result: its
// body (with retry_after when rate limited) as structured content, its
// message as text.
func (c *capture) errorResult() *mcp.Result {
	var e apiError
	if json.Unmarshal(c.body, &e) != nil || e.Error.Message == "" {
		return errorResult("internal", http.StatusText(c.status))
	}
	return &mcp.Result{IsError: true, Content: []mcp.Content{mcp.TextContent(e.Error.Message)}, StructuredContent: c.json()}
}
