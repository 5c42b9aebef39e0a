package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
)

// Protocol revisions this server speaks, newest first.
const (
	Version20250618 = "2025-06-18"
	Version20250326 = "2025-03-26"
)

// Versions are the protocol revisions served, newest first.
var Versions = []string{Version20250618, Version20250326}

// Tool is one entry of the tool table.
type Tool struct {
	// Name is the tool's unique name, as clients call it.
	Name string
	// Title is a display name (2025-06-18 and later).
	Title string
	// Description tells a model what the tool does and when to use it.
	Description string
	// InputSchema is the JSON Schema of the arguments, an object schema.
	InputSchema json.RawMessage
	// OutputSchema, if set, is the JSON Schema of StructuredContent in
	// successful results (2025-06-18 and later).
	OutputSchema json.RawMessage
	// Call runs the tool. args is the arguments object ({} when absent),
	// meta the request's params._meta object (nil when absent). A
	// failure the caller should see and may act on is a Result with
	// IsError; an *Error answers with that JSON-RPC error; any other error
	// is answered as an internal error without its text.
	Call func(ctx context.Context, args, meta json.RawMessage) (*Result, error)
}

// Content is one content block of a tool result. Only text is produced.
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// TextContent is a text content block.
func TextContent(s string) Content { return Content{Type: "text", Text: s} }

// Result is a tool's answer, CallToolResult on the wire.
type Result struct {
	Content           []Content      `json:"content"`
	StructuredContent any            `json:"structuredContent,omitempty"`
	IsError           bool           `json:"isError,omitempty"`
	Meta              map[string]any `json:"_meta,omitempty"`

	// Sent, if set, is told once the answer carrying this result was
	// written to the connection (true) or could not be (false): a tool
	// whose result must be given exactly once learns whether it was.
	Sent func(delivered bool) `json:"-"`
}

// toolWire is a tool as tools/list describes it.
type toolWire struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type initializeResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	ServerInfo      implementation `json:"serverInfo"`
	Instructions    string         `json:"instructions,omitempty"`
}

// negotiate picks the revision to answer a client that asked for
// requested: the same when served, else the newest served, as the
// lifecycle's version negotiation says.
func negotiate(requested string) string {
	if slices.Contains(Versions, requested) {
		return requested
	}
	return Versions[0]
}

// call answers one request. version is the revision the request is under
// (its MCP-Protocol-Version header, 2025-03-26 without one).
func (s *Server) call(ctx context.Context, msg message, version string) (any, *Error) {
	switch msg.method {
	case "initialize":
		var p struct {
			ProtocolVersion *string `json:"protocolVersion"`
		}
		if err := json.Unmarshal(orEmpty(msg.params), &p); err != nil || p.ProtocolVersion == nil {
			return nil, InvalidParams(`initialize needs a string "protocolVersion"`)
		}
		return initializeResult{
			ProtocolVersion: negotiate(*p.ProtocolVersion),
			Capabilities:    map[string]any{"tools": struct{}{}},
			ServerInfo:      implementation{Name: s.Name, Version: s.Version},
			Instructions:    s.Instructions,
		}, nil
	case "ping":
		return struct{}{}, nil
	case "tools/list":
		var p struct {
			Cursor *string `json:"cursor"`
		}
		if err := json.Unmarshal(orEmpty(msg.params), &p); err != nil {
			return nil, InvalidParams("tools/list params are malformed")
		}
		if p.Cursor != nil {
			// The list is never paged, so no cursor was handed out.
			return nil, InvalidParams("unknown cursor")
		}
		return map[string]any{"tools": s.list(version)}, nil
	case "tools/call":
		return s.callTool(ctx, msg.params)
	}
	return nil, &Error{Code: CodeMethodNotFound, Message: "method not found: " + truncate(msg.method, 64)}
}

// list is the tool table as tools/list sends it. Title and OutputSchema
// are 2025-06-18 fields and are left out for older clients.
func (s *Server) list(version string) []toolWire {
	tools := make([]toolWire, 0, len(s.Tools))
	for _, t := range s.Tools {
		w := toolWire{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
		if w.InputSchema == nil {
			w.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		if version != Version20250326 {
			w.Title, w.OutputSchema = t.Title, t.OutputSchema
		}
		tools = append(tools, w)
	}
	return tools
}

// callTool runs tools/call: the named tool with its arguments and _meta.
func (s *Server) callTool(ctx context.Context, params json.RawMessage) (any, *Error) {
	var p struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(orEmpty(params), &p); err != nil || p.Name == nil {
		return nil, InvalidParams(`tools/call needs a string "name"`)
	}
	i := slices.IndexFunc(s.Tools, func(t Tool) bool { return t.Name == *p.Name })
	if i < 0 {
		return nil, InvalidParams("unknown tool: %s", truncate(*p.Name, 64))
	}
	args := p.Arguments
	switch {
	case args == nil || string(args) == "null":
		args = json.RawMessage("{}")
	case args[0] != '{':
		return nil, InvalidParams(`"arguments" must be an object`)
	}
	meta := p.Meta
	switch {
	case meta == nil || string(meta) == "null":
		meta = nil
	case meta[0] != '{':
		return nil, InvalidParams(`"_meta" must be an object`)
	}
	res, err := s.Tools[i].Call(ctx, args, meta)
	if err != nil {
		if rpcErr, ok := errors.AsType[*Error](err); ok {
			return nil, rpcErr
		}
		if s.OnError != nil {
			s.OnError(s.Tools[i].Name, err)
		}
		return nil, &Error{Code: CodeInternalError, Message: "the tool failed"}
	}
	if res == nil {
		res = &Result{}
	}
	if res.Content == nil {
		out := *res
		out.Content = []Content{}
		res = &out
	}
	return res, nil
}

func orEmpty(params json.RawMessage) json.RawMessage {
	if params == nil {
		return json.RawMessage("{}")
	}
	return params
}

// truncate bounds a client-chosen string echoed in an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
