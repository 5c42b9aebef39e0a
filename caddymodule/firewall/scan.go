package firewall

import (
	"maps"
	"net"
	"net/http"
	"slices"
	"unsafe"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/llmreq"
)

// flagged is one scanned text that matched at least one rule.
type flagged struct {
	index int    // in Request.Texts, the key Rewrite takes; or joinedIndex, documentIndex
	path  string // JSON path, e.g. messages[2].content
	role  string
	res   engine.Result
	act   action // the strongest of its matches' actions
	// cover is res's text's engine.Cover, for rescanning its sanitized
	// copy: nil but for a JSON string of the body.
	cover *engine.Cover
}

// outcome is the scan of one request.
type outcome struct {
	verdict    engine.Verdict // the worst of its texts'
	act        action         // the strongest of its texts' actions
	blockedAt  string         // the path of the text that decided a block
	flagged    []flagged      // in text order, then the joined texts
	pieces     []piece        // of the joined texts' matches (joined.go)
	joined     []int          // the texts of the groups whose joined text matched
	rules      []string       // distinct rule ids, in order of first match
	categories []string       // distinct categories, in order of first match
	cached     int            // texts found in the safe-text cache
	resumed    int            // bytes of the body left unread (resume.go)
	bytes      int            // bytes of text the engine scanned
	unscanned  int            // files and token-id prompts passed unread (documents.go)
	refusal    *failure       // set when the request must be refused unscanned
	client     uint64         // whose safe-text cache entries scan used
	// edits[i] makes sanitize's replacement of text i from it, when one
	// round of edits did (llmreq.Request.AppendSplices).
	edits map[int][]llmreq.Edit
	// covers are those of sanitize's copies, released with the flagged
	// texts' (release).
	covers []*engine.Cover
}

// release hands back the memory of the sanitized copies the engine made
// for o (engine.Cover.Release), once the request is done with them: the
// body sent upstream was written from them.
func (o *outcome) release() {
	for i := range o.flagged {
		o.flagged[i].cover.Release()
	}
	for _, c := range o.covers {
		c.Release()
	}
}

// scan runs the engine over every text whose role is scanned, but those
// the safe-text cache holds for client, and over the text parts of each
// message joined.
func (f *Firewall) scan(req *llmreq.Request, client uint64) *outcome {
	o := &outcome{verdict: engine.Safe, client: client}
	for i := range req.Texts {
		t := &req.Texts[i]
		if !f.scans(t.Role) {
			continue
		}
		if res, cov, hit := f.scanCachedCover(t.Value, client, o); !hit && len(res.Matches) > 0 {
			f.record(o, flagged{index: i, path: t.Path, role: t.Role, res: res, cover: cov})
		}
	}
	f.scanJoined(req, o, client)
	f.scanUnreadable(req, o, client)
	return o
}

// scanCached scans text unless the safe-text cache holds it for client
// (hit), and remembers it when the scan found nothing.
func (f *Firewall) scanCached(text string, client uint64, o *outcome) (res engine.Result, hit bool) {
	res, _, hit = f.scanCachedCover(text, client, o)
	return res, hit
}

// scanCachedCover is scanCached, and also returns the text's
// engine.Cover when it has a match, for sanitize.
func (f *Firewall) scanCachedCover(text string, client uint64, o *outcome) (res engine.Result, cov *engine.Cover, hit bool) {
	cacheable := f.cache != nil && text != ""
	var p probe
	if cacheable {
		if p, hit = f.cache.lookup(client, text); hit {
			o.cached++
			return res, nil, true
		}
	}
	res, cov = f.engine.ScanStringCover(text)
	o.bytes += len(text)
	if len(res.Matches) == 0 && cacheable {
		f.cache.remember(&p, client, text)
	}
	return res, cov, false
}

// record adds a flagged text to o: its verdict, action and rules.
func (f *Firewall) record(o *outcome, fl flagged) {
	if fl.res.Verdict.Rank() > o.verdict.Rank() {
		o.verdict = fl.res.Verdict
	}
	fl.act = f.policy.strongest(fl.res.Matches)
	if fl.act == doBlock && o.act < doBlock {
		o.blockedAt = fl.path
	}
	o.act = max(o.act, fl.act)
	o.flagged = append(o.flagged, fl)
	for _, m := range fl.res.Matches {
		o.rules = appendNew(o.rules, m.Rule)
		o.categories = appendNew(o.categories, m.Category)
	}
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

// sanitize returns the sanitized copies of the texts in which a match
// acts (sanitize or block), for Rewrite, and the request's action:
// sanitize, or block when a copy cannot be made clean. A text's copy
// replaces its own acting matches and the acting pieces of joined matches
// that fall in it. Each copy is scanned again, since replacing a span can
// join the text around it into a new match: a copy that would be blocked
// blocks the request; one that would be sanitized is sanitized again, up
// to maxSanitizeRounds. Each message's parts are scanned joined again
// too, as sanitized; a match that still acts there blocks.
func (f *Firewall) sanitize(req *llmreq.Request, o *outcome) (map[int]string, action) {
	repl := make(map[int]string, len(o.flagged))
	paths := make(map[int]string, len(o.flagged))
	acting := map[int][]engine.Match{}
	own := map[int]*engine.Result{}
	covers := map[int]*engine.Cover{}
	for i := range o.flagged {
		fl := &o.flagged[i]
		switch {
		case fl.act < doSanitize:
		case fl.index == documentIndex:
			// A document's extracted text cannot be written back.
			o.blockedAt = fl.path
			return nil, doBlock
		case fl.index >= 0:
			own[fl.index], paths[fl.index], covers[fl.index] = &fl.res, fl.path, fl.cover
		}
	}
	for _, p := range o.pieces {
		if f.policy.of(&p.m) >= doSanitize {
			acting[p.index] = append(acting[p.index], p.m)
			paths[p.index] = req.Texts[p.index].Path
		}
	}
	for _, i := range slices.Sorted(maps.Keys(paths)) {
		path, text := paths[i], req.Texts[i].Value
		res := own[i]
		if ps := acting[i]; len(ps) > 0 {
			// The text's own matches and the pieces, as one result.
			all := engine.Result{}
			if res != nil {
				all.Matches = append(all.Matches, res.Matches...)
			}
			all.Matches = append(all.Matches, ps...)
			res = &all
		}
		cov := covers[i]
		var eds []engine.Edit
		for round := 1; ; round++ {
			var next engine.Result
			// The first round's edits are of the text itself, and a
			// rewrite uses a long text's only.
			want := &eds
			if round > 1 || len(req.Texts[i].Value) < llmreq.MinEdited {
				want, eds = nil, nil
			}
			text, next, cov = f.sanitizeScan(text, res, cov, o.client, want)
			if cov != nil {
				o.covers = append(o.covers, cov)
			}
			act := f.policy.strongest(next.Matches)
			if act < doSanitize {
				break
			}
			if act == doBlock || round == maxSanitizeRounds {
				o.blockedAt = path
				return nil, doBlock
			}
			res = &next
		}
		repl[i] = text
		if len(eds) > 0 {
			if o.edits == nil {
				o.edits = map[int][]llmreq.Edit{}
			}
			for _, ed := range eds {
				o.edits[i] = append(o.edits[i], llmreq.Edit(ed))
			}
		}
	}
	if path, dirty := f.rescanJoined(req, repl); dirty {
		o.blockedAt = path
		return nil, doBlock
	}
	return repl, doSanitize
}

// sanitizeScan returns the copy of text without the matches of res that
// act (sanitize or block) and the copy's scan and cover, given cov, the
// cover of text (nil: unknown). With a cover the engine scans the copy
// again only around what it replaced (engine.SanitizeScan): a long
// document with a match or two costs about one scan, not two.
//
// A copy is a text like any other to the safe-text cache: one in which a
// scan found no match is remembered for client, and is not scanned when
// the client sends its original again. The original is scanned every
// time; a conversation with a flagged text sanitizes it every turn.
func (f *Firewall) sanitizeScan(text string, res *engine.Result, cov *engine.Cover, client uint64, edits *[]engine.Edit) (string, engine.Result, *engine.Cover) {
	keep := make([]engine.Match, 0, len(res.Matches))
	for i := range res.Matches {
		if f.policy.of(&res.Matches[i]) >= doSanitize {
			keep = append(keep, res.Matches[i])
		}
	}
	var p probe
	var known func([]byte) bool
	looked, hit := false, false
	if f.cache != nil {
		known = func(copy []byte) bool {
			if len(copy) == 0 {
				return false
			}
			looked = true
			p, hit = f.cache.lookup(client, unsafe.String(unsafe.SliceData(copy), len(copy)))
			return hit
		}
	}
	b, next, cov := f.engine.SanitizeScan(unsafe.Slice(unsafe.StringData(text), len(text)), cov, keep, known, edits)
	// The bytes are text's own or new, and nothing keeps them past the
	// request (see policy.sanitized).
	s := unsafe.String(unsafe.SliceData(b), len(b))
	if looked && !hit && len(next.Matches) == 0 {
		f.cache.remember(&p, client, s)
	}
	return s, next, cov
}

// param is the path of the text that decided a block, reported as the
// OpenAI error's param.
func (o *outcome) param() string { return o.blockedAt }

// logFlagged writes the one warn entry of a flagged request: what matched
// and where, never the text.
func (f *Firewall) logFlagged(r *http.Request, req *llmreq.Request, o *outcome, action string) {
	f.logMatches(r, phaseRequest, string(req.API), o, action)
}

// logMatches writes the one warn entry of a flagged body of phase p (a
// request, or an MCP message), with extra fields after the common ones. The
// URL's path is logged without its query, which may hold an API key
// (Gemini's ?key=).
func (f *Firewall) logMatches(r *http.Request, p phase, api string, o *outcome, action string, extra ...zap.Field) {
	c := f.logger.Check(zapcore.WarnLevel, "prompt injection detected")
	if c == nil {
		return
	}
	ip, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		ip = r.RemoteAddr
	}
	c.Write(append([]zap.Field{
		zap.String("phase", string(p)),
		zap.String("remote_ip", ip),
		zap.String("host", r.Host),
		zap.String("uri_path", r.URL.Path),
		zap.String("verdict", string(o.verdict)),
		zap.String("action", action),
		zap.String("api", api),
		zap.Strings("rules", o.rules),
		zap.Strings("categories", o.categories),
		zap.String("rulebook", f.rulesID),
		zap.Array("texts", flaggedTexts(o.flagged)),
	}, extra...)...)
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
	enc.AddString("path", llmreq.LogPath(fl.path)) // keys are texts: never in a log
	switch fl.index {
	case joinedIndex:
		// The message's text parts joined: path is the first part's.
		enc.AddBool("joined", true)
	case documentIndex:
		enc.AddBool("document", true)
	}
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
