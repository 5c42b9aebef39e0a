package engine

import "slices"

// Sanitize writes the sanitized copy of raw (docs/SPEC.md section 6) for the
// matches given, which may be any of a Result's matches, or spans of
// another text's matches that fall in raw (a match across the parts of a
// message, cut at their edges): overlapping or touching matches form one
// group, replaced by "[removed: <category>]" of the group's outranking
// match; every other byte is kept. Positions are UTF-16 units of raw, as in
// Match; a match of a rule the engine does not have, or one outside raw,
// is ignored. With every match of Scan(raw) it returns Scan(raw).Sanitized.
func (e *Engine) Sanitize(raw []byte, ms []Match) []byte {
	return e.sanitizeCopy(raw, ms, nil)
}

// sanitizeCopy is Sanitize, and appends the copy's Edits to edits when
// it is not nil.
func (e *Engine) sanitizeCopy(raw []byte, ms []Match, edits *[]Edit) []byte {
	var t text
	decodeText(raw, &t)
	n := t.len()
	spans := make([]span, 0, len(ms))
	for _, m := range ms {
		r := e.ruleIndex(m.Rule)
		if r < 0 || m.Start < 0 || m.End > n || m.Start >= m.End {
			continue
		}
		spans = append(spans, span{rule: int32(r), start: int32(m.Start), end: int32(m.End)})
	}
	if len(spans) == 0 {
		return raw
	}
	sortSpans(spans)
	if edits == nil {
		return e.sanitize(&t, spans)
	}
	var groups []edit
	out := e.sanitizeEdits(&t, spans, &groups, false)
	*edits = appendEdits(*edits, groups, out)
	return out
}

// sortSpans sorts matches' spans by start, then rule.
func sortSpans(spans []span) {
	slices.SortFunc(spans, func(a, b span) int {
		if a.start != b.start {
			return int(a.start - b.start)
		}
		return int(a.rule - b.rule)
	})
}

// ruleIndex returns the index of the rule with id, or -1.
func (e *Engine) ruleIndex(id string) int {
	for i := range e.c.rules {
		if e.c.rules[i].id == id {
			return i
		}
	}
	return -1
}
