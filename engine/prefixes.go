package engine

import (
	"bytes"
	"slices"
)

// The prefixes: the automata that find where rules' matches may begin
// (built once per rulebook), and the candidates they give a view.

// maxBytePrefixes is how many prefixes of one byte a rule may have found
// with memchr, each a pass over the view.
const maxBytePrefixes = 3

// minimalPrefixes drops each prefix that begins with another one ("<<"
// after "<", "END OF THE " after "END OF "): wherever it occurs the other
// does too, at the same start, so it only added duplicate candidates, and
// with its other length, disorder to sort out.
func minimalPrefixes(ps [][]byte) [][]byte {
	slices.SortStableFunc(ps, func(a, b []byte) int { return len(a) - len(b) })
	var kept [][]byte
	for _, p := range ps {
		if !slices.ContainsFunc(kept, func(q []byte) bool { return bytes.HasPrefix(p, q) }) {
			kept = append(kept, p)
		}
	}
	return kept
}

// gated reports whether a rule has a gate.
func (c *compiled) gated() bool {
	for i := range c.rules {
		if c.rules[i].gate != nil {
			return true
		}
	}
	return false
}

// prefixAutomata builds the prefix automaton and the union automaton from
// the rules' prefixes, or their gates' literals (col: the alphabet's
// columns).
func (c *compiled) prefixAutomata(col *byteCols) error {
	ids := map[string]int{}
	var prefixes []string
	c.prefixLens, c.prefixRules = nil, nil
	add := func(p []byte, i int) {
		id, ok := ids[string(p)]
		if !ok {
			id = len(prefixes)
			ids[string(p)] = id
			prefixes = append(prefixes, string(p))
			c.prefixLens = append(c.prefixLens, int32(len(p)))
			c.prefixRules = append(c.prefixRules, nil)
		}
		c.prefixRules[id] = append(c.prefixRules[id], int32(i))
	}
	for i := range c.rules {
		r := &c.rules[i]
		// A rule's prefixes of one byte are found with memchr, not by
		// the automaton: a text of code has a newline or '<' every few
		// dozen bytes, and the automaton's chains stopped at each. A
		// rule with many (a class of letters) keeps them in the
		// automaton, one pass for all of them. A gated rule's go to
		// memchr when the union automaton's pass has not found its
		// gate's literals.
		oneByte := 0
		for _, p := range r.prefixes {
			if len(p) == 1 {
				oneByte++
			}
		}
		r.bytePrefixes = nil
		for _, p := range r.prefixes {
			if len(p) == 1 && oneByte <= maxBytePrefixes {
				r.bytePrefixes = append(r.bytePrefixes, p)
			} else if r.gate == nil {
				add(p, i)
			}
		}
		if r.gate != nil {
			for _, l := range r.gate.lits {
				add(l, i)
			}
		}
	}
	var err error
	if c.prefixAC, err = newAhoCorasick(prefixes, col, c.alphabet.Size, nil); err != nil {
		return err
	}
	c.union = c.newUnionAC(c.literals, prefixes, col)
	return nil
}

// keepCandidates notes which rules have candidates from the view just
// matched, for the leetspeak view that follows it: they stay in m.cands,
// which only findCandidates writes.
func (m *matcher) keepCandidates(c *compiled) {
	for i := range c.rules {
		m.kept[i] = m.active[i] && c.rules[i].hasPrefix
	}
}

// findCandidates fills m.cands for the active rules with prefixes: the
// positions where a match can start, in order (one pass over the view for
// all of them). In the leetspeak view, a rule active in the original view
// too gets the original's candidates and those of the prefixes that hold a
// leetspeak character. That may keep a candidate whose prefix the folding
// changed; a candidate is only where the pattern is tried, so one too many
// costs a try and never a wrong match.
func (c *compiled) findCandidates(v *view, m *matcher) {
	leet := v.leet != nil
	prefixes, walked, near := 0, 0, false
	for i := range c.rules {
		r := &c.rules[i]
		m.full[i], m.near[i], m.walk[i] = false, false, false
		if !m.active[i] || !r.hasPrefix {
			continue
		}
		if leet && m.kept[i] {
			m.near[i], near = true, true // the original's candidates, and more
			m.nkept[i] = len(m.cands[i])
			continue
		}
		m.full[i] = true
		m.cands[i] = m.cands[i][:0]
		if r.gate != nil && m.unionHits && !leet {
			// The union automaton's pass found the gate's literals.
			m.walk[i] = true
			walked += len(r.gate.lits)
			continue
		}
		m.walk[i] = r.gate == nil // else the automata hold its literals
		prefixes += len(r.prefixes)
		walked += len(r.prefixes) - len(r.bytePrefixes)
		if r.atStart {
			m.cands[i] = append(m.cands[i], 0)
		}
	}
	if near && m.unionHits {
		c.union.candidates(m.uhits, m.near, c.prefixRules, c.prefixLens, m.cands)
	} else if near {
		col := &c.prefixCols[v.kind]
		window := func(lo, hi int) {
			c.prefixAC.candidates(v.src[lo:hi], lo, col, m.near, c.prefixRules, c.prefixLens, m.cands, &m.later)
		}
		leetWindows(c.prefixAC, v.src, &c.prefixLit[v.kind], v.leet, window)
	}
	if near {
		// A prefix of one byte the folding made is at a leetspeak
		// character.
		tab := c.viewTabs[v.kind]
		for i := range c.rules {
			if !m.near[i] {
				continue
			}
			for _, p := range c.rules[i].bytePrefixes {
				for _, at := range v.leet {
					if tab[v.src[at]] == p[0] {
						m.cands[i] = append(m.cands[i], at)
					}
				}
			}
		}
	}
	// The whole view's prefix hits come with the union automaton's pass.
	// Without it, a few prefixes are found one by one with memchr (a pass
	// of the prefix automaton costs more), and those of one byte, which
	// the automata leave out, always. Each prefix's starts are in order,
	// and are merged into the rest.
	oneByOne := false
	switch {
	case walked == 0:
	case m.unionHits && !leet:
		c.union.candidates(m.uhits, m.walk, c.prefixRules, c.prefixLens, m.cands)
	case prefixes <= 4:
		oneByOne = true
	default:
		c.prefixAC.candidates(v.src, 0, &c.prefixCols[v.kind], m.walk, c.prefixRules, c.prefixLens, m.cands, &m.later)
	}
	tab := c.viewTabs[v.kind]
	for i := range c.rules {
		r := &c.rules[i]
		switch {
		case r.gate != nil && m.walk[i]: // the gate's literals' hits
			m.cands[i] = sortCandidates(m.cands[i])
			m.gateStarts(r.gate, i, 0, v.src, tab)
		case m.full[i]:
			m.cands[i] = sortCandidates(m.cands[i])
			memchr := r.bytePrefixes
			if oneByOne {
				memchr = r.prefixes
			}
			for _, p := range memchr {
				n := len(m.cands[i])
				m.cands[i] = c.appendOccurrences(m.cands[i], v, p)
				m.mergeTail(i, n)
			}
		case m.near[i] && len(m.cands[i]) > m.nkept[i]:
			// The kept ones are in order already; those near leetspeak
			// come after them, are put in order of their own, and merged in.
			n := m.nkept[i]
			added := sortCandidates(m.cands[i][n:])
			m.cands[i] = m.cands[i][:n+len(added)]
			if r.gate != nil {
				m.gateStarts(r.gate, i, n, v.src, tab) // its literals' hits
			}
			m.mergeTail(i, n)
		}
	}
}

// sortCandidates sorts starts and drops repeats. Hits arrive by end, so
// the starts of prefixes of several lengths are out of order only among
// hits a few bytes apart, and an insertion sort puts them in order in
// about one pass; a text full of newlines or '<' gives tens of thousands,
// which a general sort took a third of the scan to order. Past a budget
// of moves (hits of leetspeak windows that overlap) it leaves the rest to
// slices.Sort.
func sortCandidates(c []int32) []int32 {
	budget := 4*len(c) + 64
	for i := 1; i < len(c); i++ {
		x := c[i]
		j := i
		for ; j > 0 && c[j-1] > x; j-- {
			c[j] = c[j-1]
		}
		c[j] = x
		if budget -= i - j; budget < 0 {
			slices.Sort(c)
			break
		}
	}
	return slices.Compact(c)
}

// mergeTail merges rule i's candidates from n on into those before n,
// both in order and without repeats.
func (m *matcher) mergeTail(i, n int) {
	m.merged = mergeSorted(m.merged[:0], m.cands[i][:n], m.cands[i][n:])
	m.cands[i] = append(m.cands[i][:0], m.merged...)
}

// mergeSorted appends the union of a and b, each in increasing order
// without repeats, to dst, in order and without repeats.
func mergeSorted(dst, a, b []int32) []int32 {
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] < b[0]:
			dst, a = append(dst, a[0]), a[1:]
		case b[0] < a[0]:
			dst, b = append(dst, b[0]), b[1:]
		default:
			dst, a, b = append(dst, a[0]), a[1:], b[1:]
		}
	}
	return append(append(dst, a...), b...)
}

// appendOccurrences appends where prefix p (alphabet bytes) occurs in v.
// When one byte reads as p's first, memchr finds the places to check;
// otherwise the view's encoded bytes are searched.
func (c *compiled) appendOccurrences(dst []int32, v *view, p []byte) []int32 {
	first := c.preimage[v.kind][p[0]]
	switch first {
	case noPreimage:
		return dst
	case manyPreimages:
		enc := c.encoded(v)
		for from := 0; ; {
			k := bytes.Index(enc[from:], p)
			if k < 0 {
				return dst
			}
			dst = append(dst, int32(from+k))
			from += k + 1
		}
	}
	tab, src := c.viewTabs[v.kind], v.src
	for from := 0; ; {
		k := bytes.IndexByte(src[from:], byte(first))
		if k < 0 || from+k+len(p) > len(src) {
			return dst
		}
		at := from + k
		ok := true
		for j := 1; j < len(p); j++ {
			if tab[src[at+j]] != p[j] {
				ok = false
				break
			}
		}
		if ok {
			dst = append(dst, int32(at))
		}
		from = at + 1
	}
}
