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
//     structuredContent is the x402 v2 PaymentRequired document (the one
//     /scan sends in PAYMENT-REQUIRED, its error field saying why, but with
//     the MCP endpoint as resource and the bazaar extension describing the
//     scan_text tool) and whose content[0].text is that document as JSON
//     text.
//  2. The client builds a PaymentPayload for one of accepts (exact scheme,
//     a signed Solana USDC transfer) and calls scan_text again with the
//     same arguments and params._meta["x402/payment"] holding the
//     PaymentPayload object (not base64: the JSON object itself).
//  3. The server takes that payment through paidScan, the money path
//     POST /scan uses for a PAYMENT-SIGNATURE header (the payload is handed
//     on as base64 of its JSON, exactly what that header would carry):
//     match, check, the payment's state in the store, verify, settle, the
//     ledger row with the settled state, and only then the result.
//     Success is a tool result with isError false, the full result of
//     docs/SPEC.md section 8 as structuredContent and as content[0].text, and the
//     settlement's SettleResponse in result._meta["x402/payment-response"].
//     The payment is marked delivered only once that MCP answer was
//     written to the connection; if it was not, the same call again gets
//     the result, once.
//  4. A refused payment (invalid, already used, failed settlement) is
//     again the PaymentRequired tool result with the reason in its error
//     field; when the facilitator answered a settlement,
//     _meta["x402/payment-response"] carries its SettleResponse too. A
//     payment that is not a PaymentPayload at all also gets the
//     PaymentRequired result (reason "invalid_payment: ..."), so the
//     client can pay afresh. The same payment sent again after its result
//     was delivered buys nothing: the call is refused with
//     duplicate_settlement.
//  5. Failures that are not about the payment are tool results with
//     isError true, the /scan error body {"error": {"code", "message"}} as
//     structuredContent and its message as content[0].text, and no result:
//     the text's own faults (text_too_large, ...) before any payment is
//     asked for, facilitator_unavailable or store_unavailable (no payment
//     taken, or retry with the same payment), payment_in_progress and
//     payment_conflict (409 on /scan), and ledger_unavailable (settled,
//     with its SettleResponse in _meta; the same call again gets the
//     result once the row is written).
//
// The text goes from the tool's arguments to the body checks and the
// engine and nowhere else; nothing here logs it. The MCP answer's status
// is counted under the endpoint "mcp"; the payment outcomes and their log
// lines are paidScan's, as for /scan.
//
// The tools have no outputSchema: the SDK clients validate
// structuredContent against it on error results too, and x402 puts the
// PaymentRequired document there.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
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

// scanToolInput is scan_text's inputSchema, in tools/list and in the
// offer's bazaar description.
var scanToolInput = json.RawMessage(`{"type":"object","properties":{` +
	`"text":{"type":"string","maxLength":8000,"description":"the text to scan, at most 8000 UTF-16 units"}},` +
	`"required":["text"]}`)

// newMCPServer is the endpoint's server and tool table for this config.
func (h *Handler) newMCPServer() (*mcp.Server, error) {
	ext, err := mcpExtensions(h.extensions, h.rulesID())
	if err != nil {
		return nil, err
	}
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
		// The pages cors_origins lets call /scan may call the tools.
		AllowedOrigins: h.corsOrigins(),
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
				Description: "Full prompt-injection scan of a text: verdict, matched rules with their spans, category counts and a sanitized copy. " +
					"Costs " + price + ", paid with x402: call without payment to get the payment requirements, " +
					`then again with the PaymentPayload in _meta["x402/payment"].`,
				InputSchema: scanToolInput,
				Call: func(ctx context.Context, args, meta json.RawMessage) (*mcp.Result, error) {
					return h.scanTool(ctx, args, meta, ext)
				},
			},
		},
	}, nil
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

// precheckTool is precheck_text: servePrecheck with the arguments as
// body, so its checks and its quota are the endpoint's own.
func (h *Handler) precheckTool(ctx context.Context, args, _ json.RawMessage) (*mcp.Result, error) {
	outer := mcp.HTTPRequest(ctx)
	if outer == nil {
		return nil, errNoRequest
	}
	c := newCapture()
	h.servePrecheck(c, innerRequest(ctx, outer, args))
	if c.status != http.StatusOK {
		return c.errorResult(), nil
	}
	return &mcp.Result{
		Content:           []mcp.Content{mcp.TextContent(string(c.json()))},
		StructuredContent: c.json(),
	}, nil
}

// scanTool is scan_text with ext, the offer's extensions for the tool:
// the body checks of POST /scan, then paidScan,
// the money path every transport shares, with the payment of
// _meta["x402/payment"] handed on as PAYMENT-SIGNATURE would carry it. A
// paid result counts as delivered only once the MCP answer holding it was
// written (Result.Sent); if it was not, a retry with the same payment
// gets it.
func (h *Handler) scanTool(ctx context.Context, args, meta json.RawMessage, ext map[string]json.RawMessage) (*mcp.Result, error) {
	sig, err := paymentOf(meta)
	if err != nil {
		return nil, err
	}
	outer := mcp.HTTPRequest(ctx)
	if outer == nil {
		return nil, errNoRequest
	}
	c := newCapture()
	req, ok := readRequest(c, innerRequest(ctx, outer, args), false)
	if !ok {
		return c.errorResult(), nil
	}
	if h.Free {
		res := h.scan(req.Text)
		h.logRequest("mcp", http.StatusOK, zap.String("tool", "scan_text"), zap.Bool("free", true),
			zap.String("verdict", string(res.Verdict)), zap.Any("category_counts", res.CategoryCounts))
		return jsonResult(scanResponse{RulesID: h.rulesID(), Result: res})
	}
	// As for POST /scan: once a payment is on its way, the client hanging
	// up must not leave it half-handled.
	pctx := context.WithoutCancel(ctx)
	offer, err := h.offer(pctx, outer)
	if err != nil {
		h.metrics.payment(outcomeUnavailable)
		h.logger.Warn("facilitator unavailable", zap.String("while", "building the payment requirements"), zap.Error(err))
		return errorResult(codeFacilitatorUnavail, "the payment facilitator is unavailable; no payment was taken, try again shortly"), nil
	}
	offer.Extensions = ext
	if sig == "" {
		h.metrics.payment(outcomeRequired)
		return paymentRequiredResult(offer, `_meta["x402/payment"] is required`)
	}
	return h.toolAnswer(offer, h.paidScan(pctx, offer, sig, req.Text))
}

// mcpExtensions are the extensions of scan_text's offers: those of
// POST /scan (base, shared and never changed) with the bazaar description
// of the scan_text tool (bazaar.md, input type "mcp") in place of the
// endpoint's: a catalog must list the tool, not a JSON body POSTed to the
// MCP endpoint. Built once per config, like base.
func mcpExtensions(base map[string]json.RawMessage, rulesID string) (map[string]json.RawMessage, error) {
	example, err := scanOutputExample(rulesID)
	if err != nil {
		return nil, err
	}
	type obj = map[string]any
	bazaar, err := json.Marshal(obj{
		"info": obj{
			"input": obj{"type": "mcp", "toolName": "scan_text", "transport": "streamable-http",
				"inputSchema": scanToolInput, "example": scanBodyExample},
			"output": obj{"type": "json", "example": example},
		},
		"schema": obj{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type":    "object",
			"properties": obj{
				"input": obj{
					"type": "object",
					"properties": obj{
						"type":        obj{"type": "string", "const": "mcp"},
						"toolName":    obj{"type": "string"},
						"description": obj{"type": "string"},
						"transport":   obj{"type": "string", "enum": []string{"streamable-http", "sse"}},
						"inputSchema": obj{"type": "object"},
						"example":     obj{"type": "object"},
					},
					"required":             []string{"type", "toolName", "inputSchema"},
					"additionalProperties": false,
				},
				"output": obj{"type": "object", "properties": obj{"type": obj{"type": "string"}, "example": obj{}},
					"required": []string{"type"}},
			},
			"required": []string{"input"},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("building the bazaar extension of scan_text: %w", err)
	}
	ext := maps.Clone(base)
	if ext == nil {
		ext = map[string]json.RawMessage{}
	}
	ext[x402.ExtensionBazaar] = bazaar
	return ext, nil
}

var errNoRequest = errors.New("no HTTP request in the tool call's context")

// paymentOf is the payment of _meta["x402/payment"] in the form
// PAYMENT-SIGNATURE carries it (base64 of the JSON), or "" without one.
// paidScan decodes it and says what is wrong with it; the header's size
// bound applies to the encoded form, as there.
func paymentOf(meta json.RawMessage) (string, error) {
	if meta == nil {
		return "", nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(meta, &m); err != nil {
		return "", mcp.InvalidParams(`"_meta" must be an object`)
	}
	raw, ok := m[metaPayment]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}

// innerRequest is an in-memory POST of body for the URL, host and TLS
// state of the MCP request, for the HTTP endpoints' own body checks and
// handlers: the offer's resource and the logs are what /scan would make
// of it.
func innerRequest(ctx context.Context, outer *http.Request, body json.RawMessage) *http.Request {
	r := outer.Clone(ctx)
	r.Method = http.MethodPost
	r.Header = http.Header{"Content-Type": {"application/json"}}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength, r.TransferEncoding, r.GetBody = int64(len(body)), nil, nil
	return r
}
