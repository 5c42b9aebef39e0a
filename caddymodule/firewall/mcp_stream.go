package firewall

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

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

	pending map[string]pendingReq // by idKey
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
	errBody bool // an HTTP error's body: whole, scanned as text unless it is JSON-RPC
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
				mw.pending[idKey(m.ID)] = pendingReq{m.Method, m.Cursor}
				mw.ids = append(mw.ids, m.ID)
			}
		}
		if f.pins != nil {
			f.pins.expect(pinSession(r), msg)
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
	if code < 400 && code >= 300 {
		// A client's fetch follows a 307 or 308 with the same POST, tool
		// arguments and all, to wherever Location points, and reads that
		// host's answer unguarded.
		mw.refuse(errAnswerRedirect)
		return
	}
	// The SDK clients raise an HTTP error's body, whatever its type, in
	// the error an agent hands the model: read whole (mcp_errbody.go).
	mw.errBody = code >= 400
	h := mw.w.Header()
	codings, fe := contentCodings(h.Get("Content-Encoding"))
	if fe != nil {
		mw.refuse(errAnswerEncoding)
		return
	}
	mt, charset := mediaType(h.Values("Content-Type"))
	if _, ok := readableCharset(charset); charset != "" && !ok {
		// A client that decodes by it (httpx, which the Python SDK's
		// streams use) reads another text than the scan.
		mw.refuse(errAnswerCharset)
		return
	}
	switch {
	case mw.errBody:
		mw.whole, mw.codings = true, codings
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
		mw.refuse(errAnswerType)
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
	if !sseFields(ev.Raw) {
		mw.refuse(errAnswerNotSSE)
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
			mw.refuse(errAnswerDecode)
			return
		}
	}
	var out []byte
	var ok bool
	if mw.errBody {
		out, ok = mw.errorBody(body)
	} else {
		out, ok = mw.message(body)
	}
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
	f.metrics.request(phaseResponse, f.hosts.of(mw.r), "none", actionRefuse)
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
		if !mw.errBody {
			mw.status = respStatus // an HTTP error stays one: a 401 still asks for authorization
		}
		mw.sent = true
		h := mw.w.Header()
		h.Del("Content-Length")
		h.Del("Location")
		writeRPC(mw.w, mw.status, mcpmsg.ErrorBatch(ids, mw.batch, mcpErrNotScanned, text, data))
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
