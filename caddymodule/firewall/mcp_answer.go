package firewall

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/llmreq"
	"github.com/promptwall/promptwall/mcpmsg"
)

// What the guard does with one message (or batch) of the server's: scan
// it, check a tools/list answer against the session's pin, and forward it,
// rewrite it, or put JSON-RPC errors in its place.

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
		mw.refuse(err)
		return nil, false
	}
	o := f.scan(msg.Doc, mw.client)
	f.metrics.observeScan(phaseResponse, hs, time.Since(start), o)
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
		f.logMCP(mw.r, phaseResponse, method, o, action)
	}
	f.metrics.request(phaseResponse, hs, o.verdict, action)
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
		return mw.replace(msg, nil, nil, nil, mcpErrBlocked, text, data), true
	case len(changed) > 0 && mw.anyChanged(changed):
		if c := f.logger.Check(zapcore.WarnLevel, "mcp tool list changed"); c != nil {
			c.Write(zap.String("phase", "response"), zap.String("api", mcpAPI), zap.String("host", mw.r.Host),
				zap.String("uri_path", mw.r.URL.Path), zap.String("method", "tools/list"), zap.String("action", ActionBlock))
		}
		data := &mcpmsg.ErrorData{Code: CodeMCPToolsChanged}
		return mw.replace(msg, changed, repl, o.edits, mcpErrToolsChanged,
			"Refused by prompt firewall: the MCP server's tool list changed during the session (pin_tools)", data), true
	case len(changed) > 0:
		return mw.replace(msg, changed, repl, o.edits, 0, "", nil), true // only strays, dropped
	case act == doSanitize:
		return msg.Rewrite(repl, o.edits), true
	}
	return nil, true
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
			if p, ok := mw.pending[idKey(m.ID)]; ok {
				name = mcpmsg.MethodLabel(p.method)
			}
		}
		names = appendNew(names, name)
	}
	return strings.Join(names, ",")
}

// replace returns what is sent instead of msg's messages (of only those
// whose ids only holds, when it is not nil; one it holds as false is
// dropped; the others get repl's rewrites): an answer becomes the
// error for its id, a server's request is answered to the server with that
// error and not delivered, a notification is dropped; the others go as
// they came.
func (mw *mcpWriter) replace(msg *mcpmsg.Body, only map[string]bool, repl map[int]string, edits map[int][]llmreq.Edit, code int, text string, data *mcpmsg.ErrorData) []byte {
	var parts [][]byte
	for i, m := range msg.Messages {
		if only != nil {
			bad, listed := only[string(m.ID)]
			if !listed {
				parts = append(parts, rawMessage(msg, i, repl, edits))
			}
			if !bad {
				continue
			}
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

// rawMessage returns message i of msg as it came, with repl's rewrites
// (edits as in mcpmsg.Body.Rewrite).
func rawMessage(msg *mcpmsg.Body, i int, repl map[int]string, edits map[int][]llmreq.Edit) []byte {
	b := msg.Rewrite(repl, edits)
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
	k := idKey(id)
	if _, ok := mw.pending[k]; !ok {
		return
	}
	delete(mw.pending, k)
	for i, x := range mw.ids {
		if idKey(x) == k {
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
