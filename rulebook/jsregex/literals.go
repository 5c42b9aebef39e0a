package jsregex

import "sort"

// Literals is what a pattern needs of a text, in the alphabet's bytes, so
// that a keyword search can rule texts out and find where matches may
// start without running the pattern.
type Literals struct {
	// Required: every match contains, for each conjunct, one of its strings.
	Required [][]string
	// Prefixes: when HasPrefixes, every match begins with one of Prefixes,
	// or starts at position 0 when AtStart.
	Prefixes    []string
	AtStart     bool
	HasPrefixes bool
	// MaxLen is the longest match in units, or -1 when unbounded (or when
	// the pattern looks at the end of the text, which a window would move).
	MaxLen int
	// Gate: when HasGate, every match reaches one of GateLits from its
	// start across bytes of GateRun alone (RH-2's "\n", then white space,
	// then "system", "assistant" or "developer"). A start is worth trying
	// only where such a run leads from it to one of them, which in a text
	// of code is a few of its thousands of newlines.
	GateLits []string
	GateRun  []byte
	HasGate  bool
}

// minGateLen is the shortest gate literal worth finding: shorter ones
// occur about as often as the starts they would rule out.
const minGateLen = 3

const (
	maxExact    = 64 // strings in a finite set before it is given up
	maxLitLen   = 24 // longer literals are cut (a prefix of a prefix is still one)
	maxConjunct = 6
)

// Analyze computes the literals of p in a's bytes.
func (a *Alphabet) Analyze(p *Pattern) Literals {
	p.Sets()
	la := litAnalyzer{a: a}
	var l Literals
	l.Required = la.cnf(p.Root)
	l.Prefixes, l.AtStart, l.HasPrefixes = la.prefixes(p.Root)
	if l.HasPrefixes {
		for _, s := range l.Prefixes {
			if s == "" {
				l.HasPrefixes = false
			}
		}
	}
	l.MaxLen = maxLen(p.Root)
	var run [128]bool
	if lits, ok := la.gate(p.Root, &run); ok {
		l.GateLits, l.HasGate = lits, true
		for b, in := range run {
			if in {
				l.GateRun = append(l.GateRun, byte(b))
			}
		}
	}
	// Keep the most selective conjuncts: long strings are rare in text,
	// short ones ("the", ":", "<") are everywhere and only cost time. A
	// conjunct whose shortest string is under 4 bytes is kept only when
	// nothing better is there.
	sort.SliceStable(l.Required, func(i, j int) bool { return score(l.Required[i]) > score(l.Required[j]) })
	var keep [][]string
	for _, c := range l.Required {
		if len(keep) < maxConjunct && (minLen(c) >= 4 || len(keep) == 0 && (minLen(c) >= 2 || !l.HasPrefixes)) {
			keep = append(keep, c)
		}
	}
	l.Required = keep
	return l
}

type litAnalyzer struct{ a *Alphabet }

// exact returns the finite set of strings n can match, or nil when it is
// unknown or too large. The empty string is a member when n can match empty.
func (la litAnalyzer) exact(n *Node) []string {
	switch n.Op {
	case OpSet:
		bs := la.a.Bytes(n.Set)
		if len(bs) == 0 || len(bs) > 8 {
			return nil
		}
		out := make([]string, len(bs))
		for i, b := range bs {
			out[i] = string([]byte{b})
		}
		return out
	case OpEmpty, OpWordBoundary, OpNoWordBoundary:
		return []string{""}
	case OpGroup:
		return la.exact(n.Subs[0])
	case OpConcat:
		acc := []string{""}
		for _, s := range n.Subs {
			e := la.exact(s)
			if e == nil {
				return nil
			}
			if acc = cross(acc, e); acc == nil {
				return nil
			}
		}
		return acc
	case OpAlternate:
		var acc []string
		for _, s := range n.Subs {
			e := la.exact(s)
			if e == nil {
				return nil
			}
			acc = union(acc, e)
		}
		if len(acc) > maxExact {
			return nil
		}
		return acc
	case OpRepeat:
		if n.Max < 0 || n.Max > 4 {
			return nil
		}
		e := la.exact(n.Subs[0])
		if e == nil {
			return nil
		}
		var acc []string
		cur := []string{""}
		for k := 0; k <= n.Max; k++ {
			if k >= n.Min {
				acc = union(acc, cur)
			}
			if cur = cross(cur, e); cur == nil {
				return nil
			}
		}
		if len(acc) > maxExact {
			return nil
		}
		return acc
	}
	return nil
}

// cnf returns conjuncts of strings one of which every match must contain.
func (la litAnalyzer) cnf(n *Node) [][]string {
	if e := la.exact(n); e != nil {
		if minLen(e) > 0 {
			return [][]string{trim(e)}
		}
	}
	switch n.Op {
	case OpGroup:
		return la.cnf(n.Subs[0])
	case OpRepeat:
		if n.Min >= 1 {
			return la.cnf(n.Subs[0])
		}
	case OpConcat:
		var out [][]string
		run := []string{""}
		flush := func() {
			if run != nil && minLen(run) > 0 {
				out = append(out, trim(run))
			}
			run = []string{""}
		}
		for _, s := range n.Subs {
			if e := la.exact(s); e != nil {
				if next := cross(run, e); next != nil {
					run = next
					continue
				}
				flush()
				run = e
				continue
			}
			flush()
			out = append(out, la.cnf(s)...)
		}
		flush()
		return out
	case OpAlternate:
		var acc []string
		for _, s := range n.Subs {
			c := la.cnf(s)
			if len(c) == 0 {
				return nil
			}
			best := c[0]
			for _, x := range c[1:] {
				if score(x) > score(best) {
					best = x
				}
			}
			acc = union(acc, best)
		}
		if len(acc) > maxExact {
			return nil
		}
		return [][]string{acc}
	}
	return nil
}

// prefixes returns strings one of which every match begins with; atStart
// adds "or the match starts at position 0"; ok false means no such set.
func (la litAnalyzer) prefixes(n *Node) (set []string, atStart, ok bool) {
	switch n.Op {
	case OpBegin:
		return nil, true, true
	case OpGroup:
		return la.prefixes(n.Subs[0])
	case OpRepeat:
		if n.Min >= 1 {
			return la.prefixes(n.Subs[0])
		}
	case OpAlternate:
		for _, s := range n.Subs {
			p, st, ok := la.prefixes(s)
			if !ok {
				return nil, false, false
			}
			set, atStart = union(set, p), atStart || st
		}
		if len(set) > maxExact {
			return nil, false, false
		}
		return set, atStart, true
	case OpConcat:
		acc := []string{""}
		for _, s := range n.Subs {
			if e := la.exact(s); e != nil {
				if next := cross(acc, e); next != nil {
					acc = next
					continue
				}
				return acc, false, true
			}
			p, st, ok := la.prefixes(s)
			if !ok {
				return acc, false, true
			}
			if next := cross(acc, p); next != nil || len(p) == 0 {
				return next, st, true
			}
			return acc, false, true
		}
		return acc, false, true
	}
	if e := la.exact(n); e != nil {
		return e, false, true
	}
	return nil, false, false
}

// gate returns the literals that every match of n reaches from its start
// across bytes it adds to run: in a sequence, the first parts that can
// only match one of a few strings of minGateLen bytes or more, after parts
// that match runs of single bytes (and assertions, which match none). An
// alternation's literals and runs are its branches' together.
func (la litAnalyzer) gate(n *Node, run *[128]bool) (lits []string, ok bool) {
	switch n.Op {
	case OpGroup:
		return la.gate(n.Subs[0], run)
	case OpAlternate:
		for _, s := range n.Subs {
			l, ok := la.gate(s, run)
			if !ok {
				return nil, false
			}
			lits = union(lits, l)
		}
		return lits, len(lits) <= maxExact
	case OpConcat:
		for i, s := range n.Subs {
			if e := la.exactFrom(n.Subs[i:]); minLen(e) >= minGateLen {
				return e, true // all of them: trim's "contains" is not "begins"
			}
			if !la.bytesOf(s, run) {
				return nil, false
			}
		}
	}
	return nil, false
}

// exactFrom returns the strings the longest run of subs from the first
// with a finite set of strings can match, one after the other: a literal
// is a sequence of single-character parts.
func (la litAnalyzer) exactFrom(subs []*Node) []string {
	acc := []string{""}
	for _, s := range subs {
		e := la.exact(s)
		if e == nil {
			break
		}
		next := cross(acc, e)
		if next == nil {
			break
		}
		acc = next
	}
	return acc
}

// bytesOf adds to run every byte n can match, and reports whether n
// matches only runs of single bytes (any number of them, or none).
func (la litAnalyzer) bytesOf(n *Node, run *[128]bool) bool {
	switch n.Op {
	case OpSet:
		for _, b := range la.a.Bytes(n.Set) {
			run[b] = true
		}
		return true
	case OpBegin, OpEnd, OpWordBoundary, OpNoWordBoundary, OpEmpty:
		return true
	case OpGroup, OpRepeat, OpConcat, OpAlternate:
		for _, s := range n.Subs {
			if !la.bytesOf(s, run) {
				return false
			}
		}
		return true
	}
	return false // look-arounds and back-references
}

// maxLen is the longest match of n in units, or -1 when unbounded (or
// when n looks at the end of the text, which a window would move).
func maxLen(n *Node) int {
	switch n.Op {
	case OpSet:
		return 1
	case OpEnd:
		return -1
	case OpConcat, OpAlternate:
		t := 0
		for _, s := range n.Subs {
			m := maxLen(s)
			if m < 0 {
				return -1
			}
			if n.Op == OpConcat {
				t += m
			} else {
				t = max(t, m)
			}
		}
		return t
	case OpGroup:
		return maxLen(n.Subs[0])
	case OpRepeat:
		if n.Max < 0 {
			return -1
		}
		m := maxLen(n.Subs[0])
		if m < 0 || m*n.Max > 1<<20 {
			return -1
		}
		return m * n.Max
	}
	return 0
}

// cross is the set of concatenations, or nil when it would be too large
// (too many strings, or one longer than maxLitLen).
func cross(a, b []string) []string {
	if len(a)*len(b) > maxExact {
		return nil
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			if len(x)+len(y) > maxLitLen {
				return nil
			}
			out = append(out, x+y)
		}
	}
	return dedupe(out)
}

func union(a, b []string) []string { return dedupe(append(append([]string(nil), a...), b...)) }

func dedupe(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// trim drops strings that contain another member: a text holding the longer
// one holds the shorter, so only the shorter is needed to test presence.
func trim(s []string) []string {
	var out []string
	for _, x := range s {
		redundant := false
		for _, y := range s {
			if y != x && len(y) < len(x) && contains(x, y) {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, x)
		}
	}
	return out
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func minLen(s []string) int {
	if len(s) == 0 {
		return 0
	}
	m := len(s[0])
	for _, x := range s[1:] {
		m = min(m, len(x))
	}
	return m
}

func score(s []string) int { return minLen(s)*1000 - len(s) }
