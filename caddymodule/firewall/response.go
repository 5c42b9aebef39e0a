package firewall

import (
	"bytes"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/llmreq"
	"github.com/promptwall/promptwall/llmresp"
	"github.com/promptwall/promptwall/rulebook"
)

// Codes of the errors a scanned response is answered with (OpenAI shape).
const (
	CodeResponseBlocked    = "response_blocked"
	CodeResponseNotScanned = "response_not_scanned"
)

// The statuses of a response blocked or refused before any byte of it was sent. A blocked
// answer is a 422: the request was well formed, and what it made the model write is refused;
// no SDK retries a 422 (the Vercel AI SDK ignores X-Should-Retry and retries every 5xx
// twice, each retry a paid generation that is likely blocked again). An answer the firewall
// cannot scan is the upstream's fault: 502, with X-Should-Retry: false, which the openai and
// anthropic SDKs obey.
const (
	blockedStatus = http.StatusUnprocessableEntity
	respStatus    = http.StatusBadGateway
)

// responsePolicy is the policy of response matches: response_on_malicious and
// response_on_suspicious by severity, and the rule and category actions above them, as for
// requests. nil when both response actions are off: the response is then not wrapped at all.
// Validate refuses any other value, so an unknown one never serves.
func (f *Firewall) responsePolicy() *policy {
	m, _ := parseAction(f.ResponseOnMalicious)
	s, _ := parseAction(f.ResponseOnSuspicious)
	if m == doNothing && s == doNothing {
		return nil
	}
	p := &policy{malicious: m, suspicious: s, byRule: f.policy.byRule, byCategory: f.policy.byCategory}
	p.hold = p.holds()
	return p
}

// holds reports whether a match can lead to sanitize or block: events must then wait until
// the text in them is final.
func (p *policy) holds() bool {
	if p.malicious >= doSanitize || p.suspicious >= doSanitize {
		return true
	}
	for _, a := range p.byRule {
		if a >= doSanitize {
			return true
		}
	}
	for _, a := range p.byCategory {
		if a >= doSanitize {
			return true
		}
	}
	return false
}

// wrapResponse returns the writer that scans the response of a request parsed as api, or w
// itself when responses are not scanned or the API has no known response.
func (f *Firewall) wrapResponse(w http.ResponseWriter, r *http.Request, api llmreq.API) (http.ResponseWriter, *respWriter) {
	if f.respPolicy == nil || api == llmreq.Generic {
		return w, nil
	}
	a := llmresp.API(api)
	if _, err := llmresp.Detect(a, "application/json"); err != nil {
		return w, nil
	}
	rw := &respWriter{w: w, f: f, r: r, api: a, pol: f.respPolicy, lastSeq: -1}
	return rw, rw
}

// identityRequest returns r for the upstream of a scanned response: asking for identity, so
// that a stream is not compressed (reverse_proxy passes the client's Accept-Encoding on, and
// Go's transport would add gzip without one). The client gets identity; an encode handler
// before the firewall compresses it again. r itself keeps the client's header for the logs.
func identityRequest(r *http.Request) *http.Request {
	if ae := r.Header["Accept-Encoding"]; len(ae) == 1 && ae[0] == "identity" {
		return r
	}
	r2 := r.WithContext(r.Context())
	r2.Header = r.Header.Clone()
	r2.Header["Accept-Encoding"] = []string{"identity"}
	return r2
}

// respWriter scans a response as it streams: it frames the body into events, feeds each
// channel's text to its own engine.Stream, and forwards each event once the text in it is
// final (at once under log), rewritten from the stream's replacements under sanitize.
type respWriter struct {
	w   http.ResponseWriter
	f   *Firewall
	r   *http.Request
	api llmresp.API
	pol *policy

	status  int
	decided bool // the status is known
	pass    bool // forwarded unchanged: an error or bodiless status
	done    bool // answered (blocked or refused): the rest is dropped
	sent    bool // the status line went to the client
	started bool // a body byte went to the client

	format  llmresp.Format
	framer  llmresp.Framer
	sawByte bool         // the body's first non-space byte was seen
	whole   bool         // one JSON body: buffered, sent with a Content-Length
	array   bool         // Gemini's streamed JSON array
	dec     *respDecoder // undoes the upstream's content codings, if any
	out     bytes.Buffer
	pend    []byte // streamed events not yet written (flushOut)

	chans   map[string]*respChan
	texts   llmresp.Channels
	queue   []*heldEvent
	lastSeq int // the sequence_number of the last event forwarded
	found   []respMatch
	text    int64 // bytes of text fed, bounded by max_body: the channels keep it all

	// For the metrics: every match's rule and the verdict of them all (whatever their
	// action), the bytes of whole texts scanned, and the time spent on the response.
	rules   []string
	verdict engine.Verdict
	wholeN  int64
	busy    time.Duration
	since   time.Time // the current call's start, while one runs
	counted bool
}

type respChan struct {
	name   string
	s      *engine.Stream
	fed    []byte
	closed bool
	cu, cb int // UTF-16 units and bytes of fed behind the cursor
	starts []markStart
	repl   []respRepl
}

type markStart struct {
	at  int
	act action
}

type respRepl struct {
	start, end int
	text       string
	act        action
}

type pieceRef struct {
	ch         *respChan // nil for a whole piece
	start, end int
}

type heldEvent struct {
	ev     *llmresp.Event
	pieces []llmresp.Piece
	refs   []pieceRef
	seq    int // Responses' sequence_number, -1 without one
}

type respMatch struct {
	channel string
	m       engine.Match
}

func (rw *respWriter) Header() http.Header { return rw.w.Header() }

// Unwrap lets http.ResponseController reach the connection (deadlines, hijacking).
func (rw *respWriter) Unwrap() http.ResponseWriter { return rw.w }

// Flush forwards the upstream's flushes of an unchanged response; a scanned one is flushed
// after each event written.
func (rw *respWriter) Flush() {
	if rw.pass {
		_ = http.NewResponseController(rw.w).Flush()
	}
}

func (rw *respWriter) WriteHeader(code int) {
	if rw.decided {
		return
	}
	if code < 200 {
		rw.w.WriteHeader(code) // informational: 103 Early Hints
		return
	}
	rw.decided, rw.status = true, code
	if code >= 400 || code == http.StatusNoContent || code == http.StatusNotModified {
		rw.pass = true
		rw.w.WriteHeader(code)
		return
	}
	h := rw.w.Header()
	codings, fe := contentCodings(h.Get("Content-Encoding"))
	if fe != nil {
		rw.refuse(errAnswerEncoding)
		return
	}
	format, err := llmresp.Detect(rw.api, h.Get("Content-Type"))
	if err != nil {
		rw.refuse(errAnswerType)
		return
	}
	rw.format = format
	rw.whole = format == llmresp.FormatJSON
	rw.framer = llmresp.NewFramer(rw.api, format, int(min(rw.f.MaxBody, 1<<30)))
	if len(codings) > 0 {
		// The firewall asked for identity; an upstream that compresses anyway is decoded
		// as it streams and sent on as identity.
		h.Del("Content-Encoding")
		rw.dec = newRespDecoder(codings, rw.f.MaxBody, func(b []byte) bool {
			rw.feed(b)
			return !rw.done
		})
	}
}

// Write takes the upstream's bytes. Once the response is answered (blocked or refused) it
// returns errDone: reverse_proxy then stops copying and closes the upstream's body, so a
// generation nobody will read stops, and the firewall's next ends the response cleanly.
func (rw *respWriter) Write(p []byte) (int, error) {
	if !rw.decided {
		rw.WriteHeader(http.StatusOK)
	}
	if rw.pass {
		return rw.w.Write(p)
	}
	if rw.done {
		return 0, errDone
	}
	rw.since = time.Now()
	defer rw.pause()
	defer rw.flushOut()
	if rw.dec != nil {
		if err := rw.dec.write(p); err != nil {
			rw.refuse(err)
		}
	} else {
		rw.feed(p)
	}
	if rw.done {
		return len(p), errDone
	}
	return len(p), nil
}

// feed frames decoded body bytes.
func (rw *respWriter) feed(p []byte) {
	if !rw.sawByte && rw.whole {
		if i := bytes.IndexFunc(p, func(r rune) bool { return r != ' ' && r != '\t' && r != '\r' && r != '\n' }); i >= 0 {
			rw.sawByte = true
			if rw.api == llmresp.Gemini && p[i] == '[' {
				rw.whole, rw.array = false, true
			}
		}
	}
	if err := rw.framer.Feed(p, rw.event); err != nil && !rw.done {
		rw.refuse(err)
	}
}

// finish ends the body: the framer, every channel's stream and the held events.
func (rw *respWriter) finish() {
	if rw.pass {
		rw.count(actionPass) // an error or bodiless status: nothing to scan
	}
	if !rw.decided || rw.pass || rw.done {
		return
	}
	rw.since = time.Now()
	defer rw.pause()
	defer rw.flushOut()
	if rw.dec != nil {
		err := rw.dec.close()
		if rw.done {
			return
		}
		if err != nil {
			rw.refuse(err)
			return
		}
	}
	if err := rw.framer.Close(rw.event); err != nil {
		if !rw.done {
			rw.refuse(err)
		}
		return
	}
	for _, ch := range rw.chans {
		rw.closeChan(ch)
		if rw.done {
			return
		}
	}
	rw.drain()
	if rw.done {
		return
	}
	if !rw.sent {
		h := rw.w.Header()
		h.Del("Content-Length")
		if rw.whole {
			h.Set("Content-Length", strconv.Itoa(rw.out.Len()))
		}
		rw.sendHeader()
	}
	if rw.out.Len() > 0 {
		_, _ = rw.w.Write(rw.out.Bytes())
	}
	action := rw.strongest().name()
	rw.logFound(action)
	rw.count(action)
}

// release ends what the writer started beside the handler: the decoders of a compressed
// body the upstream left midway. It is called however the handler ended.
func (rw *respWriter) release() {
	if rw.dec != nil {
		rw.dec.release()
	}
}

// rewritePiece applies the channel's groups to the piece [ref.start, ref.end) of its text: a
// group that begins in the piece is replaced there, and the bytes of a group that began in an
// earlier piece are removed.
func rewritePiece(ref pieceRef, text string) (string, bool) {
	var b []byte
	pos := ref.start
	for _, g := range ref.ch.repl {
		if g.end <= ref.start || g.start >= ref.end {
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(text))
		}
		if g.start >= pos {
			b = append(b, text[pos-ref.start:g.start-ref.start]...)
			b = append(b, g.text...)
		}
		pos = max(pos, min(g.end, ref.end))
	}
	if b == nil {
		return text, false
	}
	b = append(b, text[pos-ref.start:]...)
	return string(b), true
}

func (rw *respWriter) sendHeader() {
	if rw.sent {
		return
	}
	rw.sent = true
	rw.w.WriteHeader(rw.status)
}

// writeOut sends bytes of the response on: a streamed one once the upstream's bytes at hand
// are framed (flushOut), a whole JSON body at its end, with its new Content-Length.
func (rw *respWriter) writeOut(b []byte) {
	if len(b) == 0 {
		return
	}
	if rw.whole {
		rw.out.Write(b)
		return
	}
	if !rw.sent {
		rw.w.Header().Del("Content-Length")
		rw.sendHeader()
	}
	rw.started = true
	rw.pend = append(rw.pend, b...)
}

// flushOut writes and flushes the events released by one write of the upstream's in one
// go: all were final at the same moment, and an upstream sending faster than the client
// reads (many events to a read) would otherwise cost a write and a flush an event.
func (rw *respWriter) flushOut() {
	if len(rw.pend) == 0 {
		return
	}
	_, _ = rw.w.Write(rw.pend)
	rw.pend = rw.pend[:0]
	_ = http.NewResponseController(rw.w).Flush()
}

func (rw *respWriter) block() {
	if rw.done {
		return
	}
	rules, cats := rw.names()
	msg := "Response blocked by prompt firewall: prompt injection detected in the model's answer (rules " +
		strings.Join(rules, ", ") + "; categories " + strings.Join(cats, ", ") + ")"
	rw.fail(blockedStatus, CodeResponseBlocked, msg)
	rw.logFound(ActionBlock)
	rw.count(ActionBlock)
}

// Why an answer (an LLM API's or an MCP server's) is refused. They name the problem, never the server's header
// values or body: a refusal's text reaches the client (and the model that
// reads its errors) and the log unscanned.
var (
	errAnswerEncoding = errors.New("unsupported content encoding")
	errAnswerDecode   = errors.New("the body does not decode as its content encoding says")
	errAnswerType     = errors.New("unsupported content type")
)

// refuse answers a response that cannot be scanned: fail closed.
func (rw *respWriter) refuse(err error) {
	if rw.done {
		return
	}
	if c := rw.f.logger.Check(zapcore.InfoLevel, "response refused"); c != nil {
		c.Write(zap.String("phase", string(phaseResponse)), zap.String("api", string(rw.api)), zap.String("reason", err.Error()))
	}
	rw.fail(respStatus, CodeResponseNotScanned, "Response refused by prompt firewall: it cannot be scanned ("+err.Error()+")")
	rw.count(actionRefuse)
}

// fail ends the response with the API's error: its error body when nothing was sent yet,
// else its stream error event, and nothing after it.
func (rw *respWriter) fail(status int, code, msg string) {
	rw.done = true
	rw.queue = nil
	f := llmresp.Failure{Status: status, Code: code, Message: msg, Seq: rw.lastSeq + 1}
	if !rw.started {
		rw.out.Reset()
		status, body := llmresp.ErrorBody(rw.api, f)
		h := rw.w.Header()
		h.Del("Content-Encoding")
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		h.Set("X-Should-Retry", "false")
		rw.status, rw.sent = status, true
		rw.w.WriteHeader(status)
		_, _ = rw.w.Write(body)
		return
	}
	format := rw.format
	if rw.array {
		format = llmresp.FormatJSONArray
	}
	rw.pend = append(rw.pend, llmresp.StreamError(rw.api, format, f, true)...)
	rw.flushOut()
}

func (rw *respWriter) strongest() action {
	a := doNothing
	for i := range rw.found {
		a = max(a, rw.pol.of(&rw.found[i].m))
	}
	return a
}

// names returns the rules and categories found, each once, in order.
func (rw *respWriter) names() (rules, cats []string) {
	for _, m := range rw.found {
		if !slices.Contains(rules, m.m.Rule) {
			rules = append(rules, m.m.Rule)
		}
		if !slices.Contains(cats, m.m.Category) {
			cats = append(cats, m.m.Category)
		}
	}
	return
}

// logFound writes the one log entry of a response with matches: never its text.
func (rw *respWriter) logFound(action string) {
	if len(rw.found) == 0 {
		return
	}
	c := rw.f.logger.Check(zapcore.WarnLevel, "prompt injection detected")
	if c == nil {
		return
	}
	verdict := engine.Suspicious
	spans := make([]string, len(rw.found))
	for i, m := range rw.found {
		if m.m.Severity == rulebook.Malicious {
			verdict = engine.Malicious
		}
		spans[i] = m.channel + ":" + strconv.Itoa(m.m.Start) + "-" + strconv.Itoa(m.m.End) + ":" + m.m.Rule
	}
	rules, cats := rw.names()
	c.Write(
		zap.String("phase", string(phaseResponse)),
		zap.String("host", rw.r.Host),
		zap.String("uri_path", rw.r.URL.Path),
		zap.String("verdict", string(verdict)),
		zap.String("action", action),
		zap.String("api", string(rw.api)),
		zap.Strings("rules", rules),
		zap.Strings("categories", cats),
		zap.String("rulebook", rw.f.rulesID),
		zap.Strings("spans", spans),
	)
	rw.found = nil // logged once
}
