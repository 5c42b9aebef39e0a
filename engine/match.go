package engine

import (
	"math/bits"
)

// span is one reported match of one rule in one view, in positions of the
// scanned text (after the view's filter and mapping).
type span struct {
	rule       int32
	start, end int32
	views      uint8 // bit i: view i of docs/SPEC.md section 3
}

// matcher holds the per-scan buffers of one view's matching. It is reused
// through a pool, so a scan allocates nothing per byte.
type matcher struct {
	seen   []uint64 // required literals present in the view
	maybe  []uint64 // rules that have a literal in seen, or need none
	active []bool   // rules that can match the view
	cands  [][]int32
	// Which rules have the original view's candidates still in cands for
	// the leetspeak view (keepCandidates), and which findCandidates
	// searches in full and which near the leetspeak characters only.
	kept       []bool
	full, near []bool
	nkept      []int // for a rule near: how many of cands are the kept ones
	merged     []int32
	// findCandidates: the rules whose hits of the automata it takes (a
	// gated rule's are its gate's literals' then: the union's pass found them)
	walk   []bool
	starts []int32         // gateStarts' scratch
	later  [3][]hitAt      // candidates' scratch
	tries  [][]anchoredTry // per rule, for keepTries
	runes  []rune
	dfas   []*dfaCache // per rule, its anchored forms' states; made on use
	// With unionHits, the last findLiterals or findLiteralsNear walked the
	// union automaton (compiled.union), and uhits holds its prefix hits.
	unionHits bool
	uhits     []hitAt
	uscratch  unionScratch // the union automaton's scratch
	// khits are the keyword hits reach.go needs of the view, with
	// khitsKept: the union automaton's pass walked the view (and, for the
	// leetspeak view, the original). The rest is inReach's scratch.
	khits         []litHit
	khitsKept     bool
	grouped       bool
	hitAt, nextAt []int32
	hitEnds       []int32
	reachCands    []int32
	intervals     []interval
}

func (c *compiled) newMatcher() *matcher {
	return &matcher{
		seen:   make([]uint64, (len(c.literals)+63)/64),
		active: make([]bool, len(c.rules)),
		cands:  make([][]int32, len(c.rules)),
		kept:   make([]bool, len(c.rules)),
		full:   make([]bool, len(c.rules)),
		near:   make([]bool, len(c.rules)),
		walk:   make([]bool, len(c.rules)),
		nkept:  make([]int, len(c.rules)),
		dfas:   make([]*dfaCache, 2*len(c.rules)),
		tries:  make([][]anchoredTry, len(c.rules)),
	}
}

// dfaCaches returns the caches of rule i's anchored forms.
func (m *matcher) dfaCaches(c *compiled, i int) (anch0, anchN *dfaCache) {
	if m.dfas[2*i] == nil {
		d0, dN := c.rules[i].anchored(&c.viewTabs)
		m.dfas[2*i], m.dfas[2*i+1] = newDFACache(d0), newDFACache(dN)
	}
	return m.dfas[2*i], m.dfas[2*i+1]
}

// viewKind says how a view's bytes read as alphabet bytes. An ASCII text
// is matched as it is, through a table, so that the common case never
// writes an encoded copy: the keyword and prefix automata, the candidate
// windows and the DFAs all read the text's own bytes.
type viewKind uint8

const (
	viewEncoded viewKind = iota // alphabet bytes already
	viewASCII                   // an ASCII text as it is (compiled.ascii)
	viewLeet                    // an ASCII text through the leetspeak folding
)

// identity is viewEncoded's table.
var identity = func() (t [256]byte) {
	for b := range t {
		t[b] = byte(b)
	}
	return t
}()

// Values of compiled.preimage besides a byte.
const (
	noPreimage    = -1
	manyPreimages = -2
)

// A view is one view's text as the patterns read it: src through the
// tables of kind. The alphabet bytes of a raw view (viewASCII, viewLeet)
// are written into *buf only for the rare rule that needs them whole (Go's
// regexp over the text).
type view struct {
	src     []byte
	kind    viewKind
	buf     *[]byte
	encoded bool // *buf holds them
	// For the leetspeak view, the positions of the leetspeak characters:
	// it differs from the original view only there, so the original's
	// candidates serve (keepCandidates), and so do its anchored tries
	// that read none of them.
	leet []int32
	// keepTries: a leetspeak view follows, and the anchored tries are
	// recorded for it in matcher.tries.
	keepTries bool
	// The bytes the view's units from 128 up read as (encodeUnits): none
	// for an ASCII text.
	held *byteSet
}

// encoded returns the view's alphabet bytes, made at most once.
func (c *compiled) encoded(v *view) []byte {
	if v.kind == viewEncoded {
		return v.src
	}
	if !v.encoded {
		*v.buf = grow(*v.buf, len(v.src))
		mapBytes(*v.buf, v.src, c.viewTabs[v.kind])
		v.encoded = true
	}
	return *v.buf
}

// unitSource gives the view's text as units for the backtracking engine;
// it is only called when a rule needs it.
type unitSource func(dst []rune) []rune

// findLiterals records in m.seen which required literals occur in v.
// The union automaton finds them and the prefixes in the same pass, for
// findCandidates; only without it do the wide chains take the keywords.
// They walk faster than the union's four chains, but leave the prefixes
// and the gates' literals to slower passes: on the corpus document
// (BenchmarkScanDocument/all, AVX-512) the union is twice as fast in all,
// where the wide chains win only on prose no rule comes near.
func (c *compiled) findLiterals(v *view, m *matcher) {
	clear(m.seen)
	m.unionHits, m.khitsKept = false, false
	if c.ac == nil {
		return
	}
	col := &c.keywordCols[v.kind]
	switch u := c.union; {
	case u != nil:
		m.uhits, m.khits = m.uhits[:0], m.khits[:0]
		u.scan(v.src, 0, v.kind, m.seen, &m.uhits, &m.uscratch, m.keepHits(c))
		m.unionHits, m.khitsKept = true, true
	case c.ac.scanWide(v.src, col, m.seen):
	default:
		c.ac.scan(v.src, col, m.seen)
	}
}

// findLiteralsNear adds the required literals that occur in the leetspeak
// view v near its leetspeak characters, at the positions v.leet
// (leetWindows): it differs from the original view, already searched, only
// there, so it has no other new occurrences. A literal seen elsewhere
// before stays in m.seen: that can only make a rule try in vain, never miss
// a match.
//
// The union automaton's windows hold every occurrence of a keyword or a
// prefix with a leetspeak character in it, and its prefix hits there serve
// findCandidates.
func (c *compiled) findLiteralsNear(v *view, m *matcher) {
	m.unionHits = false
	if u := c.union; u != nil {
		m.uhits = m.uhits[:0]
		kw := m.keepHits(c) // after the original view's: they serve this view too
		u.scanWindows(v.src, v.kind, v.leet, m.seen, &m.uhits, kw, &m.uscratch)
		m.unionHits = true
	} else if c.ac != nil {
		m.khitsKept = false
		col := &c.keywordCols[v.kind]
		leetWindows(c.ac, v.src, &c.keywordLit[v.kind], v.leet, func(lo, hi int) { c.ac.scan(v.src[lo:hi], col, m.seen) })
	}
}

// leetWindows calls window with every stretch of view that can hold an
// occurrence of one of ac's literals that has a leetspeak character (at
// the positions leet, in order) in it. Such an occurrence is within reach
// of the character (the longest literal) and holds only bytes that occur
// in literals, so each window is the run of such bytes around a leetspeak
// character: a digit in "max_tokens": 256 gets a window of a byte or two.
//
// lit tells the view's bytes that occur in ac's literals
// (ahoCorasick.litBytes): one load a byte, where a column and then whether
// it is a literal's were two in a row.
func leetWindows(ac *ahoCorasick, view []byte, lit *[256]bool, leet []int32, window func(lo, hi int)) {
	reach := ac.ov + 1
	n := len(view)
	inLit := func(b byte) bool { return lit[b] }
	for k := 0; k < len(leet); {
		i := int(leet[k])
		k++
		if !inLit(view[i]) {
			continue
		}
		lo, stop := i, max(0, i-reach+1)
		for lo > stop && inLit(view[lo-1]) {
			lo--
		}
		// Extend over further leetspeak characters within reach (leet[k]
		// is the first at or after hi).
		hi, end := i+1, min(n, i+reach)
		for hi < end && inLit(view[hi]) {
			if k < len(leet) && int(leet[k]) == hi {
				end = min(n, hi+reach)
				k++
			}
			hi++
		}
		if hi-lo >= ac.least { // else no literal fits (a lone digit, mostly)
			window(lo, hi)
		}
		for k < len(leet) && int(leet[k]) < hi {
			k++
		}
	}
}

// isActive reports whether every required conjunct of r has a literal in
// m.seen: otherwise r cannot match the view.
func (m *matcher) isActive(r *rule) bool {
	for _, mask := range r.requiredMasks {
		found := false
		for w, bits := range mask {
			if m.seen[w]&bits != 0 {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// matchView finds every rule's matches in one view, exactly as
// String.prototype.matchAll would on the view's text (docs/SPEC.md section 2), and
// calls emit for each. m.seen must hold the view's required literals
// (findLiterals).
func (c *compiled) matchView(v view, units unitSource, m *matcher, emit func(rule, start, end int)) {
	// Only the rules of the literals present can be active.
	maybe := append(m.maybe[:0], c.unconditional...)
	m.maybe = maybe
	for w, word := range m.seen {
		for word != 0 {
			for k, rb := range c.litRules[w<<6|bits.TrailingZeros64(word)] {
				maybe[k] |= rb
			}
			word &= word - 1
		}
	}
	// A rule outside maybe is not even looked at: for most texts that is
	// every rule, and their structures stay out of the cache.
	any := false
	clear(m.active)
	for w, word := range maybe {
		for ; word != 0; word &= word - 1 {
			i := w<<6 | bits.TrailingZeros64(word)
			r := &c.rules[i]
			if !r.fast {
				any = true // the backtracking engine decides
			} else if r.mayOccur(v.held) && m.isActive(r) {
				m.active[i], any = true, true
			}
		}
	}
	if !any {
		return
	}
	n := len(v.src)
	c.findCandidates(&v, m)
	for w, word := range maybe {
		for ; word != 0; word &= word - 1 {
			i := w<<6 | bits.TrailingZeros64(word)
			r := &c.rules[i]
			switch {
			case !r.fast:
				m.runes = units(m.runes[:0])
				c.matchSlow(r, m.runes, func(s, e int) { emit(i, s, e) })
			case !m.active[i]:
			case r.hasPrefix:
				var tl tryLog
				if v.keepTries {
					m.tries[i] = m.tries[i][:0]
					tl.record = &m.tries[i]
				} else if v.leet != nil && m.near[i] {
					tl.known, tl.leet = m.tries[i], v.leet
				}
				cands := c.inReach(m, i)
				if len(cands) == 0 {
					continue
				}
				anch0, anchN := m.dfaCaches(c, i)
				emitRule := func(s, e int) { emit(i, s, e) }
				if rest := matchAnchored(r, anch0, anchN, v.src, v.kind, cands, anchoredBudget(n), tl, emitRule); rest >= 0 {
					// Too much to try place by place: one linear pass
					// from the first place left.
					matchScan(r, c.encoded(&v), rest, emitRule)
				}
			default:
				matchScan(r, c.encoded(&v), 0, func(s, e int) { emit(i, s, e) })
			}
		}
	}
}

// An anchoredTry is the outcome of one anchored try: its candidate, the
// end of the bytes it read (from the one before the candidate), and where
// its match ends, or -1.
type anchoredTry struct{ at, reach, end int32 }

// A tryLog is what matchAnchored records its tries into, or the tries it
// may take from the original view, with the leetspeak view's positions.
type tryLog struct {
	record *[]anchoredTry
	known  []anchoredTry
	leet   []int32
}

// take returns the end of the known try at candidate p, whose context byte
// is at from, if it read no leetspeak character (-1: it found no match).
// The candidates come in increasing order.
func (tl *tryLog) take(p, from int) (end int, ok bool) {
	// Local slices, stored back once: a store of the field per step was
	// most of a long text's leetspeak view's tries.
	known := tl.known
	for len(known) > 0 && int(known[0].at) < p {
		known = known[1:]
	}
	tl.known = known
	if len(known) == 0 || int(known[0].at) != p {
		return 0, false
	}
	leet := tl.leet
	for len(leet) > 0 && int(leet[0]) < from {
		leet = leet[1:]
	}
	tl.leet = leet
	if t := known[0]; len(leet) == 0 || leet[0] >= t.reach {
		return int(t.end), true
	}
	return 0, false
}

// anchoredBudget is how many bytes the anchored tries of one rule may
// read in a view of n bytes before the linear search takes over. A try's
// byte is a cached DFA transition, a few nanoseconds; the linear search
// (Go's regexp) spends some 80 a byte. So tries that run out of budget
// have cost a fifth more than searching at once (BenchmarkHostile/http:
// every "http://" a candidate, each try reading to the end), and tries
// that read less, as almost all do, cost far less than the search.
func anchoredBudget(n int) int { return 4*n + 256 }

// matchAnchored tries the pattern at each candidate start in order. Every
// match starts at a candidate, so the first candidate at or after the
// cursor where the anchored pattern matches is the next leftmost match.
//
// A try reads until the DFA has no thread left, which for most candidates
// is a byte or two (RH-2's at every newline of a text of code), and for a
// pattern of bounded length at most one unit past its longest match (which
// keeps \b at its end exact). The tries read at most budget bytes in all:
// a try that would read past it is not trusted (it took the budget's end
// for the text's), and matchAnchored returns its candidate, from which the
// caller searches linearly instead; else -1. So the time stays linear in
// the text when tries would read far, such as RH-2's from every newline of
// a long run of white space.
//
// With tl.record, each try that ran to its end is recorded. With tl.known,
// the leetspeak view's tries take the original view's outcome where it
// read no leetspeak character: the two views have the same bytes there.
// (The view reports no match without one, but a match still moves the
// cursor.) A text of code has digits on many lines, and every newline is a
// candidate of RH-2 in both views.
func matchAnchored(r *rule, anch0, anchN *dfaCache, src []byte, kind viewKind, cands []int32, budget int, tl tryLog, emit func(s, e int)) (rest int) {
	n := len(src)
	cursor := 0
	for _, c := range cands {
		p := int(c)
		if p < cursor {
			continue
		}
		// The byte before p is the context of ^ and \b.
		d, from := anchN, p-1
		if p == 0 {
			d, from = anch0, 0
		}
		end, known := tl.take(p, from)
		if !known {
			if budget <= 0 {
				return p
			}
			win := n
			if r.maxLen >= 0 {
				win = min(n, p+r.maxLen+1)
			}
			cut := from+budget < win
			if cut {
				win = from + budget
			}
			var read int
			end, read = d.end(src[from:win], kind)
			if cut && read == win-from {
				return p
			}
			budget -= read + 1
			if end >= 0 {
				end += from
			}
			if tl.record != nil {
				// The bytes the try read: up to the one its last thread
				// died at, or to the window's end, which it took for the
				// text's.
				*tl.record = append(*tl.record, anchoredTry{int32(p), int32(from + min(read+1, win-from)), int32(end)})
			}
		}
		if end < 0 {
			continue
		}
		emit(p, end)
		cursor = end // the candidates are distinct: an empty match needs no step past it
	}
	return -1
}

// matchScan finds matches left to right from position from, in time linear
// in the text (Go's regexp guarantees it).
func matchScan(r *rule, enc []byte, from int, emit func(s, e int)) {
	n := len(enc)
	for c := from; c <= n; {
		var s, e int
		if c == 0 {
			loc := r.scan0.FindIndex(enc)
			if loc == nil {
				return
			}
			s, e = loc[0], loc[1]
		} else {
			loc := r.afterByte().FindIndex(enc[c-1:])
			if loc == nil {
				return
			}
			s, e = c+loc[0], c-1+loc[1]
		}
		emit(s, e)
		c = e
		if e == s {
			c++
		}
	}
}

// matchSlow runs a rule that only the backtracking engine can run. A match
// that exceeds SlowMatchTimeout ends the rule's search in this view.
func (c *compiled) matchSlow(r *rule, units []rune, emit func(s, e int)) {
	for pos := 0; pos <= len(units); {
		mt, err := r.slow.FindRunesMatchStartingAt(units, pos)
		if err != nil || mt == nil {
			return
		}
		s, e := mt.RuneIndex, mt.RuneIndex+mt.RuneLength
		emit(s, e)
		pos = e
		if e == s {
			pos++
		}
	}
}
