package firewall

import (
	"net"
	"net/http"

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
	act   action // the strongest of its matches' actions
}

// outcome is the scan of one request.
type outcome struct {
	verdict    engine.Verdict // the worst of its texts'
	act        action         // the strongest of its texts' actions
	blockedAt  string         // the path of the text that decided a block
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
		act := f.policy.strongest(res.Matches)
		if act == doBlock && o.act < doBlock {
			o.blockedAt = t.Path
		}
		o.act = max(o.act, act)
		o.flagged = append(o.flagged, flagged{index: i, path: t.Path, role: t.Role, res: res, act: act})
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

// maxSanitizeRounds bounds how often a text is sanitized before a copy in
// which a match still acts blocks the request instead.
const maxSanitizeRounds = 3

// sanitize returns the sanitized copies of the flagged texts whose matches
// act, for Rewrite, and the request's action: sanitize, or block when a
// copy cannot be made clean. Each copy is scanned again, since replacing a
// span can join the text around it into a new match ("ignore all ignore
// all previous instructions previous instructions"): a copy that would be
// blocked blocks the request; one that would be sanitized is sanitized
// again, up to maxSanitizeRounds.
//
// The strings share the results' bytes, which no one writes (Result.Sanitized
// is read-only by its contract, and nothing here keeps it past the request):
// a copy would cost as much as the document again.
func (f *Firewall) sanitize(req *llmreq.Request, o *outcome) (map[int]string, action) {
	repl := make(map[int]string, len(o.flagged))
	for i := range o.flagged {
		fl := &o.flagged[i]
		if fl.act < doSanitize {
			continue
		}
		text, res := req.Texts[fl.index].Value, fl.res
		for round := 1; ; round++ {
			text = f.policy.sanitized(f.engine, text, &res)
			res = f.engine.ScanString(text)
			act := f.policy.strongest(res.Matches)
			if act < doSanitize {
				break
			}
			if act == doBlock || round == maxSanitizeRounds {
				o.blockedAt = fl.path
				return nil, doBlock
			}
		}
		repl[fl.index] = text
	}
	return repl, doSanitize
}

// param is the path of the text that decided a block, reported as the
// OpenAI error's param.
func (o *outcome) param() string { return o.blockedAt }

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
