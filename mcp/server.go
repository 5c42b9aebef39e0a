// Package mcp is the server side of the Model Context Protocol's
// Streamable HTTP transport, revisions 2025-06-18 and 2025-03-26, for a
// table of tools: initialize, ping, tools/list and tools/call.
//
// The server is stateless. It issues no Mcp-Session-Id and needs none: each
// POST carries one JSON-RPC message and is answered on its own, with one
// application/json body for a request and 202 Accepted for a notification
// or a response. It never streams (no text/event-stream answers) and sends
// no requests of its own, so GET, which would open a server-to-client
// stream, and DELETE, which would end a session, are answered 405 as the
// transport allows. A request that carries a session id is served like any
// other; the id is ignored.
//
// JSON-RPC batches, which 2025-03-26 allowed and 2025-06-18 removed, are
// refused with -32600: clients send single messages, and one POST must
// not start several tool calls at once.
//
// Hostile input is bounded before it is decoded: the body's size
// (MaxBodyBytes), its nesting (MaxDepth) and its encoding (UTF-8 only).
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// DefaultMaxBodyBytes bounds a POST body when Server.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 1 << 20

// HeaderProtocolVersion is the header in which a client names the
// negotiated revision on every request after initialize.
const HeaderProtocolVersion = "Mcp-Protocol-Version"

// Server is an http.Handler serving one MCP endpoint. Its fields must not
// change while it serves.
type Server struct {
	// Name and Version are the serverInfo of the initialize answer.
	Name    string
	Version string
	// Instructions, if set, tell the client's model how to use the
	// server (the initialize answer's instructions).
	Instructions string
	// Tools is the tool table, in the order tools/list gives it.
	Tools []Tool
	// MaxBodyBytes bounds a POST body; larger ones get 413. Default
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxDepth bounds the nesting of a message; deeper ones are a parse
	// error. Default DefaultMaxDepth.
	MaxDepth int
	// AllowedOrigins are origins (scheme://host[:port]) whose browser
	// pages may call the endpoint besides its own, or "*" for every one;
	// a request with any other Origin is refused with 403, as the
	// transport asks against DNS rebinding. Requests without an Origin
	// (non-browser clients) are always served.
	AllowedOrigins []string
	// OnError, if set, is told of errors tools returned that were
	// answered as internal errors, for logging.
	OnError func(tool string, err error)
}

type requestKey struct{}

// HTTPRequest is the HTTP request a tool call arrived in, from the context
// passed to Tool.Call, or nil.
func HTTPRequest(ctx context.Context) *http.Request {
	r, _ := ctx.Value(requestKey{}).(*http.Request)
	return r
}

// ServeHTTP answers one POST of one JSON-RPC message.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		// No server-initiated stream (GET) and no sessions to end
		// (DELETE): the transport's answer to both is 405.
		w.Header().Set("Allow", http.MethodPost)
		writeHTTPError(w, http.StatusMethodNotAllowed, "this MCP endpoint takes POST only")
		return
	}
	if !s.originAllowed(r) {
		writeHTTPError(w, http.StatusForbidden, "the request's Origin is not allowed")
		return
	}
	version := Version20250326 // what the transport says to assume without the header
	if v := r.Header.Get(HeaderProtocolVersion); v != "" {
		if !slices.Contains(Versions, v) {
			writeHTTPError(w, http.StatusBadRequest, "unsupported "+HeaderProtocolVersion+"; supported: "+strings.Join(Versions, ", "))
			return
		}
		version = v
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeHTTPError(w, http.StatusUnsupportedMediaType, "the body must be Content-Type: application/json")
		return
	}
	if !acceptsJSON(r.Header.Values("Accept")) {
		writeHTTPError(w, http.StatusNotAcceptable, "the answer is application/json; the Accept header excludes it")
		return
	}
	for _, line := range r.Header.Values("Content-Encoding") {
		for _, c := range strings.Split(line, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				// Nothing here inflates a body: a small one compressed
				// could be a large one decoded.
				w.Header().Set("Accept-Encoding", "identity")
				writeHTTPError(w, http.StatusUnsupportedMediaType, "send the body unencoded (identity)")
				return
			}
		}
	}

	limit := s.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	if r.ContentLength > limit {
		writeHTTPError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is over %d bytes", limit))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
			writeHTTPError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is over %d bytes", mbe.Limit))
			return
		}
		writeHTTPError(w, http.StatusBadRequest, "the body could not be read")
		return
	}

	maxDepth := s.MaxDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	msg, perr := parseMessage(body, maxDepth)
	if perr != nil {
		b, _ := encodeResponse(msg.id, nil, perr)
		writeJSON(w, http.StatusBadRequest, b)
		return
	}
	if msg.kind != kindRequest {
		// Notifications (initialized, cancelled, any other) and
		// responses need no answer; none changes this server's state.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	ctx := context.WithValue(r.Context(), requestKey{}, r)
	result, rpcErr := s.call(ctx, msg, version)
	b, encoded := encodeResponse(msg.id, result, rpcErr)
	err = writeJSON(w, http.StatusOK, b)
	if res, ok := result.(*Result); ok && res.Sent != nil {
		res.Sent(encoded && rpcErr == nil && err == nil)
	}
}

// originAllowed reports whether a browser page from the request's Origin
// may call: the endpoint's own host, or one of AllowedOrigins.
func (s *Server) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if slices.Contains(s.AllowedOrigins, "*") || slices.Contains(s.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// acceptsJSON reports whether the Accept values admit application/json.
// No Accept header admits anything.
func acceptsJSON(values []string) bool {
	if len(values) == 0 {
		return true
	}
	for _, line := range values {
		for _, part := range strings.Split(line, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err == nil && f == 0 {
					continue
				}
			}
			switch mt {
			case "application/json", "application/*", "*/*":
				return true
			}
		}
	}
	return false
}

// writeJSON answers status with a JSON-RPC message. Answers depend on the
// request, so no cache may keep them.
// The error is the write's: the client is gone.
func writeJSON(w http.ResponseWriter, status int, body []byte) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, err := w.Write(body)
	return err
}

// writeHTTPError answers a transport-level failure: an HTTP status with a
// JSON-RPC error that has no id, as the transport allows.
func writeHTTPError(w http.ResponseWriter, status int, msg string) {
	code := CodeInvalidRequest
	if status == http.StatusRequestEntityTooLarge {
		code = CodeParseError
	}
	b, _ := encodeResponse(nil, nil, &Error{Code: code, Message: msg})
	writeJSON(w, status, b)
}
