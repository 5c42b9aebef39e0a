package engine

import (
	"slices"
	"unicode/utf8"
	"unsafe"
)

// Rescanning a sanitized copy. A firewall that sanitizes a text scans the
// copy again, since a replacement can join the text around it into a new
// match; for a long document with a match or two, that second scan was as
// dear as the first. The copy differs from the text only in its groups,
// so SanitizeScan scans only windows around them, and takes the rest from
// the first scan, through the Stream's cuts (see Stream, "Exactness"):
//
//   - A cut c of a whole text (the unit before it a cut unit, inside no
//     match of any view, dropped ones included) splits its matches: those
//     from c on are the matches of the text from c on, scanned alone after
//     the pad, and those before it end before c-1. So the text's matches
//     between two cuts, its cover included, are those of that stretch.
//   - A window of the copy starts at a cut c1 before a group: the unit
//     before it is a cut unit and the first scan's cover leaves it free,
//     and every attempt before c1 is final on the text before the group
//     (holdPoint), so it has the same outcome in the copy, which differs
//     only after. The window, scanned from c1 with the pad, reaches past
//     the group to a cut c2 of its own scan (as the stream finds one) that
//     the first scan's cover leaves free too: a cut of both texts, after
//     which the copy is the text again.
//   - Between windows, the copy is the text between two of its cuts: the
//     first scan's matches there are its matches.
//
// So when every match of the text lies in a group (all of them acted),
// and no window has a match, the copy has none: the common outcome, and
// the only one taken this way. Anything else (a match found or kept, a
// rulebook the stream cannot bound) scans the copy whole, which gives the
// same result.

// A Cover is what SanitizeScan needs of the scan of a text besides its
// result: where every view's matches lie, dropped ones included.
type Cover struct {
	n, size  int  // the text's length in units and in bytes
	ascii    bool // the text is ASCII: units are bytes
	covered  []span
	reported []span // the result's matches, with their rules
	// sanitized is the result's copy, which SanitizeScan with every match
	// of the result returns, and edits its groups.
	sanitized []byte
	edits     []edit
}

// ScanCover is Scan, and also returns raw's Cover for SanitizeScan, or nil
// when raw has no match.
func (e *Engine) ScanCover(raw []byte) (Result, *Cover) {
	st := e.pool.Get().(*scanState)
	defer e.release(st)
	st.spans, st.cover, st.keepCover = st.spans[:0], st.cover[:0], true
	decodeLazy(raw, &st.t)
	e.collect(st)
	st.keepCover, st.keepEdits = false, true
	res := e.finish(st)
	st.keepEdits = false
	if len(res.Matches) == 0 {
		return res, nil
	}
	cov := &Cover{n: st.t.len(), size: len(raw), ascii: st.t.ascii, covered: unionSpans(st.cover), sanitized: res.Sanitized, edits: slices.Clone(st.edits)}
	for _, m := range res.Matches {
		cov.reported = append(cov.reported, span{rule: int32(e.ruleIndex(m.Rule)), start: int32(m.Start), end: int32(m.End)})
	}
	return res, cov
}

// ScanStringCover is ScanCover for a string, without copying it.
func (e *Engine) ScanStringCover(s string) (Result, *Cover) {
	return e.ScanCover(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// unionSpans returns the units spans cover, as disjoint spans in order.
func unionSpans(spans []span) []span {
	out := make([]span, 0, len(spans))
	for _, s := range spans {
		if s.end > s.start {
			out = append(out, span{start: s.start, end: s.end})
		}
	}
	slices.SortFunc(out, func(a, b span) int { return int(a.start - b.start) })
	merged := out[:0]
	for _, s := range out {
		if k := len(merged) - 1; k >= 0 && s.start <= merged[k].end {
			merged[k].end = max(merged[k].end, s.end)
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// covers reports whether unit u lies in a match of the text.
func (c *Cover) covers(u int) bool {
	k, _ := slices.BinarySearchFunc(c.covered, u, func(s span, u int) int { return int(s.start) - u })
	// covered[k-1] is the last span starting at or before u, or covered[k]
	// starts at u.
	if k < len(c.covered) && int(c.covered[k].start) == u {
		return true
	}
	return k > 0 && u < int(c.covered[k-1].end)
}

// An edit is one group of a sanitized copy: units [us, ue) and bytes
// [bs, be) of the copy hold its replacement, and du is how many units the
// copy has more than the text after it.
type edit struct {
	us, ue, bs, be, du int
	from, to           int // the group's units in the text
	rawFrom, rawTo     int // and its bytes
}

// An Edit is one replacement that makes a sanitized copy: the text's bytes
// [From, To) are replaced by With. A copy is its text with its Edits
// applied, in order.
type Edit struct {
	From, To int
	With     string
}

// appendEdits appends to dst the Edits of edits, whose replacements are
// in the copy out.
func appendEdits(dst []Edit, edits []edit, out []byte) []Edit {
	for _, ed := range edits {
		dst = append(dst, Edit{From: ed.rawFrom, To: ed.rawTo, With: string(out[ed.bs:ed.be])})
	}
	return dst
}

// SanitizeScan returns Sanitize(raw, ms), its Scan and its Cover (as
// ScanCover), given cov, the Cover of raw from ScanCover (nil: none, the
// copy is scanned whole). When known (if not nil) reports the copy as one
// a scan found no match in before, the copy is taken for safe unscanned: a
// scan's outcome is the copy's bytes' alone. When edits is not nil, the
// Edits that make the copy from raw are appended to it: a caller can then
// write the copy as raw's own encoding with only the edits changed.
func (e *Engine) SanitizeScan(raw []byte, cov *Cover, ms []Match, known func(copy []byte) bool, edits *[]Edit) ([]byte, Result, *Cover) {
	if cov == nil || cov.sanitized == nil || cov.size != len(raw) { // none, released, or another text's
		out := e.sanitizeCopy(raw, ms, edits)
		if known != nil && known(out) {
			return out, Result{Verdict: Safe, Sanitized: out}, nil
		}
		res, c := e.ScanCover(out)
		return out, res, c
	}
	t := text{raw: raw, ascii: cov.ascii}
	spans := make([]span, 0, len(ms))
	for _, m := range ms {
		r := e.ruleIndex(m.Rule)
		if r < 0 || m.Start < 0 || m.End > cov.n || m.Start >= m.End {
			continue
		}
		spans = append(spans, span{rule: int32(r), start: int32(m.Start), end: int32(m.End)})
	}
	if len(spans) == 0 {
		res, c := e.ScanCover(raw)
		return raw, res, c
	}
	sortSpans(spans)
	var groups []edit
	var out []byte
	if slices.EqualFunc(spans, cov.reported, func(a, b span) bool { return a.rule == b.rule && a.start == b.start && a.end == b.end }) {
		// Every match of the result: its copy.
		groups, out = cov.edits, cov.sanitized
	} else {
		out = e.sanitizeEdits(&t, spans, &groups, false)
	}
	if edits != nil {
		*edits = appendEdits(*edits, groups, out)
	}
	if known != nil && known(out) {
		return out, Result{Verdict: Safe, Sanitized: out}, nil
	}
	if !e.rescanWindows(out, cov, groups) {
		res, c := e.ScanCover(out)
		return out, res, c
	}
	return out, Result{Verdict: Safe, Sanitized: out}, nil
}

// rescanWindows reports whether the copy out of a text with cover cov,
// edited by edits, is shown to have no match by scanning windows around
// the edits (see above); false when it may have one.
func (e *Engine) rescanWindows(out []byte, cov *Cover, edits []edit) bool {
	e.streamOnce.Do(func() { e.stream = streamInfoOf(e) })
	si := e.stream
	if !si.ok {
		return false
	}
	// Every match of the text is replaced.
	k := 0
	for _, r := range cov.reported {
		for k < len(edits) && edits[k].to < int(r.end) {
			k++
		}
		if k == len(edits) || int(r.start) < edits[k].from {
			return false
		}
	}
	var count, settle [64]int
	// cu, cb: a cut of the copy (or its start), in units and bytes; the
	// copy before it has no match. du: the copy's units less the text's
	// there.
	cu, cb, du := 0, 0, 0
	for j := 0; j < len(edits); {
		ed := &edits[j]
		// The window's start: a cut before the edit.
		var ok bool
		if cu, cb, ok = leftCut(si, out, cov, cu, cb, du, ed, &count, &settle); !ok {
			return false
		}
		var done bool
		if cu, cb, du, j, done, ok = e.window(si, out, cov, cu, cb, edits, j, &count, &settle); !ok {
			return false
		}
		if done {
			return true
		}
	}
	// After the last window the copy is the text, whose matches were all
	// replaced.
	return true
}

// leftCut returns a cut of the copy at or after the cut (cu, cb) and at or
// before the edit, where a window can start, as units and bytes; du is the
// copy's units less the text's before the edit. ok is false when there is
// none.
func leftCut(si *streamInfo, out []byte, cov *Cover, cu, cb, du int, ed *edit, count, settle *[64]int) (int, int, bool) {
	var piece text
	for reach := 512; ; reach *= 4 {
		pb := max(cb, ed.bs-reach)
		if pb > cb {
			// Decoding from an ASCII byte agrees with decoding the whole
			// text (no sequence holds one), and the piece's first units
			// belong to no %XX escape begun before it, which holdPoint
			// could not see.
			for pb < ed.bs && (out[pb] >= utf8.RuneSelf || out[pb-1] == '%' || pb >= 2 && out[pb-2] == '%') {
				pb++
			}
			if pb == ed.bs {
				continue
			}
		}
		decodeText(out[pb:ed.bs], &piece)
		m := piece.len()
		pu := ed.us - m
		h, pending := si.holdPoint(&piece, 0, m, count, settle)
		if pending != 0 && pb > cb {
			continue // attempts before the piece may still be open
		}
		for c := h; c >= 1; c-- {
			if cutUnit(piece.at(c-1)) && !cov.covers(pu+c-1-du) {
				at := textCursor{t: &piece}
				return pu + c, pb + at.byteAt(c), true
			}
		}
		if pb == cb {
			return cu, cb, true
		}
	}
}

// window scans the copy from the cut (cu, cb) past edits[j] and the edits
// close after it, to a cut of both texts, which it returns with the
// copy's units less the text's there and the next edit; done when the
// window reached the end. ok is false when the window has a match or no
// cut was found before the end.
func (e *Engine) window(si *streamInfo, out []byte, cov *Cover, cu, cb int, edits []edit, j int, count, settle *[64]int) (nu, nb, du, next int, done, ok bool) {
	off := 0
	if cu > 0 {
		off = 1
	}
	st := e.pool.Get().(*scanState)
	defer e.release(st)
	var buf []byte
	for reach := 512; ; reach *= 4 {
		k := j
		end := edits[k].be + reach
		for k+1 < len(edits) && edits[k+1].bs <= end {
			k++
			end = edits[k].be + reach
		}
		for end < len(out) && out[end] >= utf8.RuneSelf {
			end++
		}
		closed := end >= len(out)
		if closed {
			end = len(out)
		}
		buf = buf[:0]
		if off == 1 {
			buf = append(buf, si.pad)
		}
		buf = append(buf, out[cb:end]...)
		st.spans, st.cover, st.keepCover = st.spans[:0], st.cover[:0], true
		decodeText(buf, &st.t)
		e.collect(st)
		st.keepCover = false
		t := &st.t
		n := t.len()
		if closed {
			return 0, 0, 0, 0, true, len(st.spans) == 0
		}
		h, _ := si.holdPoint(t, off, n, count, settle)
		// The cut's unit after the last edit, in the window's units.
		after := edits[k].ue - cu + off
		du = edits[k].du
		covered := unionSpans(st.cover)
		c := 0
		for i := h - 1; i >= after && i >= off; i-- {
			if !cutUnit(t.at(i)) || coveredAt(covered, i) || cov.covers(cu+i-off-du) {
				continue
			}
			c = i + 1
			break
		}
		if c == 0 {
			continue
		}
		for _, s := range st.spans {
			if int(s.start) < c {
				return 0, 0, 0, 0, false, false // the copy has a match
			}
		}
		at := textCursor{t: t}
		return cu + c - off, cb + at.byteAt(c) - off, du, k + 1, false, true
	}
}

// coveredAt reports whether unit u lies in one of spans (disjoint, in
// order).
func coveredAt(spans []span, u int) bool {
	c := Cover{covered: spans}
	return c.covers(u)
}
