package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// JSON-RPC 2.0 error codes used by MCP.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a JSON-RPC error. A tool's Call returns one to answer with that
// code; any other error is answered as CodeInternalError without its text.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("mcp: JSON-RPC error %d: %s", e.Code, e.Message) }

// InvalidParams is a CodeInvalidParams error with the given message.
func InvalidParams(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// DefaultMaxDepth bounds the nesting of arrays and objects in a message.
// MCP messages are a few levels deep; tool arguments are the caller's, but
// nothing this package serves needs more.
const DefaultMaxDepth = 64

// kind is what a message is, by the members it has.
type kind int

const (
	kindRequest      kind = iota // method and id
	kindNotification             // method, no id
	kindResponse                 // result or error, and id
)

// message is one decoded JSON-RPC message.
type message struct {
	kind   kind
	id     json.RawMessage // a JSON string or number, as sent; nil for notifications
	method string
	params json.RawMessage // a JSON object, or nil when absent or null
}

// parseMessage decodes one JSON-RPC 2.0 message. The error is an *Error
// (CodeParseError or CodeInvalidRequest); with it, id is the request's id
// when one could be read, so the answer can name it.
func parseMessage(body []byte, maxDepth int) (msg message, err *Error) {
	if !utf8.Valid(body) {
		// encoding/json would quietly replace the bad bytes; MCP
		// messages must be UTF-8.
		return msg, &Error{Code: CodeParseError, Message: "the message is not valid UTF-8"}
	}
	if d := depth(body); d > maxDepth {
		return msg, &Error{Code: CodeParseError, Message: fmt.Sprintf("the message nests deeper than %d levels", maxDepth)}
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if !json.Valid(body) {
			return msg, &Error{Code: CodeParseError, Message: "the body is not JSON"}
		}
		return msg, &Error{Code: CodeInvalidRequest, Message: "batches are not supported; send one JSON-RPC message per POST"}
	}
	// Raw members, so that names match exactly ("method", not "Method")
	// and an absent member can be told from a null one.
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if e := dec.Decode(&fields); e != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(e, &typeErr) {
			return msg, &Error{Code: CodeInvalidRequest, Message: "a JSON-RPC message must be a JSON object"}
		}
		return msg, &Error{Code: CodeParseError, Message: "the body is not JSON"}
	}
	if _, e := dec.Token(); e != io.EOF {
		return msg, &Error{Code: CodeParseError, Message: "the body holds more than one JSON value"}
	}
	if fields == nil {
		return msg, &Error{Code: CodeInvalidRequest, Message: "a JSON-RPC message must be a JSON object"}
	}

	if raw, ok := fields["id"]; ok {
		if !validID(raw) {
			return msg, &Error{Code: CodeInvalidRequest, Message: `"id" must be a string or a number`}
		}
		msg.id = raw
	}
	if v, ok := fields["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return msg, &Error{Code: CodeInvalidRequest, Message: `"jsonrpc" must be "2.0"`}
	}

	rawMethod, hasMethod := fields["method"]
	_, hasResult := fields["result"]
	_, hasError := fields["error"]
	switch {
	case hasMethod:
		if json.Unmarshal(rawMethod, &msg.method) != nil || len(rawMethod) == 0 || rawMethod[0] != '"' {
			return msg, &Error{Code: CodeInvalidRequest, Message: `"method" must be a string`}
		}
		if hasResult || hasError {
			return msg, &Error{Code: CodeInvalidRequest, Message: "a message cannot be both a request and a response"}
		}
		msg.kind = kindRequest
		if msg.id == nil {
			msg.kind = kindNotification
		}
		if p, ok := fields["params"]; ok && string(p) != "null" {
			if p[0] != '{' {
				return msg, &Error{Code: CodeInvalidRequest, Message: `"params" must be an object`}
			}
			msg.params = p
		}
	case hasResult != hasError && msg.id != nil:
		msg.kind = kindResponse
	default:
		return msg, &Error{Code: CodeInvalidRequest, Message: "the message is neither a request, a notification nor a response"}
	}
	return msg, nil
}

// validID reports whether raw is an id MCP allows: a string or a number,
// never null.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case c == '-' || (c >= '0' && c <= '9'):
		var n json.Number
		return json.Unmarshal(raw, &n) == nil
	}
	return false
}

// depth is the deepest nesting of arrays and objects in b, counted
// without decoding, so a hostile message costs one pass before the decoder
// sees it. Brackets inside strings do not count.
func depth(b []byte) int {
	d, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			d++
			deepest = max(deepest, d)
		case (c == ']' || c == '}') && d > 0:
			// Unbalanced closers must not pay for openers later.
			d--
		}
	}
	return deepest
}

// response is the wire form of an answer to a request.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// encodeResponse marshals the answer to id: result, or rpcErr when it is
// not nil. A nil id (the request's could not be read) is encoded as null.
// ok is false when result could not be encoded and an internal error
// stands in its place.
func encodeResponse(id json.RawMessage, result any, rpcErr *Error) (b []byte, ok bool) {
	if id == nil {
		id = json.RawMessage("null")
	}
	resp := response{JSONRPC: "2.0", ID: id, Result: result, Error: rpcErr}
	if rpcErr != nil {
		resp.Result = nil
	}
	b, err := json.Marshal(resp)
	if err != nil {
		// A result that JSON cannot represent is the server's fault;
		// the client still gets a well-formed answer to its id.
		b, _ = json.Marshal(response{JSONRPC: "2.0", ID: id,
			Error: &Error{Code: CodeInternalError, Message: "the result could not be encoded"}})
		return b, false
	}
	return b, true
}
