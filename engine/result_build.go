package engine

import (
	"slices"

	"github.com/promptwall/promptwall/rulebook"
)

// finish turns the views' spans into the result: docs/SPEC.md sections 4 to 7.
func (e *Engine) finish(st *scanState) Result {
	raw := st.t.raw
	if len(st.spans) == 0 {
		// Nothing replaced: the input is its own sanitized copy (most texts
		// are safe, and copying them cost the firewall an allocation each).
		return Result{Verdict: Safe, Sanitized: raw}
	}
	spans := st.spans
	// Section 4: per rule, merge spans that overlap or touch.
	slices.SortFunc(spans, func(a, b span) int {
		if a.rule != b.rule {
			return int(a.rule - b.rule)
		}
		return int(a.start - b.start)
	})
	merged := spans[:0]
	for _, s := range spans {
		if k := len(merged) - 1; k >= 0 && merged[k].rule == s.rule && merged[k].end >= s.start {
			merged[k].end = max(merged[k].end, s.end)
			merged[k].views |= s.views
			continue
		}
		merged = append(merged, s)
	}
	slices.SortFunc(merged, func(a, b span) int {
		switch {
		case a.start != b.start:
			return int(a.start - b.start)
		case a.rule != b.rule:
			return int(a.rule - b.rule)
		}
		return int(a.end - b.end)
	})
	res := Result{Verdict: Suspicious, Matches: make([]Match, len(merged)), CategoryCounts: map[string]int{}}
	for i, s := range merged {
		r := &e.c.rules[s.rule]
		views := make([]string, 0, 2)
		for v := 0; v < 4; v++ {
			if s.views&(1<<v) != 0 {
				views = append(views, viewNames[v])
			}
		}
		res.Matches[i] = Match{Rule: r.id, Category: r.category, Severity: r.severity, Start: int(s.start), End: int(s.end), Views: views}
		res.CategoryCounts[r.category]++
		if r.severity == rulebook.Malicious {
			res.Verdict = Malicious
		}
	}
	if st.keepEdits {
		// A Cover's copy, which Cover.Release may hand back.
		st.edits = st.edits[:0]
		res.Sanitized = e.sanitizeTo(takeCopy(len(raw)+32), &st.t, merged, &st.edits, false)
	} else {
		res.Sanitized = e.sanitizeEdits(&st.t, merged, nil, false)
	}
	return res
}

// sanitize replaces each group of overlapping or touching matches with
// "[removed: <category>]" (docs/SPEC.md section 6); bytes outside the groups are
// kept exactly, invalid UTF-8 included. merged is sorted by start.
func (e *Engine) sanitize(t *text, merged []span) []byte {
	return e.sanitizeEdits(t, merged, nil, false)
}

// sanitizeEdits is sanitize, and appends each group to edits when it is
// not nil; with dry, it writes no copy (it returns nil) and only lists the
// groups.
func (e *Engine) sanitizeEdits(t *text, merged []span, edits *[]edit, dry bool) []byte {
	var out []byte
	if !dry {
		out = make([]byte, 0, len(t.raw)+32)
	}
	return e.sanitizeTo(out, t, merged, edits, dry)
}

// sanitizeTo is sanitizeEdits writing the copy into out, which has room for
// the text and 32 bytes (the copy grows past that with many groups).
func (e *Engine) sanitizeTo(out []byte, t *text, merged []span, edits *[]edit, dry bool) []byte {
	raw := t.raw
	size, du := 0, 0 // the copy's length so far; its units less the text's
	last := 0        // byte offset copied up to
	at := textCursor{t: t}
	for i := 0; i < len(merged); {
		g := merged[i]
		best := g
		j := i + 1
		for ; j < len(merged) && merged[j].start <= g.end; j++ {
			g.end = max(g.end, merged[j].end)
			if e.outranks(merged[j], best) {
				best = merged[j]
			}
		}
		// from, to: the units the replaced bytes hold, which begin a
		// character before a position inside a surrogate pair.
		from, to := int(g.start), int(g.end)
		bs := at.byteAt(from)
		if !t.ascii {
			from = at.u
		}
		be := at.byteAt(to)
		if !t.ascii {
			to = at.u
		}
		category := e.c.rules[best.rule].category
		if !dry {
			out = append(out, raw[last:bs]...)
			out = append(out, "[removed: "...)
			out = append(out, category...)
			out = append(out, ']')
		}
		ob := size + bs - last
		size = ob + len("[removed: ]") + len(category)
		if edits != nil {
			us := from + du
			ue := us + len("[removed: ]") + unitLen([]byte(category))
			du += ue - us - (to - from)
			*edits = append(*edits, edit{us: us, ue: ue, bs: ob, be: size, du: du, from: from, to: to, rawFrom: bs, rawTo: be})
		}
		last = be
		i = j
	}
	if dry {
		return nil
	}
	return append(out, raw[last:]...)
}

// outranks: higher severity, then the longer match, then the earlier rule.
func (e *Engine) outranks(a, b span) bool {
	sa, sb := e.c.rules[a.rule].severity.Rank(), e.c.rules[b.rule].severity.Rank()
	if sa != sb {
		return sa > sb
	}
	la, lb := a.end-a.start, b.end-b.start
	if la != lb {
		return la > lb
	}
	return a.rule < b.rule
}

// unitLen is the length of b in UTF-16 units, decoded as decodeText does.
func unitLen(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		size, units := charAt(b, i)
		i, n = i+size, n+units
	}
	return n
}
