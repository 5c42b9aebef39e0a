package engine

import (
	"cmp"
	"slices"
)

// The keyword and prefix automata as one, for the views whose keywords
// and prefixes are both searched: one pass over a long text instead of
// two. Its literals are the keywords (ids 0 to nkw-1, those of
// compiled.literals) and then the prefixes that are not keywords; a
// state's outputs mark keywords at once and are kept as hits for the
// prefixes, which findCandidates turns into the candidates of the rules
// then active. On the published rulebook and a 256 KiB document the pass
// costs what the keyword automaton's alone did (the prefixes mostly share
// its states), and it reports a prefix hit about every 200 bytes.
type unionAC struct {
	ac   *ahoCorasick
	cols [3]byteCols // per viewKind, as compiled.keywordCols
	nkw  int32
	pre  []int32 // literal id -> prefix id (prefixAC's), or -1
	// hasPre[s]: state s has outputs that are prefixes.
	hasPre []bool
	// sep, per viewKind, is a byte that takes every state back to the
	// start, or -1: scanWindows joins windows with it.
	sep [3]int
	// lit, per viewKind, tells the bytes that occur in literals
	// (ahoCorasick.litBytes), for leetWindows.
	lit [3][256]bool
	// cmap, per viewKind, maps bytes to columns for walkCols.
	cmap [3]colMap
}

// newUnionAC returns the automaton of keywords and prefixes, or nil when
// it does not pay: a prefix of one byte would stop the pass at every
// occurrence of that byte even for a text no rule can match, and a table
// too large costs its cache misses.
func (c *compiled) newUnionAC(keywords, prefixes []string, col *byteCols) *unionAC {
	u := &unionAC{nkw: int32(len(keywords))}
	lits := append([]string(nil), keywords...)
	ids := map[string]int{}
	for i, k := range keywords {
		ids[k] = i
	}
	u.pre = make([]int32, len(keywords), len(keywords)+len(prefixes))
	for i := range u.pre {
		u.pre[i] = -1
	}
	for p, s := range prefixes {
		if len(s) < 2 {
			return nil
		}
		id, ok := ids[s]
		if !ok {
			id = len(lits)
			ids[s] = id
			lits = append(lits, s)
			u.pre = append(u.pre, -1)
		}
		u.pre[id] = int32(p)
	}
	classes := columnsOf(c.alphabet, col, lits, &u.cols)
	ac, err := newAhoCorasick(lits, &u.cols[viewEncoded], c.alphabet.Size, classes)
	if err != nil || len(ac.delta) > maxUnionTable {
		return nil
	}
	u.ac = ac
	states := len(ac.delta) / ac.k
	for kind := range u.sep {
		u.sep[kind] = resetByte(ac, &u.cols[kind])
		u.lit[kind] = ac.litBytes(&u.cols[kind])
		u.cmap[kind] = newColMap(&u.cols[kind])
	}
	u.hasPre = make([]bool, states)
	for s := range states {
		for _, id := range ac.outs[ac.outAt[s]:ac.outAt[s+1]] {
			if u.pre[id] >= 0 {
				u.hasPre[s] = true
			}
		}
	}
	return u
}

// resetByte returns a byte whose column takes every state of ac to the
// start (row 0), or -1. A column no literal holds does, by construction:
// no suffix of a text ending in it begins a literal. It is checked here
// rather than assumed, since scanWindows is exact only with it.
func resetByte(ac *ahoCorasick, col *byteCols) int {
	for b := range 128 {
		c := col[b]
		if ac.lit[c] {
			continue
		}
		reset := true
		for row := 0; row < len(ac.delta) && reset; row += ac.k {
			reset = ac.delta[row+int(c)] == 0
		}
		if reset {
			return b
		}
	}
	return -1
}

// keptHits is where the union automaton's pass keeps the hits of the
// keywords track marks (reach.go).
type keptHits struct {
	track []bool
	hits  *[]litHit
}

// maxUnionTable bounds the union's transitions: beyond some 1 MiB of
// table the separate passes' smaller tables stay in cache better.
const maxUnionTable = 1 << 18

// scan marks in seen the keywords that occur in text (which begins at
// offset in its view of kind) and appends its prefix hits to hits, their
// ends as positions of the view, in the order ahoCorasick.candidates
// reports them: one chain's order.
func (u *unionAC) scan(text []byte, offset int, kind viewKind, seen []uint64, hits *[]hitAt, sc *unionScratch, kw keptHits) {
	ac := u.ac
	col := &u.cols[kind]
	q, chains := ac.walkSpan(len(text)), 4
	m := &u.cmap[kind]
	if q8 := colWalkSpan(len(text), ac.ov); hasColWalk && m.high >= 0 && q8 > 0 {
		q, chains = q8, 8
	}
	if q == 0 {
		// One chain, inline: the leetspeak view's windows are short and
		// many (a text of code has a digit every few lines).
		delta, out, row := ac.delta, ac.out, uint32(0)
		for i, b := range text {
			if row = delta[row+col[b]]; row >= out && u.mark(row, offset+i+1, seen, kw) {
				*hits = append(*hits, hitAt{row, int32(offset + i + 1)})
			}
		}
		return
	}
	// Chain j reports the hits that end in (j*q+ov, (j+1)*q+ov], the last
	// to the end: those of chain j > 0 go to later[j-1], after chain 0's.
	later := sc.later[:chains-1]
	for j := range later {
		later[j] = later[j][:0]
	}
	keep := func(row uint32, end int) {
		if !u.mark(row, offset+end, seen, kw) {
			return
		}
		if end <= q+ac.ov {
			*hits = append(*hits, hitAt{row, int32(offset + end)})
		} else {
			j := min((end-ac.ov-1)/q, chains-1)
			later[j-1] = append(later[j-1], hitAt{row, int32(offset + end)})
		}
	}
	if chains == 8 {
		sc.cols = grow(sc.cols, len(text))
		m.mapCols(sc.cols, text, col)
		sc.raw = ac.walkCols(sc.cols, q, sc.raw[:0])
		for _, h := range sc.raw {
			keep(h.row, int(h.end))
		}
	} else {
		ac.walk(text, col, keep)
	}
	for _, l := range later {
		*hits = append(*hits, l...)
	}
}

// mark marks in seen the keywords of the state at row, whose occurrences
// end at end, keeps the hits of those kw tracks, and tells whether the
// state has prefixes, whose hit scan keeps.
func (u *unionAC) mark(row uint32, end int, seen []uint64, kw keptHits) bool {
	ac := u.ac
	s := row / uint32(ac.k)
	for _, id := range ac.outs[ac.outAt[s]:ac.outAt[s+1]] {
		if id < u.nkw {
			seen[id>>6] |= 1 << (id & 63)
			if kw.track[id] {
				*kw.hits = append(*kw.hits, litHit{id, int32(end)})
			}
		}
	}
	return u.hasPre[s]
}

// candidates appends to cands[r], for every active rule r, the start of
// each prefix of r's that hits hold (scan), in their order.
func (u *unionAC) candidates(hits []hitAt, active []bool, prefixRules [][]int32, lens []int32, cands [][]int32) {
	ac := u.ac
	k := uint32(ac.k)
	for _, h := range hits {
		s := h.row / k
		for _, id := range ac.outs[ac.outAt[s]:ac.outAt[s+1]] {
			p := u.pre[id]
			if p < 0 {
				continue
			}
			for _, r := range prefixRules[p] {
				if active[r] {
					cands[r] = append(cands[r], h.end-lens[p])
				}
			}
		}
	}
}

// unionScratch is the scratch of scan and scanWindows: the windows
// joined, and where each begins in it and in its view; a text's columns
// and walkCols' hits; the hits of chains after the first.
type unionScratch struct {
	buf   []byte
	segs  []windowAt
	cols  []byte
	raw   []hitAt
	later [7][]hitAt
}

type windowAt struct{ at, lo int32 }

// scanWindows does what scan does for every window of view that
// leetWindows gives, each alone, in one pass over them joined by u.sep:
// a window is mostly a dozen bytes, and one chain per window is bound by
// its table loads, where walk's four chains overlap them. The hits are
// the same, in the same order (by their ends); only the keyword hits kept
// for kw are in walk's order, which groupHits does not need.
func (u *unionAC) scanWindows(view []byte, kind viewKind, leet []int32, seen []uint64, hits *[]hitAt, kw keptHits, w *unionScratch) {
	sep := u.sep[kind]
	lit := &u.lit[kind]
	if sep < 0 {
		leetWindows(u.ac, view, lit, leet, func(lo, hi int) { u.scan(view[lo:hi], lo, kind, seen, hits, w, kw) })
		return
	}
	buf, segs := w.buf[:0], w.segs[:0]
	leetWindows(u.ac, view, lit, leet, func(lo, hi int) {
		segs = append(segs, windowAt{int32(len(buf)), int32(lo)})
		buf = append(append(buf, view[lo:hi]...), byte(sep))
	})
	w.buf, w.segs = buf, segs
	if len(segs) == 0 {
		return
	}
	from, kwFrom := len(*hits), len(*kw.hits)
	u.scan(buf, 0, kind, seen, hits, w, kw)
	// A hit ends inside its window, never on a separator: at is the
	// window holding its last byte.
	k := 0
	for i := from; i < len(*hits); i++ {
		h := &(*hits)[i]
		for k+1 < len(segs) && segs[k+1].at < h.end {
			k++
		}
		h.end += segs[k].lo - segs[k].at
	}
	for i := kwFrom; i < len(*kw.hits); i++ {
		h := &(*kw.hits)[i]
		j, _ := slices.BinarySearchFunc(segs, h.end, func(s windowAt, end int32) int {
			return cmp.Compare(s.at, end)
		})
		h.end += segs[j-1].lo - segs[j-1].at
	}
}
