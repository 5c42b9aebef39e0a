package engine

import (
	"bytes"
	"math/bits"

	"github.com/promptwall/promptwall/rulebook/jsregex"
)

// The stream's hold point: how far back a match attempt may still be
// open, from what each rule's pattern can match (streamInfoOf).

// streamInfo is what the stream needs from the rulebook (streamInfoOf).
type streamInfo struct {
	ok     bool // every rule has a bound; else nothing is ever final
	pad    byte
	groups []holdGroup // at most 64
	all    uint64      // a bit per group
	// With laneCounts (every group's B+2 below 256), holdPoint counts in
	// byte lanes, eight groups a word, and laneEnd holds each group's
	// B+2 in its lane.
	laneCounts bool
	laneEnd    [8]uint64
	// For an ASCII unit, the groups it is outside C of (alien), and
	// outside U of but in C (counted): masks for the other units.
	alien, counted [128]uint64
	rank           map[string]int // rule id to its index
	ruleGroup      []int          // each rule's group
	// The rules whose matches begin with one of their prefixes (at most
	// 64, the others are held by their group alone): pre[k] is rule
	// preRule[k]'s, and preFirst[u] the rules a prefix of which an ASCII
	// unit u can begin, as it is or folded.
	preRule  []int
	hasPre   []bool // per rule: in preRule
	pre      [][][]byte
	preFirst [128]uint64
	preTwo   []uint64 // [u0<<7|u1]: the same for two ASCII units
	preStart uint64   // those that may also begin at 0 with anything
	alpha    *jsregex.Alphabet
	tabs     [2]*[256]byte // the original and leetspeak views' ASCII tables
}

// prefixRules fills the prefix fields of si from the compiled rules.
func (si *streamInfo) prefixRules(c *compiled) {
	if c.alphabet == nil {
		return
	}
	si.alpha, si.tabs = c.alphabet, [2]*[256]byte{&c.ascii, &c.asciiLeet}
	si.hasPre = make([]bool, len(c.rules))
	for i := range c.rules {
		r := &c.rules[i]
		if !r.fast || !r.hasPrefix || len(si.preRule) == 64 {
			continue
		}
		k := len(si.preRule)
		si.preRule = append(si.preRule, i)
		si.hasPre[i] = true
		si.pre = append(si.pre, r.prefixes)
		if r.atStart {
			si.preStart |= 1 << k
		}
		for u := range 128 {
			for _, p := range r.prefixes {
				if c.ascii[u] == p[0] || c.asciiLeet[u] == p[0] {
					si.preFirst[u] |= 1 << k
				}
			}
		}
	}
	si.preTwo = make([]uint64, 128*128)
	for k := range si.preRule {
		for _, p := range si.pre[k] {
			for u0 := range 128 {
				if c.ascii[u0] != p[0] && c.asciiLeet[u0] != p[0] {
					continue
				}
				for u1 := range 128 {
					if len(p) == 1 || c.ascii[u1] == p[1] || c.asciiLeet[u1] == p[1] {
						si.preTwo[u0<<7|u1] |= 1 << k
					}
				}
			}
		}
	}
}

// unitMay reports whether unit i of t may read as alphabet byte b in the
// original or leetspeak view, and whether what follows it is unknown (an
// escape, or units still to come): then any byte may follow. pct tells
// that t may have escapes (hasPct).
func (si *streamInfo) unitMay(t *text, i, n int, b byte, pct bool) (may, open bool) {
	if i >= n-3 {
		return true, true
	}
	u := t.at(i)
	if pct && (u == '%' || isHex(u)) && escapePart(t, i, n) {
		return true, true
	}
	if u < 128 {
		return si.tabs[0][u] == b || si.tabs[1][u] == b, false
	}
	return si.alpha.Byte[u] == b, false
}

// mayBegin reports whether a match of prefix rule k may begin at unit s.
func (si *streamInfo) mayBegin(t *text, s, n, k int, pct bool) bool {
	for _, p := range si.pre[k] {
		ok := true
		for j := range p {
			may, open := si.unitMay(t, s+j, n, p[j], pct)
			if !may {
				ok = false
				break
			}
			if open {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// holdGroup is the rules that share the sets U and C, with the largest B.
type holdGroup struct {
	u *jsregex.Set // nil: empty
	c *jsregex.Set // every unit a match can hold
	b int
}

// holdPoint returns the least window position whose match attempts may
// not be final yet (see Stream), at least s.off.
func (s *Stream) holdPoint(t *text, n int) int {
	h, _ := s.si.holdPoint(t, s.off, n, &s.count, &s.settle)
	return h
}

// holdPoint returns the least position of t[:n] from off on whose match
// attempts may not be final yet, for a text whose attempts before off are
// final (off is a cut, or the text's start); count and settle are
// scratch. pending has a bit for each group that no unit of t[off:n]
// settled: the attempts of such a group are final nowhere from off on,
// and when off is not a cut, not before it either.
func (si *streamInfo) holdPoint(t *text, off, n int, count, settle *[64]int) (h int, pending uint64) {
	h = n
	// A base64 run that may go on, and its padding.
	j, eq := n, 0
	for eq < 2 && j > off && t.at(j-1) == '=' {
		j, eq = j-1, eq+1
	}
	if eq < 2 {
		k := j
		for k > off && isB64Unit(t.at(k-1)) {
			k--
		}
		if k < j {
			h = k
		}
	}
	// Walking back, the first unit that settles the attempts of a group
	// at it and before: one outside its C, or the (B+2)th outside its U.
	// The hold point is where the last group is settled.
	pending = si.all
	cnt, set := count[:len(si.groups)], settle[:len(si.groups)]
	clear(cnt)
	// No unit of a text without a '%' is part of an escape: the check is
	// skipped for every hex digit (a sixth of prose's letters).
	pct := hasPct(t)
	// The counts, in byte lanes when they fit: a unit adds one to a dozen
	// groups' counts, which one at a time were most of the walk.
	var lanes [8]uint64
	i := n - 4
	for ; i >= off && pending != 0; i-- {
		u := t.at(i)
		if pct && (u == '%' || isHex(u)) && escapePart(t, i, n) {
			continue
		}
		var alien, counted uint64
		if u < 128 {
			alien, counted = si.alien[u], si.counted[u]
		} else {
			alien, counted = si.masks(u)
		}
		for m := alien & pending; m != 0; m &= m - 1 {
			set[bits.TrailingZeros64(m)] = i + 1
		}
		pending &^= alien
		if si.laneCounts {
			for w, m := 0, counted&pending; m != 0; w, m = w+1, m>>8 {
				add := laneOnes[m&0xff]
				if add == 0 {
					continue
				}
				lanes[w] += add
				// The lanes just counted that reached B+2.
				for z := zeroLanes(lanes[w]^si.laneEnd[w]) & (add << 7); z != 0; z &= z - 1 {
					g := 8*w + bits.TrailingZeros64(z)/8
					pending &^= 1 << g
					set[g] = i + 1
				}
			}
			continue
		}
		for m := counted & pending; m != 0; m &= m - 1 {
			g := bits.TrailingZeros64(m)
			if cnt[g]++; cnt[g] == si.groups[g].b+2 {
				pending &^= 1 << g
				set[g] = i + 1
			}
		}
	}
	// The attempts of group g from set[g] on are not known to be
	// final; a group never settled holds the whole window.
	for g := range set {
		if pending&(1<<g) != 0 {
			set[g] = off
		}
	}
	// A rule without prefixes holds from its group's point; a rule with
	// them, from the first place at or after it where a match of it may
	// begin (of the attempts that may still be alive, only those can
	// find one).
	from := n
	for _, r := range si.preRule {
		from = min(from, set[si.ruleGroup[r]])
	}
	for r, g := range si.ruleGroup {
		if !si.hasPre[r] {
			h = min(h, set[g])
		}
	}
	for p := max(from, off); p < h; p++ {
		var cand uint64
		u := t.at(p)
		switch {
		case p >= n-3 || u >= 128 || pct && (u == '%' || isHex(u)) && escapePart(t, p, n):
			cand = 1<<len(si.preRule) - 1
		case p+1 < n-3:
			if v := t.at(p + 1); v < 128 && !(pct && (v == '%' || isHex(v)) && escapePart(t, p+1, n)) {
				cand = si.preTwo[u<<7|v]
				break
			}
			fallthrough
		default:
			cand = si.preFirst[u]
		}
		if p == 0 {
			cand |= si.preStart
		}
		for ; cand != 0; cand &= cand - 1 {
			k := bits.TrailingZeros64(cand)
			if set[si.ruleGroup[si.preRule[k]]] <= p && (p == 0 && si.preStart&(1<<k) != 0 || si.mayBegin(t, p, n, k, pct)) {
				return p, pending
			}
		}
	}
	return h, pending
}

// masks returns the groups u is outside C of, and outside U of.
func (si *streamInfo) masks(u uint16) (alien, counted uint64) {
	for g := range si.groups {
		if !inSet(si.groups[g].c, u) {
			alien |= 1 << g
		} else if !inSet(si.groups[g].u, u) {
			counted |= 1 << g
		}
	}
	return alien, counted
}

// laneOnes[m] has a one in byte lane j for each bit j of m.
var laneOnes = func() (t [256]uint64) {
	for m := range t {
		for j := range 8 {
			if m&(1<<j) != 0 {
				t[m] |= 1 << (8 * j)
			}
		}
	}
	return t
}()

// zeroLanes has the high bit of each byte lane of x that is zero: exact,
// as no lane carries into the next.
func zeroLanes(x uint64) uint64 {
	const low7, high = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	return ^((x&low7 + low7) | x) & high
}

// hasPct reports whether t may have a %XX escape: whether its bytes hold
// a '%' (no other byte decodes to that unit).
func hasPct(t *text) bool { return !t.noPct && bytes.IndexByte(t.raw, '%') >= 0 }

func isB64Unit(u uint16) bool { return u < 128 && unitFlags[u]&fB64 != 0 }

// escapePart reports whether unit i is part of a %XX escape.
func escapePart(t *text, i, n int) bool {
	for k := max(i-2, 0); k <= i; k++ {
		if k+2 < n && t.at(k) == '%' && isHex(t.at(k+1)) && isHex(t.at(k+2)) {
			return true
		}
	}
	return false
}

// inSet reports whether unit u, or its leetspeak folding, can be matched
// by a unit of set (its case-folded members, or u's canonical form).
func inSet(set *jsregex.Set, u uint16) bool {
	if set == nil {
		return false
	}
	if set.Has(u) || set.Has(jsregex.Canonicalize(u)) {
		return true
	}
	if isLeet(u) {
		f := uint16(leetTo[u])
		return set.Has(f) || set.Has(jsregex.Canonicalize(f))
	}
	return false
}

// streamInfoOf analyses the rulebook's patterns for the stream.
func streamInfoOf(e *Engine) *streamInfo {
	si := &streamInfo{ok: true, rank: map[string]int{}}
	for i := range e.c.rules {
		si.rank[e.c.rules[i].id] = i
	}
	tr := e.rb.Translation()
	first := &jsregex.Set{}
	byU := map[[2]jsregex.Set]int{}
	var empty jsregex.Set
	for i := range e.c.rules {
		if i >= len(tr.Patterns) || tr.Patterns[i].Pattern == nil || tr.Patterns[i].Pattern.Root == nil {
			si.ok = false
			break
		}
		root := tr.Patterns[i].Pattern.Root
		u := &jsregex.Set{}
		b, ok := boundOf(root, u)
		if nullable := firstSet(root, first); !ok || nullable {
			si.ok = false
			break
		}
		c := &jsregex.Set{}
		unitsOf(root, c)
		k, seen := byU[[2]jsregex.Set{*u, *c}]
		if !seen {
			k = len(si.groups)
			byU[[2]jsregex.Set{*u, *c}] = k
			g := holdGroup{b: b, c: c}
			if *u != empty {
				g.u = u
			}
			si.groups = append(si.groups, g)
		}
		si.groups[k].b = max(si.groups[k].b, b)
		si.ruleGroup = append(si.ruleGroup, k)
	}
	if len(si.groups) > 64 {
		// Rare: merging groups (the unions of their sets, the largest B)
		// only holds more.
		g := holdGroup{u: &jsregex.Set{}, c: &jsregex.Set{}}
		for _, h := range si.groups {
			if h.u != nil {
				g.u.Union(h.u)
			}
			g.c.Union(h.c)
			g.b = max(g.b, h.b)
		}
		si.groups = []holdGroup{g}
		clear(si.ruleGroup)
	}
	si.prefixRules(e.c)
	si.all = 1<<len(si.groups) - 1
	si.laneCounts = true
	for g, h := range si.groups {
		if h.b+2 > 255 {
			si.laneCounts = false
			break
		}
		si.laneEnd[g/8] |= uint64(h.b+2) << (8 * (g % 8))
	}
	for u := range uint16(128) {
		si.alien[u], si.counted[u] = si.masks(u)
	}
	// The pad: a unit no rule can begin a match with, and no view treats
	// specially.
	si.pad = 0
	for _, c := range []byte("\x00\x01\x02.,;!?)") {
		if !first.Has(uint16(c)) && !first.Has(jsregex.Canonicalize(uint16(c))) {
			si.pad = c
			return si
		}
	}
	si.ok = false
	return si
}

// nodeSet returns the units n (an OpSet) matches.
func nodeSet(n *jsregex.Node) *jsregex.Set {
	if n.Inverted {
		return n.Set.Complement()
	}
	return n.Set
}

// boundOf returns B for n (the most units it matches outside unbounded
// repetitions) and adds to u the units those repetitions can match; ok is
// false when n has no such bound (look-arounds, back-references, `$`).
func boundOf(n *jsregex.Node, u *jsregex.Set) (b int, ok bool) {
	switch n.Op {
	case jsregex.OpSet:
		return 1, true
	case jsregex.OpConcat, jsregex.OpAlternate:
		for _, sub := range n.Subs {
			m, ok := boundOf(sub, u)
			if !ok {
				return 0, false
			}
			if n.Op == jsregex.OpConcat {
				b += m
			} else {
				b = max(b, m)
			}
		}
		return b, b <= 1<<20
	case jsregex.OpGroup:
		return boundOf(n.Subs[0], u)
	case jsregex.OpRepeat:
		m, ok := boundOf(n.Subs[0], u)
		if !ok {
			return 0, false
		}
		if n.Max < 0 {
			unitsOf(n.Subs[0], u)
			return 0, true
		}
		if m*n.Max > 1<<20 {
			return 0, false
		}
		return m * n.Max, true
	case jsregex.OpBegin, jsregex.OpWordBoundary, jsregex.OpNoWordBoundary, jsregex.OpEmpty:
		return 0, true
	}
	return 0, false
}

// unitsOf adds every unit n can match to u.
func unitsOf(n *jsregex.Node, u *jsregex.Set) {
	if n.Op == jsregex.OpSet {
		u.Union(nodeSet(n))
	}
	for _, sub := range n.Subs {
		unitsOf(sub, u)
	}
}

// firstSet adds to first the units a match of n can begin with and
// reports whether n can match the empty string.
func firstSet(n *jsregex.Node, first *jsregex.Set) (nullable bool) {
	switch n.Op {
	case jsregex.OpSet:
		first.Union(nodeSet(n))
		return false
	case jsregex.OpConcat:
		for _, sub := range n.Subs {
			if !firstSet(sub, first) {
				return false
			}
		}
		return true
	case jsregex.OpAlternate:
		nullable = len(n.Subs) == 0
		for _, sub := range n.Subs {
			if firstSet(sub, first) {
				nullable = true
			}
		}
		return nullable
	case jsregex.OpGroup:
		return firstSet(n.Subs[0], first)
	case jsregex.OpRepeat:
		return firstSet(n.Subs[0], first) || n.Min == 0
	}
	return true // assertions and the empty string consume nothing
}
