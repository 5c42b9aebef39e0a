package scanservice

// The MCP endpoint: the path whose last segment is "mcp" serves the Model
// Context Protocol (package mcp: Streamable HTTP, stateless, revisions
// 2025-06-18 and 2025-03-26) with two tools.
//
// precheck_text is POST /precheck as a tool: arguments {"text", "caller"},
// the same checks and the same per-wallet quotas (daily limit, interval),
// counted in the same store rows, so a wallet's free pre-checks are one
// allowance whichever way it asks.
//
// scan_text is POST /scan as a tool, paid with the tool-result binding of
// x402's MCP transport (x402 specs/transports-v2/mcp.md), the binding for
// MCP revisions before 2026-07-28. A paid call goes:
//
//  1. The client calls scan_text with arguments {"text"} and no payment.
//     The text is checked as /scan checks it; nothing is scanned. The
//     answer is the 402 equivalent, a tool result with isError true whose
//     structuredContent is the x402 v2 PaymentRequired document (the same
//     one /scan sends in PAYMENT-REQUIRED, its error field saying why) and
//     whose content[0].text is that document as JSON text.
//  2. The client builds a PaymentPayload for one of accepts (exact scheme,
//     a signed Solana USDC transfer) and calls scan_text again with the
//     same arguments and params._meta["x402/payment"] holding the
//     PaymentPayload object (not base64: the JSON object itself).
//  3. The server takes that payment exactly as /scan takes a
//     PAYMENT-SIGNATURE header: match, check, reserve its key, verify,
//     settle, write the ledger row, and only then release the result.
//     Success is a tool result with isError false, the full result of
//     SPEC section 8 as structuredContent and as content[0].text, and the
//     settlement's SettleResponse in result._meta["x402/payment-response"].
//  4. A refused payment (invalid, already used, failed settlement) is
//     again the PaymentRequired tool result with the reason in its error
//     field; when the facilitator answered a settlement,
//     _meta["x402/payment-response"] carries its SettleResponse too. A
//     payment that is not a PaymentPayload at all also gets the
//     PaymentRequired result (reason invalid_payment), so the client can
//     pay afresh. The same payment sent twice buys one result: the second
//     call is refused with duplicate_settlement.
//  5. Failures that are not about the payment (text too long, facilitator
//     or store unavailable, a settled payment whose ledger row could not be
//     written) are tool results with isError true, the /scan error body
//     {"error": {"code", "message"}} as structuredContent and its message
//     as content[0].text; no result is released with any of them.
//
// Both tools run the HTTP handlers themselves on an in-memory request, so
// the money path is not a copy of /scan but /scan: the same order, the
// same ledger row, the same metrics. The text goes from the tool's
// arguments to that request's body and nowhere else; nothing here logs it.
//
// The tools have no outputSchema: the SDK clients validate
// structuredContent against it on error results too, and x402 puts the
// PaymentRequired document there.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/promptwall/promptwall/mcp"
	"github.com/promptwall/promptwall/x402"
)

// Keys of the x402 MCP transport in _meta.
const (
	metaPayment         = "x402/payment"
	metaPaymentResponse = "x402/payment-response"
)

// mcpMaxBodyBytes bounds an MCP POST: the arguments are a /scan body, at
// most MaxBodyBytes, and the payment is at most a PAYMENT-SIGNATURE
// header's worth; the rest is the JSON-RPC envelope.
const mcpMaxBodyBytes = MaxBodyBytes + x402.MaxPaymentHeaderBytes + 4096

// newMCPServer is the endpoint's server and tool table for this config.
func (h *Handler) newMCPServer() *mcp.Server {
	price := fmt.Sprintf("%s USD in USDC on %s", h.Price, h.Network)
	if h.Free {
		price = "free on this server"
	}
	return &mcp.Server{
		Name:    "promptwall prompt_scan",
		Version: h.rulesID(),
		Instructions: "Scans a text for prompt injection with the published rulebook. " +
			"precheck_text gives the verdict free, a limited number of times per wallet; " +
			"scan_text gives the full result and is paid with x402 (" + price + ").",
		MaxBodyBytes: mcpMaxBodyBytes,
		OnError: func(tool string, err error) {
			h.logger.Error("mcp tool failed", zap.String("tool", tool), zap.Error(err))
		},
		Tools: []mcp.Tool{
			{
				Name:  "precheck_text",
				Title: "Prompt-injection pre-check (free)",
				Description: fmt.Sprintf("Free verdict (safe, suspicious or malicious) for a text about to be given to an LLM. "+
					"Limited per caller wallet: %s. Returns {verdict, rules_id}.", h.quotaText()),
				InputSchema: json.RawMessage(`{"type":"object","properties":{` +
					`"text":{"type":"string","maxLength":8000,"description":"the text to check, at most 8000 UTF-16 units"},` +
					`"caller":{"type":"string","description":"your Solana wallet address (base58); free pre-checks are counted per wallet"}},` +
					`"required":["text","caller"]}`),
				Call: h.precheckTool,
			},
			{
				Name:  "scan_text",
				Title: "Prompt-injection scan (paid)",
				Description: "Full prompt-injection scan of a text: verdict, score, matched rules and spans, category counts. " +
					"Costs " + price + ", paid with x402: call without payment to get the payment requirements, " +
					`then again with the PaymentPayload in _meta["x402/payment"].`,
				InputSchema: json.RawMessage(`{"type":"object","properties":{` +
					`"text":{"type":"string","maxLength":8000,"description":"the text to scan, at most 8000 UTF-16 units"}},` +
					`"required":["text"]}`),
				Call: h.scanTool,
			},
		},
	}
}

// quotaText says the pre-check limits in words.
func (h *Handler) quotaText() string {
	switch {
	case h.limit == 0 && h.interval == 0:
		return "no limits on this server"
	case h.limit == 0:
		return fmt.Sprintf("one every %v", h.interval)
	case h.interval == 0:
		return fmt.Sprintf("%d a UTC day", h.limit)
	}
	return fmt.Sprintf("%d a UTC day, one every %v", h.limit, h.interval)
}

// serveMCP answers the MCP endpoint.
func (h *Handler) serveMCP(w http.ResponseWriter, r *http.Request) {
	h.mcpServer.ServeHTTP(w, r)
}

// precheckTool is precheck_text: servePrecheck with the arguments as body.
func (h *Handler) precheckTool(ctx context.Context, args, _ json.RawMessage) (*mcp.Result, error) {
	ans, err := h.inner(ctx, args, "", h.servePrecheck)
	if err != nil {
		return nil, err
	}
	if ans.status != http.StatusOK {
		return ans.errorResult(), nil
	}
	return ans.okResult(), nil
}

// scanTool is scan_text: serveScan with the arguments as body and the
// payment of _meta["x402/payment"] as its PAYMENT-SIGNATURE.
func (h *Handler) scanTool(ctx context.Context, args, meta json.RawMessage) (*mcp.Result, error) {
	var m map[string]json.RawMessage
	if meta != nil {
		if err := json.Unmarshal(meta, &m); err != nil {
			return nil, mcp.InvalidParams(`"_meta" must be an object`)
		}
	}
	sig := ""
	if raw, ok := m[metaPayment]; ok && string(raw) != "null" {
		// /scan decodes it and says what is wrong with it; the size
		// bound of the header applies to the encoded form as there.
		sig = base64.StdEncoding.EncodeToString(raw)
	}
	ans, err := h.inner(ctx, args, sig, h.serveScan)
	if err != nil {
		return nil, err
	}
	switch {
	case ans.status == http.StatusOK:
		res := ans.okResult()
		ans.addPaymentResponse(res)
		return res, nil
	case ans.status == http.StatusPaymentRequired:
		return ans.paymentRequired()
	case ans.status == http.StatusBadRequest && ans.errorCode() == codeInvalidPayment:
		// Not a payment at all. The x402 binding answers an unusable
		// payment with the requirements, so the client can pay again:
		// ask /scan for them, without the payment, and give its reason.
		offer, err := h.inner(ctx, args, "", h.serveScan)
		if err != nil {
			return nil, err
		}
		if offer.status != http.StatusPaymentRequired {
			return offer.errorResult(), nil
		}
		var pr x402.PaymentRequired
		if err := json.Unmarshal(offer.body, &pr); err != nil {
			return nil, fmt.Errorf("reading our own payment requirements: %w", err)
		}
		pr.Error = codeInvalidPayment + ": " + ans.errorMessage()
		return paymentRequiredResult(pr)
	}
	res := ans.errorResult()
	ans.addPaymentResponse(res)
	return res, nil
}

// inner runs one of the HTTP handlers on an in-memory POST whose body is
// body, for the URL, host and TLS state of the MCP request, so the offer's
// resource and the logs are what /scan would make of it.
func (h *Handler) inner(ctx context.Context, body json.RawMessage, paymentSignature string,
	serve func(http.ResponseWriter, *http.Request)) (*capture, error) {
	outer := mcp.HTTPRequest(ctx)
	if outer == nil {
		return nil, fmt.Errorf("no HTTP request in the tool call's context")
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, outer.URL.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building the inner request: %w", err)
	}
	r.Host, r.TLS, r.RemoteAddr, r.RequestURI = outer.Host, outer.TLS, outer.RemoteAddr, outer.RequestURI
	r.Header.Set("Content-Type", "application/json")
	if paymentSignature != "" {
		r.Header.Set(x402.HeaderPaymentSignature, paymentSignature)
	}
	ans := &capture{header: http.Header{}}
	serve(ans, r)
	return ans, nil
}

// capture is an in-memory HTTP response of servePrecheck or serveScan.
type capture struct {
	header http.Header
	status int
	body   []byte
}

func (a *capture) Header() http.Header { return a.header }

func (a *capture) WriteHeader(code int) {
	if a.status == 0 {
		a.status = code
	}
}

func (a *capture) Write(b []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	a.body = append(a.body, b...)
	return len(b), nil
}

// json is the body without writeJSON's final newline.
func (a *capture) json() json.RawMessage { return bytes.TrimRight(a.body, "\n") }

// okResult is a successful tool result: the body as structured and text
// content.
func (a *capture) okResult() *mcp.Result {
	return &mcp.Result{
		Content:           []mcp.Content{mcp.TextContent(string(a.json()))},
		StructuredContent: a.json(),
	}
}

// errorResult is a failed tool result: the error body as structured
// content, its message as text.
func (a *capture) errorResult() *mcp.Result {
	msg := a.errorMessage()
	if msg == "" {
		msg = http.StatusText(a.status)
	}
	res := &mcp.Result{IsError: true, Content: []mcp.Content{mcp.TextContent(msg)}}
	if json.Valid(a.json()) && len(a.json()) > 0 {
		res.StructuredContent = a.json()
	}
	return res
}

func (a *capture) errorBody() errorBody {
	var e apiError
	json.Unmarshal(a.body, &e) // an empty code and message if not an error body
	return e.Error
}

func (a *capture) errorCode() string    { return a.errorBody().Code }
func (a *capture) errorMessage() string { return a.errorBody().Message }

// paymentRequired is the tool result of a 402: the PaymentRequired body,
// with the settlement's response when there was one.
func (a *capture) paymentRequired() (*mcp.Result, error) {
	var pr x402.PaymentRequired
	if err := json.Unmarshal(a.body, &pr); err != nil {
		return nil, fmt.Errorf("reading our own payment requirements: %w", err)
	}
	res, err := paymentRequiredResult(pr)
	if err != nil {
		return nil, err
	}
	a.addPaymentResponse(res)
	return res, nil
}

// paymentRequiredResult is the x402 tool-result binding's payment
// required: isError, PaymentRequired as structuredContent and as JSON text.
func paymentRequiredResult(pr x402.PaymentRequired) (*mcp.Result, error) {
	b, err := json.Marshal(pr)
	if err != nil {
		return nil, fmt.Errorf("encoding payment requirements: %w", err)
	}
	return &mcp.Result{
		IsError:           true,
		Content:           []mcp.Content{mcp.TextContent(string(b))},
		StructuredContent: json.RawMessage(b),
	}, nil
}

// addPaymentResponse puts the captured PAYMENT-RESPONSE, if any, in the
// result's _meta["x402/payment-response"].
func (a *capture) addPaymentResponse(res *mcp.Result) {
	h := a.header.Get(x402.HeaderPaymentResponse)
	if h == "" {
		return
	}
	sr, err := x402.DecodePaymentResponse(h)
	if err != nil {
		return // our own header; Header() always encodes
	}
	if res.Meta == nil {
		res.Meta = map[string]any{}
	}
	res.Meta[metaPaymentResponse] = sr
}
