package engine

import (
	"slices"

	"github.com/promptwall/promptwall/rulebook/jsregex"
)

// A gate lets a rule whose matches begin with one byte find its candidates
// from the literals every match reaches across a run of bytes
// (jsregex.Literals.Gate), instead of at every occurrence of that byte.
// RH-2's matches begin at a newline, then white space, then "system",
// "assistant" or "developer": a text of code has thousands of newlines and
// a few of those words, and every newline was a try of the pattern. The
// candidates a gate gives are the prefix bytes in the run of run bytes
// that ends at an occurrence of a literal: every match begins at one of
// them, since its bytes up to its literal are all run bytes. A candidate
// is only where the pattern is tried, so the matches are the same.
type gate struct {
	lits    [][]byte  // what findCandidates looks for, in alphabet bytes
	run     [256]bool // the bytes a match may hold before its literal
	start   [256]bool // the rule's prefixes, each one byte
	atStart bool      // a match may also begin at 0 (then the run from 0)
}

// gateOf returns r's gate from its literals' analysis, or nil. It needs
// every prefix of r to be one byte of the run. The leetspeak view keeps
// the original view's candidates (findCandidates) and adds those near its
// leetspeak characters, so the folding must not change which bytes are in
// the run or prefixes: it would change which starts reach a literal.
func (c *compiled) gateOf(r *rule, lits *jsregex.Literals) *gate {
	if !lits.HasGate || !r.hasPrefix || len(r.prefixes) == 0 || len(r.prefixes) > maxBytePrefixes {
		return nil
	}
	g := &gate{atStart: r.atStart}
	for _, b := range lits.GateRun {
		g.run[b] = true
	}
	for _, p := range r.prefixes {
		if len(p) != 1 || !g.run[p[0]] {
			return nil
		}
		g.start[p[0]] = true
	}
	for u := range 128 {
		a, l := c.ascii[u], c.asciiLeet[u]
		if g.run[a] != g.run[l] || g.start[a] != g.start[l] {
			return nil
		}
	}
	for _, s := range lits.GateLits {
		g.lits = append(g.lits, []byte(s))
	}
	g.lits = minimalPrefixes(g.lits)
	return g
}

// starts appends to dst the candidates that hits, the starts of g's
// literals in src (in order, through tab), lead back to, in order. Each
// hit's run is walked back to the hit before it at most: a run that
// reaches below an earlier hit holds that hit's run, which its own walk
// has read. So the walks read each byte once.
func (g *gate) starts(dst, hits []int32, src []byte, tab *[256]byte) []int32 {
	from := len(dst)
	bound := 0
	for _, k := range hits {
		n := len(dst)
		j := int(k) - 1
		for ; j >= bound && g.run[tab[src[j]]]; j-- {
			if g.start[tab[src[j]]] {
				dst = append(dst, int32(j))
			}
		}
		if j < 0 && g.atStart && (len(dst) == n || dst[len(dst)-1] != 0) {
			dst = append(dst, 0)
		}
		slices.Reverse(dst[n:])
		bound = max(bound, int(k))
	}
	return append(dst[:from], slices.Compact(dst[from:])...)
}

// gateStarts replaces rule i's candidates from n on, the hits of its
// gate's literals in order, by the starts they lead back to.
func (m *matcher) gateStarts(g *gate, i, n int, src []byte, tab *[256]byte) {
	m.starts = g.starts(m.starts[:0], m.cands[i][n:], src, tab)
	m.cands[i] = append(m.cands[i][:n], m.starts...)
}
