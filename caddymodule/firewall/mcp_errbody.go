package firewall

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/llmreq"
	"github.com/promptwall/promptwall/mcpmsg"
)

// What the MCP server's answer may be framed as, and its HTTP errors'
// bodies: what a client reads must be what the guard scans.

var (
	errAnswerRedirect = errors.New("a redirect")
	errAnswerNotSSE   = errors.New("an event stream line that is no SSE field")
	errAnswerUTF8     = errors.New("an error body that is not valid UTF-8")
	errAnswerCharset  = errors.New("unsupported charset")
)

// mediaType returns the lower-case media type of an answer's Content-Type
// lines and its charset parameter, or "" when there is none, it does not
// parse, or several lines disagree (a client's fetch joins them, and may
// find either name).
func mediaType(values []string) (mt, charset string) {
	if len(values) == 0 {
		return "", ""
	}
	for _, v := range values[1:] {
		if !strings.EqualFold(strings.TrimSpace(v), strings.TrimSpace(values[0])) {
			return "", ""
		}
	}
	mt, params, err := mime.ParseMediaType(values[0])
	if err != nil {
		return "", ""
	}
	return mt, params["charset"]
}

// sseFields reports whether every line of an event's raw bytes is empty, a
// comment or one of the fields SSE defines (data, event, id, retry; names
// are case-sensitive). An SSE client ignores any other line, but a client
// that reads the body as JSON (one that picks the format by a substring of
// the content type) takes it: a JSON body under text/event-stream is such a
// line, and is refused.
func sseFields(raw []byte) bool {
	raw = bytes.TrimPrefix(raw, []byte{0xEF, 0xBB, 0xBF})
	for len(raw) > 0 {
		line := raw
		next := len(raw)
		if i := bytes.IndexAny(raw, "\r\n"); i >= 0 {
			line, next = raw[:i], i+1
		}
		raw = raw[next:]
		if len(line) == 0 || line[0] == ':' {
			continue
		}
		name := line
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name = line[:i]
		}
		switch string(name) {
		case "data", "event", "id", "retry":
		default:
			return false
		}
	}
	return true
}

// errorBody scans the body of an HTTP error (status 400 and above) of the
// server's. A JSON-RPC message is scanned as any other. Anything else is
// what the SDK clients put in the error they raise ("Error POSTing to
// endpoint: <body>"): it is scanned as one text, as it came, and when it
// is JSON its strings and keys too. Blocked, it is replaced by the
// JSON-RPC errors for the client's requests (status kept: a 401 still asks
// for authorization); sanitized, the sanitized text is sent instead.
func (mw *mcpWriter) errorBody(body []byte) (out []byte, ok bool) {
	if _, err := mcpmsg.Parse(body); err == nil {
		return mw.message(body)
	}
	if !utf8.Valid(body) {
		mw.refuse(errAnswerUTF8)
		return nil, false
	}
	f := mw.f
	hs := f.hosts.of(mw.r)
	start := time.Now()
	doc := &llmreq.Request{Texts: []llmreq.Text{{Path: "body", Role: llmreq.RoleUnknown, Value: string(body)}}}
	if j, err := llmreq.Parse("", append(append([]byte{'['}, body...), ']')); err == nil {
		for _, t := range j.Texts {
			t.Role = llmreq.RoleUnknown
			doc.Texts = append(doc.Texts, t)
		}
	}
	o := f.scan(doc, mw.client)
	f.metrics.observeScan(phaseResponse, hs, time.Since(start), o)
	if o.refusal != nil {
		mw.refuse(o.refusal)
		return nil, false
	}
	act := o.act
	if act == doSanitize {
		for _, fl := range o.flagged {
			if fl.act >= doSanitize && fl.index != 0 {
				act = doBlock // a JSON string of the body cannot be rewritten in the raw text
				o.blockedAt = fl.path
			}
		}
	}
	var repl map[int]string
	if act == doSanitize {
		repl, act = f.sanitize(doc, o)
	}
	action := act.name()
	if o.verdict != engine.Safe {
		f.logMCP(mw.r, phaseResponse, "http_error", o, action)
	}
	f.metrics.request(phaseResponse, hs, o.verdict, action)
	switch act {
	case doBlock:
		mw.done, mw.sent = true, true
		ids := mw.ids
		if len(ids) == 0 {
			ids = []json.RawMessage{nil}
		}
		data := &mcpmsg.ErrorData{Code: CodeMCPBlocked, Rules: o.rules, Categories: o.categories}
		text := "Blocked by prompt firewall: prompt injection detected in the MCP server's error answer (rules " +
			strings.Join(o.rules, ", ") + "; categories " + strings.Join(o.categories, ", ") + ")"
		writeRPC(mw.w, mw.status, mcpmsg.ErrorBatch(ids, mw.batch, mcpErrBlocked, text, data))
		return nil, false
	case doSanitize:
		if s, ok := repl[0]; ok {
			return []byte(s), true
		}
	}
	return nil, true
}
