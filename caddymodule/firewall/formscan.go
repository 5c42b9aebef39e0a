package firewall

import (
	"bytes"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/llmreq"
)

// serveMultipart scans a multipart body and blocks it, forwards a rebuilt
// copy with the sanitized parts, or forwards it as it came. The body is
// read as a stream into a spool (memory, then a temporary file), bounded by
// max_upload; only the parts the scan reads are held in memory, bounded by
// max_body together. A body with a Content-Encoding is decoded first, in
// memory, so it is bounded by max_body as a whole.
func (f *Firewall) serveMultipart(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, fam string, bf bodyForm) error {
	if r.ContentLength > f.MaxUpload {
		return f.refuse(w, r, fam, tooLarge(f.MaxUpload))
	}
	sp := &spool{max: f.MaxUpload}
	defer sp.close()
	var src io.Reader = r.Body
	var encoded []byte // the body as sent, when it had to be decoded
	if enc := r.Header.Get("Content-Encoding"); enc != "" {
		raw, body, decoded, err := readBody(r.Body, r.ContentLength, enc, f.MaxBody)
		if err != nil {
			return f.readFailure(w, r, fam, err)
		}
		if decoded {
			encoded = raw
		}
		src = bytes.NewReader(body)
	}
	fm, err := readForm(src, bf.boundary, sp, f.MaxBody)
	if err != nil {
		return f.readFailure(w, r, fam, err)
	}
	scrubTrailers(r)
	units, fe := formUnits(fm, bf.ascii)
	if fe != nil {
		return f.refuse(w, r, fam, fe)
	}
	out, action := f.judge(r, units, fm.unscanned+bf.unscanned)
	switch action {
	case actionRefuse:
		return f.refuse(w, r, fam, out.refusal)
	case ActionBlock:
		writeBlock(w, fam, out)
		return nil
	case ActionSanitize:
		rebuilt := &spool{max: math.MaxInt64}
		defer rebuilt.close()
		ct, err := rebuildForm(sp, bf.boundary, bf, partReplacements(fm, units), rebuilt)
		if err != nil {
			return caddyhttp.Error(http.StatusInternalServerError, err)
		}
		r.Header.Set("Content-Type", ct)
		r.Header.Del("Content-Encoding")
		dropBodyDigests(r)
		return f.forwardSpool(w, r, next, rebuilt)
	}
	if encoded != nil {
		setBody(r, encoded)
		return next.ServeHTTP(w, r)
	}
	return f.forwardSpool(w, r, next, sp)
}

// forwardSpool sends the spooled body upstream; the spool is the body's
// until both the next handler and the body are done with it.
func (f *Firewall) forwardSpool(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, sp *spool) error {
	own := *sp
	*sp = spool{} // the caller's deferred close now has nothing to close
	body := newSpoolBody(&own, r)
	r.Body = body
	r.TransferEncoding = nil
	r.GetBody = nil
	r.ContentLength = own.n
	r.Header.Set("Content-Length", strconv.FormatInt(own.n, 10))
	err := next.ServeHTTP(w, r)
	body.release()
	return err
}

// readFailure refuses a body that could not be read: a failure in the
// client's body is refused in the family's shape; a broken connection
// is the client's going away.
func (f *Firewall) readFailure(w http.ResponseWriter, r *http.Request, fam string, err error) error {
	var fe *failure
	if errors.As(err, &fe) {
		return f.refuse(w, r, fam, fe)
	}
	return caddyhttp.Error(http.StatusBadRequest, err)
}

// formUnits turns the kept parts of a form into scan units. A file is
// JSON Lines by its name or type, or as the file of a batch, fine-tuning
// or evals upload (purpose), and then every line must be JSON; other text
// that is JSON or JSON Lines is read as such, whatever name the part has
// (so a field name that cannot be read changes nothing); any other text is
// one text; a PDF is its extracted text, refused when no extractor reads
// it.
func formUnits(fm *form, ascii bool) ([]scanUnit, *failure) {
	var units []scanUnit
	texts := 0
	for i := range fm.parts {
		p := &fm.parts[i]
		before := len(units)
		if (p.ascii || fm.ascii || ascii) && !isASCII(p.data) {
			return nil, errNotASCII
		}
		name := p.name
		if name == "" {
			name = "part" + strconv.Itoa(p.index)
		}
		switch {
		case p.kind == fileText && (jsonlFile(p.mediaType, p.filename) || !p.field && fm.jsonl):
			us, fe := jsonlUnits(i, name, p.data)
			if fe != nil {
				return nil, fe
			}
			units = append(units, us...)
		case p.kind == fileText:
			us, ok, fe := jsonTextUnits(i, name, p.data)
			if fe != nil {
				return nil, fe
			}
			if ok {
				units = append(units, us...)
				break
			}
			text, err := extractFile(p.kind, p.data, int64(len(p.data)))
			if err != nil {
				return nil, errUnscannableFile
			}
			units = append(units, textUnit(i, name, text, len(p.data), false))
			if u, ok := jsonStringUnit(i, name, p.data); ok {
				units = append(units, u)
			}
		case p.kind == filePDF:
			text, err := extractFile(p.kind, p.data, int64(len(p.data)))
			if err != nil {
				return nil, errUnscannableFile
			}
			units = append(units, textUnit(i, name, text, len(p.data), true))
		}
		for _, u := range units[before:] {
			texts += len(u.req.Texts)
		}
		if texts > maxFormTexts {
			return nil, errTooManyTexts
		}
	}
	return units, nil
}

// jsonlPurpose reports whether a file uploaded with this purpose is JSON
// Lines (OpenAI's batch, fine-tune and evals files).
func jsonlPurpose(p string) bool {
	switch strings.ToLower(p) {
	case "batch", "fine-tune", "evals":
		return true
	}
	return false
}

// judge scans the units, then labels, logs and counts the request as
// ServeHTTP does a JSON one, and returns its outcome and action. A unit
// whose matches act and that cannot be rewritten (an extracted text) turns
// sanitize into block, and so does a sanitized copy that is not clean.
// unscanned counts the files that pass unread; with unscannable_files
// refuse they refuse the request. A refused request (action refuse, the
// failure in the outcome) is left to the caller to answer.
func (f *Firewall) judge(r *http.Request, units []scanUnit, unscanned int) (*outcome, string) {
	var client uint64
	if f.cache != nil {
		client = f.cache.clientKey(r)
	}
	start := time.Now()
	total := &outcome{verdict: engine.Safe, unscanned: unscanned}
	if unscanned > 0 && f.UnscannableFiles == UnscannedRefuse {
		total.refusal = errUnscannableFile
		return total, actionRefuse
	}
	for i := range units {
		u := &units[i]
		u.out = f.scan(u.req, client)
		mergeOutcome(total, u.out)
	}
	hs := f.hosts.of(r)
	f.metrics.observeScan(phaseRequest, hs, time.Since(start), total)
	if total.refusal != nil {
		return total, actionRefuse
	}
	act := total.act
	for i := range units {
		u := &units[i]
		if act != doSanitize || u.out.act < doSanitize {
			continue
		}
		if u.readonly {
			act, total.blockedAt = doBlock, u.out.flagged[0].path
			break
		}
		if u.repl, act = f.sanitize(u.req, u.out); act == doBlock {
			total.blockedAt = u.out.blockedAt
			break
		}
	}
	action := act.name()
	f.label(r, total, action)
	if total.verdict != engine.Safe {
		f.logFlagged(r, &llmreq.Request{API: apiForm}, total, action)
	}
	f.metrics.request(phaseRequest, hs, total.verdict, action)
	return total, action
}

// mergeOutcome adds the scan of one unit to the request's. The merged
// flagged texts keep their units' indexes: only their paths are read.
func mergeOutcome(total, o *outcome) {
	if o.verdict.Rank() > total.verdict.Rank() {
		total.verdict = o.verdict
	}
	if o.act == doBlock && total.act < doBlock {
		total.blockedAt = o.blockedAt
	}
	total.act = max(total.act, o.act)
	total.flagged = append(total.flagged, o.flagged...)
	for _, s := range o.rules {
		total.rules = appendNew(total.rules, s)
	}
	for _, s := range o.categories {
		total.categories = appendNew(total.categories, s)
	}
	total.cached += o.cached
	total.bytes += o.bytes
	total.unscanned += o.unscanned
	if total.refusal == nil {
		total.refusal = o.refusal
	}
}

// unitReplacement is the sanitized bytes of a unit judge sanitized.
func unitReplacement(u *scanUnit) []byte {
	if u.raw {
		return []byte(u.repl[0])
	}
	return u.req.AppendRewrite(nil, u.repl, u.out.edits)
}

// partReplacements splices the sanitized units into their parts' data: the
// new data of every part that changed, by the part's index in the body.
func partReplacements(fm *form, units []scanUnit) map[int][]byte {
	repl := make(map[int][]byte)
	for pi := range fm.parts {
		var out []byte
		prev := 0
		for i := range units {
			u := &units[i]
			if u.part != pi || u.repl == nil {
				continue
			}
			out = append(out, fm.parts[pi].data[prev:u.start]...)
			out = append(out, unitReplacement(u)...)
			prev = u.end
		}
		if out != nil {
			repl[fm.parts[pi].index] = append(out, fm.parts[pi].data[prev:]...)
		}
	}
	return repl
}
