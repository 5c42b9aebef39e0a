package mcpmsg

import (
	"encoding/json"
	"strings"
)

// JSON-RPC 2.0's own error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
)

// ErrorData is the data member of an error a guard answers with: a machine
// code and what matched, never the text.
type ErrorData struct {
	Code       string   `json:"code"`
	Rules      []string `json:"rules,omitempty"`
	Categories []string `json:"categories,omitempty"`
	Reason     string   `json:"reason,omitempty"`
}

// ErrorResponse returns the JSON-RPC error response to id (null when id is
// nil or empty).
func ErrorResponse(id json.RawMessage, code int, message string, data *ErrorData) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	type rpcError struct {
		Code    int        `json:"code"`
		Message string     `json:"message"`
		Data    *ErrorData `json:"data,omitempty"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, message, data}})
	return b
}

// ErrorBatch returns the error responses to ids, as one message when there
// is one id and as a batch (array) when batch is set or there are several.
func ErrorBatch(ids []json.RawMessage, batch bool, code int, message string, data *ErrorData) []byte {
	if len(ids) == 1 && !batch {
		return ErrorResponse(ids[0], code, message, data)
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(ErrorResponse(id, code, message, data))
	}
	b.WriteByte(']')
	return []byte(b.String())
}

// Requests returns the ids of the requests of b: the messages that wait for an answer.
func (b *Body) Requests() []json.RawMessage {
	var ids []json.RawMessage
	for _, m := range b.Messages {
		if m.Kind == Request {
			ids = append(ids, m.ID)
		}
	}
	return ids
}

// methods are the MCP method names (2025-11-25 and earlier), for labels
// that must stay bounded.
var methods = map[string]bool{
	"initialize": true, "ping": true,
	"tools/list": true, "tools/call": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"prompts/list": true, "prompts/get": true,
	"completion/complete": true, "logging/setLevel": true,
	"sampling/createMessage": true, "elicitation/create": true, "roots/list": true,
	"tasks/get": true, "tasks/result": true, "tasks/list": true, "tasks/cancel": true,
	"notifications/initialized": true, "notifications/cancelled": true, "notifications/progress": true,
	"notifications/message": true, "notifications/resources/updated": true,
	"notifications/resources/list_changed": true, "notifications/tools/list_changed": true,
	"notifications/prompts/list_changed": true, "notifications/roots/list_changed": true,
	"notifications/elicitation/complete": true, "notifications/tasks/status": true,
}

// MethodLabel returns method when it is an MCP method name, else "other".
func MethodLabel(method string) string {
	if methods[method] {
		return method
	}
	return "other"
}
