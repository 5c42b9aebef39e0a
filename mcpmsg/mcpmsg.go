// Package mcpmsg reads the JSON-RPC 2.0 messages of the Model Context Protocol
// (Streamable HTTP): it classifies a message or a batch, finds every text a
// model may read in it, rewrites chosen texts, and builds the JSON-RPC error
// responses a guard answers with.
//
// What is a text: every string value and every object key inside params (of
// requests and notifications), result (of responses) and error (of error
// responses), whatever the method: tool names, titles, descriptions and
// schemas (their property names are keys), tool results (content text,
// embedded resources, structuredContent), resources/read contents,
// prompts/get messages, sampling/createMessage messages and systemPrompt,
// elicitation/create message and requestedSchema, list descriptions, and
// whatever a later revision of the protocol adds. The walk is llmreq's
// generic one (every string and key, data URLs and inline text files
// decoded), so a shape this package does not know costs nothing in coverage.
// The envelope (jsonrpc, id, method and unknown root members, which no
// model reads) is not a text.
//
// Base64 media (the data of image and audio content) whose bytes are an
// image, audio or video is not a text: a model does not read it as
// instructions, and scanning megabytes of it would cost more than the rest
// of the message. Any other base64 (a resource's blob, data whose bytes are
// not media) is a text, whose base64 the engine also decodes and scans.
package mcpmsg

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/promptwall/promptwall/llmreq"
)

// Kind is what a message is.
type Kind uint8

const (
	Request      Kind = iota + 1 // a method and an id: answered
	Notification                 // a method, no id
	Response                     // an id and a result
	ErrorReply                   // an id (maybe null) and an error
)

func (k Kind) String() string {
	switch k {
	case Request:
		return "request"
	case Notification:
		return "notification"
	case Response:
		return "response"
	case ErrorReply:
		return "error"
	}
	return "invalid"
}

// MaxBatch bounds the messages of one batch.
const MaxBatch = 1024

// Errors of Parse, tested with errors.Is; all mean the body is not a
// JSON-RPC message a guard can vouch for.
var (
	ErrInvalidJSON = errors.New("mcpmsg: not valid JSON")
	ErrInvalidUTF8 = errors.New("mcpmsg: not valid UTF-8")
	ErrTooLarge    = errors.New("mcpmsg: too deep, too many texts or too many messages")
	ErrNotJSONRPC  = errors.New("mcpmsg: not a JSON-RPC 2.0 message")
)

// Message is one JSON-RPC message of a body.
type Message struct {
	Kind   Kind
	ID     json.RawMessage // the id as sent (a string or a number; null in an error response); nil in a notification
	Method string          // of a request or a notification
	Result json.RawMessage // of a response, as sent: the parsed bytes' own (valid while they are)
	Cursor string          // params.cursor of a request, when it is a string
}

// Body is a parsed POST body, answer or SSE event: one message or a batch.
type Body struct {
	Batch    bool
	Messages []Message

	// Doc holds the texts to scan (Doc.Texts, Doc.Documents) and rewrites
	// them. A text's Path starts at its message: params.tools[0].description,
	// result.content[1].text, a key's ending in #key; in a batch it is
	// prefixed with the message's index: [2].params.messages[0].content.text.
	Doc *llmreq.Request

	msgOf   []int // the message of each text of Doc.Texts
	wrapped bool  // Doc is of the body within [ ]
}

// Parse parses a JSON-RPC message or batch. It never panics; nesting, texts
// and size are bounded by llmreq's limits and the batch by MaxBatch.
func Parse(b []byte) (*Body, error) {
	if !utf8.Valid(b) {
		return nil, ErrInvalidUTF8
	}
	trimmed := bytes.TrimLeft(b, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, ErrInvalidJSON
	}
	body := &Body{Batch: trimmed[0] == '['}
	// The generic walk needs a root that is no API's request: an array.
	doc := b
	if !body.Batch {
		doc = make([]byte, 0, len(b)+2)
		doc = append(append(append(doc, '['), b...), ']')
		body.wrapped = true
	}
	req, err := llmreq.Parse("", doc)
	if err != nil {
		if errors.Is(err, llmreq.ErrInvalidJSON) {
			return nil, ErrInvalidJSON
		}
		return nil, ErrTooLarge
	}
	raws := [][]byte{b}
	if body.wrapped && !single(b) {
		// `{..},{..}` parses within [ ] as two messages: it is no JSON.
		return nil, ErrInvalidJSON
	}
	if body.Batch {
		var ok bool
		if raws, ok = elements(b); !ok {
			return nil, ErrInvalidJSON
		}
		if len(raws) == 0 {
			return nil, ErrNotJSONRPC
		}
		if len(raws) > MaxBatch {
			return nil, ErrTooLarge
		}
	}
	body.Messages = make([]Message, len(raws))
	for i, raw := range raws {
		if err := parseMessage(raw, &body.Messages[i]); err != nil {
			return nil, err
		}
	}
	body.Doc = req
	body.keepPayloads()
	return body, nil
}

// parseMessage reads one message's envelope. Keys match exactly and the
// last of duplicate keys wins, as JSON.parse and the MCP SDKs read them.
func parseMessage(raw []byte, m *Message) error {
	env := map[string][]byte{}
	if !members(raw, func(k string, v []byte) {
		switch k {
		case "jsonrpc", "id", "method", "params", "result", "error":
			env[k] = v
		}
	}) {
		return ErrNotJSONRPC
	}
	var version string
	if json.Unmarshal(env["jsonrpc"], &version) != nil || version != "2.0" {
		return ErrNotJSONRPC
	}
	id, hasID := env["id"]
	if hasID {
		switch c := firstByte(id); {
		case c == '"':
			// As the peer's JSON.stringify writes it back: "\u0061" is "a".
			var s string
			if json.Unmarshal(id, &s) != nil {
				return ErrNotJSONRPC
			}
			m.ID, _ = json.Marshal(s)
		case c == '-', '0' <= c && c <= '9':
			m.ID = bytes.Clone(id) // kept past the body's buffer
		case c == 'n':
			m.ID = json.RawMessage("null")
		default:
			return ErrNotJSONRPC
		}
	}
	if rawMethod, ok := env["method"]; ok {
		if json.Unmarshal(rawMethod, &m.Method) != nil || m.Method == "" {
			return ErrNotJSONRPC
		}
		if _, r := env["result"]; r {
			return ErrNotJSONRPC
		}
		m.Kind = Notification
		if hasID {
			if string(m.ID) == "null" {
				return ErrNotJSONRPC
			}
			m.Kind = Request
			if p, ok := env["params"]; ok {
				members(p, func(k string, v []byte) {
					if k == "cursor" {
						m.Cursor = ""
						_ = json.Unmarshal(v, &m.Cursor)
					}
				})
			}
		}
		return nil
	}
	res, hasResult := env["result"]
	_, hasError := env["error"]
	switch {
	case hasResult == hasError, !hasID:
		return ErrNotJSONRPC
	case hasResult:
		if string(m.ID) == "null" {
			return ErrNotJSONRPC
		}
		m.Kind, m.Result = Response, res
	default:
		m.Kind = ErrorReply
	}
	return nil
}

func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// keepPayloads leaves in Doc only the texts of params, result and error,
// without media bytes, and gives each its message.
func (b *Body) keepPayloads() {
	texts := b.Doc.Texts[:0]
	b.msgOf = b.msgOf[:0]
	for _, t := range b.Doc.Texts {
		n, rest, ok := payloadPath(t.Path)
		if !ok || isMedia(rest, &t) {
			continue
		}
		if b.wrapped {
			t.Path = rest
		}
		texts = append(texts, t)
		b.msgOf = append(b.msgOf, n)
	}
	b.Doc.Texts = texts
	docs := b.Doc.Documents[:0]
	for _, d := range b.Doc.Documents {
		if _, rest, ok := payloadPath(d.Path); ok {
			if b.wrapped {
				d.Path = rest
			}
			docs = append(docs, d)
		}
	}
	b.Doc.Documents = docs
	// Integer arrays are not prompts in MCP (a schema's enum, a result's numbers).
	b.Doc.TokenIDs = nil
}

// payloadPath splits a text path "[n].params..." into its message n and the
// rest, which must be within params, result or error.
func payloadPath(p string) (n int, rest string, ok bool) {
	if len(p) < 3 || p[0] != '[' {
		return 0, "", false
	}
	end := strings.IndexByte(p, ']')
	if end < 0 {
		return 0, "", false
	}
	n, err := strconv.Atoi(p[1:end])
	if err != nil {
		return 0, "", false
	}
	rest = strings.TrimPrefix(p[end+1:], ".")
	for _, m := range [...]string{"params", "result", "error"} {
		if s, found := strings.CutPrefix(rest, m); found && (s == "" || s[0] == '.' || s[0] == '[') {
			return n, rest, true
		}
	}
	return 0, "", false
}

// MessageOf returns the index in Messages of the message text i of Doc.Texts is in.
func (b *Body) MessageOf(i int) int {
	if i < 0 || i >= len(b.msgOf) {
		return -1
	}
	return b.msgOf[i]
}

// Rewrite returns the body with Doc.Texts[i] replaced by repl[i] (as
// llmreq.Request.AppendRewrite: every other byte kept; edits, nil for
// none, may say how each replacement is made).
func (b *Body) Rewrite(repl map[int]string, edits map[int][]llmreq.Edit) []byte {
	out := b.Doc.AppendRewrite(nil, repl, edits)
	if b.wrapped {
		return out[1 : len(out)-1]
	}
	return out
}

// single reports whether b, which parsed as an array's elements, is one
// value and white space.
func single(b []byte) bool {
	end := skipValue(b, skipSpace(b, 0))
	return end >= 0 && skipSpace(b, end) == len(b)
}
