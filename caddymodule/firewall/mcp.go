package firewall

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/promptwall/promptwall/bufpool"
	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/mcpmsg"
)

// MCPOptions turns a route into the guard of an MCP server (Streamable
// HTTP transport, at any path): every request there is read as JSON-RPC,
// and the LLM API logic does not run. Both directions are scanned with
// on_malicious, on_suspicious, rule and category (response_on_* are for
// LLM API answers only): the client's messages (tool calls, its answers to
// the server's requests) and the server's (tool lists, tool results,
// resources, prompts, sampling and elicitation requests, notifications),
// every string value and object key of their params, result and error,
// whatever Roles says. A JSON answer and each SSE event are bounded by
// max_body. A redirect of the server's is refused, and the body of its
// HTTP errors is scanned as text (the SDK clients raise it); the route
// takes no WebSocket (websocket must be refuse).
type MCPOptions struct {
	// PinTools refuses a session's changed tool list: the first tools/list
	// answer of each session (Mcp-Session-Id and host; per client address
	// without a session id), page by page (cursor), is remembered by a keyed
	// hash, and a later answer that differs is replaced by a JSON-RPC error
	// with code -32091 (a "rug pull": a server that changes its tools after
	// they were approved), on any of the session's streams. Answers are
	// matched to the client's pending requests by id value, and a result
	// that answers none is dropped. At most 10000 sessions are remembered
	// (the oldest is forgotten first), 64 pending requests each; a DELETE
	// of the session forgets it. No text is kept. Default: false.
	PinTools bool `json:"pin_tools,omitempty"`
}

// JSON-RPC error codes of the MCP guard (server errors, -32000 to -32099,
// clear of the codes the MCP SDKs use themselves).
const (
	mcpErrBlocked      = -32090 // prompt injection in a message
	mcpErrToolsChanged = -32091 // pin_tools: the session's tool list changed
	mcpErrNotScanned   = -32092 // a message that cannot be scanned
)

// Codes in the data of the MCP guard's JSON-RPC errors.
const (
	CodeMCPBlocked      = "mcp_prompt_injection"
	CodeMCPToolsChanged = "mcp_tool_list_changed"
	CodeMCPNotScanned   = "mcp_not_scanned"
	CodeMCPInvalid      = "mcp_invalid_message"
)

// mcpAPI is the api of the MCP guard's logs.
const mcpAPI = "mcp"

// serveMCP guards one request on an MCP route: its body, then the answer.
func (f *Firewall) serveMCP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	hs := f.hosts.of(r)
	if r.Method == http.MethodDelete && f.pins != nil {
		f.pins.forget(pinSession(r))
	}
	// Only identity answers are framed as they stream.
	r.Header.Set("Accept-Encoding", "identity")
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		caddyhttp.SetVar(r.Context(), VarAction, actionPass)
		f.metrics.request(phaseRequest, hs, "none", actionPass)
		return f.nextMCP(w, r, next, nil)
	}
	if r.ContentLength > f.MaxBody {
		return f.refuseMCP(w, r, tooLarge(f.MaxBody))
	}
	// The same header rules as an LLM API's body: a charset other than
	// UTF-8 is refused (a server that decodes by it reads another text).
	form, fe := requestForm(r)
	if fe != nil {
		return f.refuseMCP(w, r, fe)
	}
	raw, body, decoded, err := readBody(r.Body, r.ContentLength, r.Header.Get("Content-Encoding"), f.MaxBody)
	if err != nil {
		var fe *failure
		if errors.As(err, &fe) {
			return f.refuseMCP(w, r, fe)
		}
		return caddyhttp.Error(http.StatusBadRequest, err)
	}
	scrubTrailers(r)
	if len(raw) == 0 {
		caddyhttp.SetVar(r.Context(), VarAction, actionPass)
		f.metrics.request(phaseRequest, hs, "none", actionPass)
		return f.nextMCP(w, r, next, nil)
	}
	if form.ascii && !isASCII(body) {
		return f.refuseMCP(w, r, errNotASCII)
	}
	start := time.Now()
	msg, err := mcpmsg.Parse(body)
	if err != nil {
		return f.refuseMCP(w, r, &failure{http.StatusBadRequest, CodeMCPInvalid, "Request refused by prompt firewall: " + err.Error()})
	}
	var client uint64
	if f.cache != nil {
		client = f.cache.clientKey(r)
	}
	out := f.scan(msg.Doc, client)
	f.metrics.observeScan(phaseRequest, hs, time.Since(start), out)
	if out.refusal != nil {
		return f.refuseMCP(w, r, out.refusal)
	}
	act, repl := out.act, map[int]string(nil)
	if act == doSanitize {
		repl, act = f.sanitize(msg.Doc, out)
	}
	action := act.name()
	f.label(r, out, action)
	if out.verdict != engine.Safe {
		f.logMCP(r, phaseRequest, mcpMethods(msg), out, action)
	}
	f.metrics.request(phaseRequest, hs, out.verdict, action)
	switch action {
	case ActionBlock:
		ids := msg.Requests()
		data := &mcpmsg.ErrorData{Code: CodeMCPBlocked, Rules: out.rules, Categories: out.categories}
		text := blockMessage(out)
		status := http.StatusOK
		if len(ids) == 0 {
			// A notification or the client's answer to the server: no id to answer.
			status, ids = http.StatusBadRequest, []json.RawMessage{nil}
		}
		writeRPC(w, status, mcpmsg.ErrorBatch(ids, msg.Batch, mcpErrBlocked, text, data))
		return nil
	case ActionSanitize:
		setRewritten(r, msg.Rewrite(repl, out.edits), decoded)
		bufpool.Put(raw)
		return f.nextMCP(w, r, next, msg)
	}
	ub := newUpstreamBody(raw)
	setBodyReader(r, ub, len(raw))
	err = f.nextMCP(w, r, next, msg)
	ub.release()
	return err
}

// refuseMCP answers a request that cannot be scanned with a JSON-RPC error
// (id null: its ids are unknown), with the failure's status.
func (f *Firewall) refuseMCP(w http.ResponseWriter, r *http.Request, fe *failure) error {
	caddyhttp.SetVar(r.Context(), VarAction, actionRefuse)
	f.metrics.request(phaseRequest, f.hosts.of(r), "none", actionRefuse)
	if c := f.logger.Check(zapcore.InfoLevel, "request refused"); c != nil {
		c.Write(zap.String("phase", "request"), zap.String("api", mcpAPI), zap.Int("status", fe.status), zap.String("reason", fe.code))
	}
	code := mcpErrNotScanned
	if fe.code == CodeMCPInvalid || fe.code == errInvalidJSON.code {
		code = mcpmsg.CodeParseError
	}
	writeRPC(w, fe.status, mcpmsg.ErrorResponse(nil, code, fe.message, &mcpmsg.ErrorData{Code: fe.code}))
	return nil
}

// writeRPC sends a JSON-RPC body the firewall wrote itself.
func writeRPC(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Del("Content-Encoding")
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// logMCP writes the one entry of a flagged MCP message: what matched and
// where, never the text.
func (f *Firewall) logMCP(r *http.Request, p phase, method string, o *outcome, action string) {
	f.logMatches(r, p, mcpAPI, o, action, zap.String("method", method))
}

// mcpMethods names the methods of a body's messages, as known MCP names.
func mcpMethods(msg *mcpmsg.Body) string {
	var names []string
	for _, m := range msg.Messages {
		name := m.Kind.String()
		if m.Method != "" {
			name = mcpmsg.MethodLabel(m.Method)
		}
		names = appendNew(names, name)
	}
	return strings.Join(names, ",")
}
