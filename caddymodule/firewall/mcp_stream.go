package firewall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/llmresp"
	"github.com/promptwall/promptwall/mcpmsg"
)

// The MCP server's answers: a POST's (one JSON message or batch, or an
// event stream of messages) and the GET event stream. Each message is
// scanned whole (an SSE event carries one), and forwarded at once when it
// passes, so a stream keeps its timing. What cannot be scanned fails closed:
// the client gets JSON-RPC errors for the requests it waits for.

// pendingReq is a request of the client's POST, waiting for its answer.
type pendingReq struct {
	method, cursor string
}

// mcpWriter scans the server's answer to one request.
type mcpWriter struct {
	w    http.ResponseWriter
	f    *Firewall
	r    *http.Request
	next caddyhttp.Handler

	pending map[string]pendingReq // by raw id
	ids     []json.RawMessage     // the pending ids in order
	batch   bool                  // the POST was a batch: a whole error answer is one too
	client  uint64

	status  int
	decided bool
	pass    bool // forwarded unchanged
	done    bool // answered: the rest is dropped
	sent    bool // the status line went out
	sse     bool
	whole   bool // application/json, buffered and sent at its end
	other   bool // a content type that is not scanned: refused unless the body is empty
	codings []string
	buf     []byte
	framer  llmresp.Framer
}

// nextMCP calls the next handler with the answer scanned; msg is the POST's
// body (nil without one).
func (f *Firewall) nextMCP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, msg *mcpmsg.Body) error {
	mw := &mcpWriter{w: w, f: f, r: r, next: next, pending: map[string]pendingReq{}}
	if f.cache != nil {
		mw.client = f.cache.clientKey(r)
	}
	if msg != nil {
		mw.batch = msg.Batch
		for _, m := range msg.Messages {
			if m.Kind == mcpmsg.Request {
				mw.pending[string(m.ID)] = pendingReq{m.Method, m.Cursor}
				mw.ids = append(mw.ids, m.ID)
			}
		}
	}
	err := next.ServeHTTP(mw, r)
	mw.finish()
	return err
}

func (mw *mcpWriter) Header() http.Header { return mw.w.Header() }

// Unwrap lets http.ResponseController reach the connection.
func (mw *mcpWriter) Unwrap() http.ResponseWriter { return mw.w }

func (mw *mcpWriter) Flush() {
	if mw.pass {
		_ = http.NewResponseController(mw.w).Flush()
	}
}

func (mw *mcpWriter) WriteHeader(code int) {
	if mw.decided {
		return
	}
	if code < 200 {
		mw.w.WriteHeader(code)
		return
	}
	mw.decided, mw.status = true, code
	if code == http.StatusNoContent || code == http.StatusNotModified {
		mw.pass = true
		mw.w.WriteHeader(code)
		return
	}
	h := mw.w.Header()
	codings, fe := contentCodings(h.Get("Content-Encoding"))
	if fe != nil {
		mw.refuse(fmt.Errorf("content encoding %q", h.Get("Content-Encoding")))
		return
	}
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	switch {
	case mt == "text/event-stream":
		if len(codings) > 0 {
			mw.refuse(errors.New("a compressed event stream"))
			return
		}
		mw.sse = true
		mw.framer = llmresp.NewFramer(llmresp.API("mcp"), llmresp.FormatSSE, int(min(mw.f.MaxBody, 1<<30)))
		// The client's fetch resolves on the headers (a GET stream may wait
		// long for its first event): they go at once, and a refusal is then
		// an error event.
		h.Del("Content-Length")
		mw.sendHeader()
		_ = http.NewResponseController(mw.w).Flush()
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		mw.whole, mw.codings = true, codings
	case code >= 300:
		// An HTTP error or redirect that is no JSON-RPC message: the
		// SDKs raise it as a transport error.
		mw.pass = true
		mw.w.WriteHeader(code)
	default:
		mw.other = true
	}
}

func (mw *mcpWriter) Write(p []byte) (int, error) {
	if !mw.decided {
		mw.WriteHeader(http.StatusOK)
	}
	switch {
	case mw.pass:
		return mw.w.Write(p)
	case mw.done && mw.sse:
		// A refused stream ends: the client reconnects rather than wait on a
		// stream that sends nothing more.
		return 0, errDone
	case mw.done || len(p) == 0:
		return len(p), nil
	case mw.other:
		mw.refuse(fmt.Errorf("content type %q", mw.w.Header().Get("Content-Type")))
		return len(p), nil
	case mw.whole:
		if int64(len(mw.buf)+len(p)) > mw.f.MaxBody {
			mw.refuse(llmresp.ErrEventTooLarge)
			return len(p), nil
		}
		mw.buf = append(mw.buf, p...)
		return len(p), nil
	}
	if err := mw.framer.Feed(p, mw.event); err != nil && !mw.done {
		mw.refuse(err)
	}
	if mw.done {
		return 0, errDone
	}
	return len(p), nil
}

// event takes one SSE event: scanned, then forwarded, rewritten or replaced.
func (mw *mcpWriter) event(ev *llmresp.Event) error {
	if mw.done {
		return errDone
	}
	if len(bytes.TrimSpace(ev.Data)) == 0 {
		mw.writeOut(ev.Raw) // a comment, a retry or an id alone: nothing a client parses
		return nil
	}
	data, ok := mw.message(ev.Data)
	if !ok {
		return errDone
	}
	if data == nil {
		mw.writeOut(ev.Raw)
	} else {
		mw.writeOut(sseEvent(ev.Raw, data))
	}
	return nil
}

// finish ends the answer: a whole JSON body is scanned and sent here.
func (mw *mcpWriter) finish() {
	if !mw.decided || mw.pass || mw.done {
		return
	}
	if mw.sse {
		if err := mw.framer.Close(mw.event); err != nil && !mw.done {
			mw.refuse(err)
		}
		return
	}
	if mw.other || len(mw.buf) == 0 {
		mw.sendHeader() // a bodiless answer: 202 Accepted
		return
	}
	body := mw.buf
	for i := len(mw.codings) - 1; i >= 0; i-- {
		var err error
		if body, err = decode(mw.codings[i], body, mw.f.MaxBody); err != nil {
			mw.refuse(fmt.Errorf("content encoding %s: %v", mw.codings[i], err))
			return
		}
	}
	out, ok := mw.message(body)
	if !ok {
		return
	}
	if out == nil {
		out = body
	}
	h := mw.w.Header()
	h.Del("Content-Encoding")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	mw.sendHeader()
	_, _ = mw.w.Write(out)
}

// message scans one message or batch of the server's: out is nil to send it
// as it came, else what to send instead (a sanitized copy, errors for the
// blocked answers; empty when nothing is left); ok is false when the
// answer was refused.
func (mw *mcpWriter) message(data []byte) (out []byte, ok bool) {
	f := mw.f
	hs := f.hosts.of(mw.r)
	start := time.Now()
	msg, err := mcpmsg.Parse(data)
	if err != nil {
		if mw.status >= 300 {
			return nil, true // an HTTP error in JSON that is no JSON-RPC message
		}
		mw.refuse(err)
		return nil, false
	}
	o := f.scan(msg.Doc, mw.client)
	f.metrics.observeScan(hs, time.Since(start), o)
	if o.refusal != nil {
		mw.refuse(o.refusal)
		return nil, false
	}
	act, repl := o.act, map[int]string(nil)
	if act == doSanitize {
		for _, fl := range o.flagged {
			if fl.act >= doSanitize && fl.index >= 0 && msg.Doc.Texts[fl.index].Key {
				act = doBlock // a rewritten key changes what a schema or a result means
				o.blockedAt = fl.path
			}
		}
	}
	if act == doSanitize {
		repl, act = f.sanitize(msg.Doc, o)
	}
	changed := mw.pinned(msg)
	action := act.name()
	method := mw.methods(msg)
	if o.verdict != engine.Safe {
		f.logMCP(mw.r, "response", method, o, action)
	}
	f.countMCP(hs, "response", o.verdict, action)
	for _, m := range msg.Messages {
		if m.Kind == mcpmsg.Response || m.Kind == mcpmsg.ErrorReply {
			mw.answered(m.ID)
		}
	}
	switch {
	case act == doBlock:
		data := &mcpmsg.ErrorData{Code: CodeMCPBlocked, Rules: o.rules, Categories: o.categories}
		text := "Blocked by prompt firewall: prompt injection detected in the MCP server's message (rules " +
			strings.Join(o.rules, ", ") + "; categories " + strings.Join(o.categories, ", ") + ")"
		return mw.replace(msg, nil, mcpErrBlocked, text, data), true
	case len(changed) > 0:
		if c := f.logger.Check(zapcore.WarnLevel, "mcp tool list changed"); c != nil {
			c.Write(zap.String("phase", "response"), zap.String("api", mcpAPI), zap.String("host", mw.r.Host),
				zap.String("uri_path", mw.r.URL.Path), zap.String("method", "tools/list"), zap.String("action", ActionBlock))
		}
		data := &mcpmsg.ErrorData{Code: CodeMCPToolsChanged}
		return mw.replace(msg, changed, mcpErrToolsChanged,
			"Refused by prompt firewall: the MCP server's tool list changed during the session (pin_tools)", data), true
	case act == doSanitize:
		return msg.Rewrite(repl), true
	}
	return nil, true
}

// pinned returns the ids of msg's tools/list answers that differ from the
// session's pinned pages.
func (mw *mcpWriter) pinned(msg *mcpmsg.Body) map[string]bool {
	if mw.f.pins == nil {
		return nil
	}
	var changed map[string]bool
	for _, m := range msg.Messages {
		p, ok := mw.pending[string(m.ID)]
		if m.Kind != mcpmsg.Response || !ok || p.method != "tools/list" {
			continue
		}
		if !mw.f.pins.same(pinSession(mw.r), p.cursor, m.Result) {
			if changed == nil {
				changed = map[string]bool{}
			}
			changed[string(m.ID)] = true
		}
	}
	return changed
}

// methods names msg's methods for the log: a response by its request's.
func (mw *mcpWriter) methods(msg *mcpmsg.Body) string {
	var names []string
	for _, m := range msg.Messages {
		name := m.Kind.String()
		switch {
		case m.Method != "":
			name = mcpmsg.MethodLabel(m.Method)
		case m.ID != nil:
			if p, ok := mw.pending[string(m.ID)]; ok {
				name = mcpmsg.MethodLabel(p.method)
			}
		}
		names = appendNew(names, name)
	}
	return strings.Join(names, ",")
}

// replace returns what is sent instead of msg's messages (of only those
// whose ids only is set for, when it is not nil): an answer becomes the
// error for its id, a server's request is answered to the server with that
// error and not delivered, a notification is dropped; the others go as
// they came.
func (mw *mcpWriter) replace(msg *mcpmsg.Body, only map[string]bool, code int, text string, data *mcpmsg.ErrorData) []byte {
	var parts [][]byte
	for i, m := range msg.Messages {
		if only != nil && !only[string(m.ID)] {
			parts = append(parts, rawMessage(msg, i))
			continue
		}
		switch m.Kind {
		case mcpmsg.Response, mcpmsg.ErrorReply:
			parts = append(parts, mcpmsg.ErrorResponse(m.ID, code, text, data))
		case mcpmsg.Request:
			mw.answerServer(mcpmsg.ErrorResponse(m.ID, code, text, data))
		}
	}
	switch {
	case len(parts) == 0:
		return []byte{}
	case len(parts) == 1 && !msg.Batch:
		return parts[0]
	}
	return append(append([]byte{'['}, bytes.Join(parts, []byte{','})...), ']')
}

// rawMessage returns message i of msg as it came.
func rawMessage(msg *mcpmsg.Body, i int) []byte {
	b := msg.Rewrite(nil)
	if !msg.Batch {
		return b
	}
	var raws []json.RawMessage
	if json.Unmarshal(b, &raws) != nil || i >= len(raws) {
		return nil
	}
	return raws[i]
}

// answered marks the client's request id as answered.
func (mw *mcpWriter) answered(id json.RawMessage) {
	if _, ok := mw.pending[string(id)]; !ok {
		return
	}
	delete(mw.pending, string(id))
	for i, x := range mw.ids {
		if string(x) == string(id) {
			mw.ids = append(mw.ids[:i], mw.ids[i+1:]...)
			break
		}
	}
}

// answerServer sends the server the error answer to its request, as the
// client would: a POST to the same endpoint, with the client's headers (its
// session and protocol version, its credentials). The answer is discarded.
func (mw *mcpWriter) answerServer(body []byte) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(mw.r.Context()), 10*time.Second)
	defer cancel()
	r := mw.r.Clone(ctx)
	r.Method = http.MethodPost
	r.Header.Del("Last-Event-ID")
	r.Header.Del("Content-Encoding")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	setBody(r, body)
	if err := mw.next.ServeHTTP(&discardWriter{h: http.Header{}}, r); err != nil {
		if c := mw.f.logger.Check(zapcore.InfoLevel, "mcp answer to the server failed"); c != nil {
			c.Write(zap.String("phase", "response"), zap.String("api", mcpAPI), zap.Error(err))
		}
	}
}

// discardWriter takes the server's answer to answerServer's POST.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

func (mw *mcpWriter) sendHeader() {
	if mw.sent {
		return
	}
	mw.sent = true
	mw.w.WriteHeader(mw.status)
}

// writeOut sends stream bytes on at once, flushed.
func (mw *mcpWriter) writeOut(b []byte) {
	if !mw.sent {
		mw.w.Header().Del("Content-Length")
		mw.sendHeader()
	}
	_, _ = mw.w.Write(b)
	_ = http.NewResponseController(mw.w).Flush()
}

// refuse ends an answer that cannot be scanned: fail closed. Before any
// byte went out, a 502 with the errors for the client's pending requests;
// in a stream, an event with each error, and nothing after it.
func (mw *mcpWriter) refuse(err error) {
	if mw.done {
		return
	}
	mw.done = true
	f := mw.f
	f.countMCP(f.hosts.of(mw.r), "response", "none", actionRefuse)
	if c := f.logger.Check(zapcore.InfoLevel, "response refused"); c != nil {
		c.Write(zap.String("phase", "response"), zap.String("api", mcpAPI), zap.String("reason", err.Error()))
	}
	text := "Refused by prompt firewall: the MCP server's answer cannot be scanned (" + err.Error() + ")"
	data := &mcpmsg.ErrorData{Code: CodeMCPNotScanned, Reason: err.Error()}
	if !mw.sent {
		ids := mw.ids
		if len(ids) == 0 {
			ids = []json.RawMessage{nil}
		}
		mw.status = respStatus
		mw.sent = true
		h := mw.w.Header()
		h.Del("Content-Length")
		writeRPC(mw.w, respStatus, mcpmsg.ErrorBatch(ids, mw.batch, mcpErrNotScanned, text, data))
		return
	}
	for _, id := range mw.ids {
		_, _ = mw.w.Write(sseEvent(nil, mcpmsg.ErrorResponse(id, mcpErrNotScanned, text, data)))
	}
	mw.ids, mw.pending = nil, nil
	_ = http.NewResponseController(mw.w).Flush()
}

// sseEvent returns an event with raw's lines but data (its id and event
// name kept, for resumability), and data's lines as its data; an empty
// data leaves an event that only moves the client's last event id.
func sseEvent(raw, data []byte) []byte {
	var b bytes.Buffer
	for len(raw) > 0 {
		line := raw
		next := len(raw)
		if i := bytes.IndexAny(raw, "\r\n"); i >= 0 {
			line, next = raw[:i], i+1
			if raw[i] == '\r' && next < len(raw) && raw[next] == '\n' {
				next++
			}
		}
		raw = raw[next:]
		if len(line) == 0 || bytes.HasPrefix(line, []byte("data")) && (len(line) == 4 || line[4] == ':') {
			continue
		}
		if bytes.HasPrefix(line, []byte{0xEF, 0xBB, 0xBF}) {
			line = line[3:]
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		b.WriteString("data: ")
		b.Write(bytes.TrimSuffix(line, []byte{'\r'}))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}
