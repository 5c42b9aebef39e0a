package engine

import "slices"

// A rule whose matches are bounded (maxLen) and hold required literals is
// tried only at candidates that have, for each of its conjuncts, an
// occurrence of one of its literals within reach: a match that starts at
// p holds them all between p and p+maxLen. TC-2 begins at "use", "run" or
// "call", and holds "tool" or "function" within 40 characters: a long text
// has hundreds of the first and a few of the second, and each try read up
// to the next '.' or newline. A candidate is only where the pattern is
// tried, so the matches are the same.
//
// The occurrences are the union automaton's keyword hits (findLiterals),
// kept for the views it walks: the original view's serve the leetspeak
// view too, with those near its leetspeak characters (findLiteralsNear).
// An occurrence the folding undid only keeps a candidate in vain.

// litHit is a keyword hit: the literal's id and where it ends.
type litHit struct{ id, end int32 }

// reachRules sets, for every rule it applies to, the conjuncts inReach tries
// its candidates against, and marks their literals for findLiterals to
// keep the hits of.
func (c *compiled) reachRules(required [][][]int) {
	for i := range c.rules {
		r := &c.rules[i]
		if !r.fast || !r.hasPrefix || r.maxLen < 0 || len(required[i]) == 0 {
			continue
		}
		for _, conj := range required[i] {
			ids := make([]int32, len(conj))
			for k, l := range conj {
				ids[k] = int32(l)
				c.reachLit[l] = true
			}
			r.reach = append(r.reach, ids)
		}
	}
}

// inReach returns the candidates of rule i (m.cands[i]) that have
// every conjunct's literals within reach, in m.reachCands; or m.cands[i]
// itself when the view's keyword hits were not kept.
func (c *compiled) inReach(m *matcher, i int) []int32 {
	r := &c.rules[i]
	cands := m.cands[i]
	if r.reach == nil || !m.khitsKept || len(cands) == 0 {
		return cands
	}
	m.groupHits(len(c.literals))
	out := append(m.reachCands[:0], cands...)
	for _, conj := range r.reach {
		// Each hit of the conjunct's literals that starts at s and ends at
		// e lets a match start anywhere in [e-maxLen, s].
		iv := m.intervals[:0]
		for _, l := range conj {
			n := int32(len(c.literals[l]))
			for _, end := range m.hitEnds[m.hitAt[l]:m.hitAt[l+1]] {
				iv = append(iv, interval{end - int32(r.maxLen), end - n})
			}
		}
		m.intervals = iv
		slices.SortFunc(iv, func(a, b interval) int { return int(a.lo - b.lo) })
		kept, k, hi := out[:0], 0, int32(-1)
		for _, p := range out {
			for k < len(iv) && iv[k].lo <= p {
				hi = max(hi, iv[k].hi)
				k++
			}
			if p <= hi {
				kept = append(kept, p)
			}
		}
		if out = kept; len(out) == 0 {
			break
		}
	}
	m.reachCands = out
	return out
}

// interval is a range of starts, both ends included.
type interval struct{ lo, hi int32 }

// groupHits sorts the view's keyword hits by literal (a counting sort):
// the ends of literal l's are hitEnds[hitAt[l]:hitAt[l+1]].
func (m *matcher) groupHits(literals int) {
	if m.grouped {
		return
	}
	m.grouped = true
	m.hitAt = grow(m.hitAt, literals+1)
	clear(m.hitAt)
	for _, h := range m.khits {
		m.hitAt[h.id+1]++
	}
	for l := range literals {
		m.hitAt[l+1] += m.hitAt[l]
	}
	m.hitEnds = grow(m.hitEnds, len(m.khits))
	next := append(m.nextAt[:0], m.hitAt[:literals]...)
	for _, h := range m.khits {
		m.hitEnds[next[h.id]] = h.end
		next[h.id]++
	}
	m.nextAt = next
}

// keepHits returns where the union automaton's pass keeps keyword hits, for a
// new view's candidates.
func (m *matcher) keepHits(c *compiled) keptHits {
	m.grouped = false
	return keptHits{c.reachLit, &m.khits}
}
