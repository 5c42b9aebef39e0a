package firewall

import (
	"net"
	"net/http"
	"unsafe"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/llmreq"
)

// flagged is one scanned text that matched at least one rule.
type flagged struct {
	index int    // in Request.Texts, the key Rewrite takes
	path  string // JSON path, e.g. messages[2].content
	role  string
	res   engine.Result
}

// outcome is the scan of one request.
type outcome struct {
	verdict    engine.Verdict // the worst of its texts'
	flagged    []flagged      // in text order
	rules      []string       // distinct rule ids, in order of first match
	categories []string       // distinct categories, in order of first match
	cached     int            // texts found in the safe-text cache
	bytes      int            // bytes of text the engine scanned
}

// scan runs the engine over every text whose role is scanned, but those
// the safe-text cache holds for client.
func (f *Firewall) scan(req *llmreq.Request, client uint64) *outcome {
	o := &outcome{verdict: engine.Safe}
	for i := range req.Texts {
		t := &req.Texts[i]
		if !f.scans(t.Role) {
			continue
		}
		cacheable := f.cache != nil && t.Value != ""
		var p probe
		if cacheable {
			var hit bool
			if p, hit = f.cache.lookup(client, t.Value); hit {
				o.cached++
				continue
			}
		}
		res := f.engine.ScanString(t.Value)
		o.bytes += len(t.Value)
		if len(res.Matches) == 0 {
			if cacheable {
				f.cache.remember(&p, client, t.Value)
			}
			continue
		}
		if res.Verdict.Rank() > o.verdict.Rank() {
			o.verdict = res.Verdict
		}
		o.flagged = append(o.flagged, flagged{index: i, path: t.Path, role: t.Role, res: res})
		for _, m := range res.Matches {
			o.rules = appendNew(o.rules, m.Rule)
			o.categories = appendNew(o.categories, m.Category)
		}
	}
	return o
}

// appendNew appends s unless list has it; lists here are a few items long.
func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// replacements maps each flagged text to its sanitized copy, for Rewrite.
// The strings share the results' bytes, which no one writes (Result.Sanitized
// is read-only by its contract, and nothing here keeps it past the request):
// a copy would cost as much as the document again.
func (o *outcome) replacements() map[int]string {
	repl := make(map[int]string, len(o.flagged))
	for _, fl := range o.flagged {
		b := fl.res.Sanitized
		repl[fl.index] = unsafe.String(unsafe.SliceData(b), len(b))
	}
	return repl
}

// param is the path of the first text with the request's verdict: the text
// that decided the action, reported as the OpenAI error's param.
func (o *outcome) param() string {
	for _, fl := range o.flagged {
		if fl.res.Verdict == o.verdict {
			return fl.path
		}
	}
	return ""
}

// logFlagged writes the one warn entry of a flagged request: what matched
// and where, never the text. The URL's path is logged without its query,
// which may hold an API key (Gemini's ?key=).
func (f *Firewall) logFlagged(r *http.Request, req *llmreq.Request, o *outcome, action string) {
	c := f.logger.Check(zapcore.WarnLevel, "prompt injection detected")
	if c == nil {
		return
	}
	ip, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		ip = r.RemoteAddr
	}
	c.Write(
		zap.String("remote_ip", ip),
		zap.String("host", r.Host),
		zap.String("uri_path", r.URL.Path),
		zap.String("verdict", string(o.verdict)),
		zap.String("action", action),
		zap.String("api", string(req.API)),
		zap.Strings("rules", o.rules),
		zap.Strings("categories", o.categories),
		zap.String("rulebook", f.rulesID),
		zap.Array("texts", flaggedTexts(o.flagged)),
	)
}

type flaggedTexts []flagged

func (ft flaggedTexts) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	for i := range ft {
		if err := enc.AppendObject(&ft[i]); err != nil {
			return err
		}
	}
	return nil
}

func (fl *flagged) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("path", fl.path)
	enc.AddString("role", fl.role)
	enc.AddString("verdict", string(fl.res.Verdict))
	return enc.AddArray("spans", spans(fl.res.Matches))
}

type spans []engine.Match

func (s spans) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	for i := range s {
		if err := enc.AppendObject(span(s[i])); err != nil {
			return err
		}
	}
	return nil
}

// span logs one match by rule and position (UTF-16 units), never its text.
type span engine.Match

func (m span) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("rule", m.Rule)
	enc.AddString("category", m.Category)
	enc.AddString("severity", string(m.Severity))
	enc.AddInt("start", m.Start)
	enc.AddInt("end", m.End)
	return nil
}
