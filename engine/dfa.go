package engine

import "regexp/syntax"

// Go's regexp would run a rule's anchored form at each candidate with its
// backtracker, which costs tens of nanoseconds a unit on patterns such as
// IO-1 (`\b(ignore|…)\b[^.\n]{0,40}\b(previous|…)\b…`): each counted
// repetition is dozens of instructions to try at each unit. A DFA pays one
// table load a unit once its states exist. Go's regexp has none, so this
// file builds one lazily from the very program regexp.Compile makes of the
// same expression, and simulates regexp's own leftmost-first rules (the
// order of its Pike VM's threads) state by state: the end it reports is
// the one FindIndex reports. TestDFAMatchesRegexp holds it to that.
//
// The states a text needs are made as it needs them and kept for the next
// text in a per-matcher cache with a bounded size; a full cache starts
// over. A new state costs one pass over the program, as a step of the
// Pike VM does, so the time stays linear in the text's length. The bound
// keeps a hostile text from growing every cache of every pooled matcher:
// the three corpora need at most about 180 states of any form.

// anchoredDFA is the immutable part of the DFA of one `\A`-anchored
// expression: its program and the classes of bytes it cannot tell apart.
type anchoredDFA struct {
	prog *syntax.Prog
	// class[kind][b]: the class of byte b of a view of that kind, read
	// through the view's table (compiled.viewTabs).
	class  [3][256]uint8
	rep    []byte // one alphabet byte of each class
	stride int    // transitions per state: the classes, then end of text
}

// compileDFA compiles expr as regexp.Compile does, for views read through
// tabs. The texts it is run on are alphabet bytes, all ASCII, so each byte
// is one rune.
func compileDFA(expr string, tabs *[3]*[256]byte) (*anchoredDFA, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, err
	}
	d := &anchoredDFA{prog: prog}
	// Two bytes share a class when every rune instruction treats them
	// alike and they agree on what the empty-width assertions read: the
	// partition of the bytes that refines every instruction's byte set.
	sets := []byteSet{byteSetOf(syntax.IsWordChar), byteSetOf(func(r rune) bool { return r == '\n' })}
	seen := map[byteSet]bool{}
	for i := range prog.Inst {
		if in := &prog.Inst[i]; isRuneOp(in.Op) {
			if set := runeOpBytes(in); !seen[set] {
				seen[set] = true
				sets = append(sets, set)
			}
		}
	}
	var class [256]uint16 // refined class ids, renumbered as the sets go
	for _, set := range sets {
		var ids [2][256]uint16 // (old class, in set) → new id, plus one
		next := uint16(0)
		for b := range 256 {
			in := set.has(byte(b))
			k := &ids[boolByte(in)][class[b]]
			if *k == 0 {
				next++
				*k = next
			}
			class[b] = *k - 1
		}
	}
	var first [256]int // rep index + 1 of each class id
	var byteClass [256]uint8
	for b := range 256 {
		if first[class[b]] == 0 {
			d.rep = append(d.rep, byte(b))
			first[class[b]] = len(d.rep)
		}
		byteClass[b] = uint8(first[class[b]] - 1)
	}
	for kind, tab := range tabs {
		for b := range 256 {
			d.class[kind][b] = byteClass[tab[b]]
		}
	}
	d.stride = len(d.rep) + 1
	return d, nil
}

// byteSet is a set of bytes, each read as the rune of its value.
type byteSet [4]uint64

func (s *byteSet) has(b byte) bool { return s[b>>6]&(1<<(b&63)) != 0 }
func (s *byteSet) add(b int)       { s[b>>6] |= 1 << (b & 63) }

func byteSetOf(f func(rune) bool) byteSet {
	var s byteSet
	for b := range 256 {
		if f(rune(b)) {
			s.add(b)
		}
	}
	return s
}

// runeOpBytes is the set of bytes a rune instruction takes, from its
// ranges when it has them (MatchRune byte by byte would be most of the
// compile time).
func runeOpBytes(in *syntax.Inst) byteSet {
	var s byteSet
	switch {
	case in.Op == syntax.InstRune1 && in.Rune[0] < 256:
		s.add(int(in.Rune[0]))
		return s
	case in.Op == syntax.InstRuneAny:
		return byteSet{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	case in.Op == syntax.InstRuneAnyNotNL:
		return byteSet{^uint64(1 << '\n'), ^uint64(0), ^uint64(0), ^uint64(0)}
	case in.Op == syntax.InstRune && syntax.Flags(in.Arg)&syntax.FoldCase == 0 && len(in.Rune)%2 == 0:
		for i := 0; i+1 < len(in.Rune); i += 2 {
			for r := in.Rune[i]; r <= min(in.Rune[i+1], 255); r++ {
				s.add(int(r))
			}
		}
		return s
	}
	return byteSetOf(in.MatchRune)
}

// mustCompileDFA is compileDFA for an expression regexp has compiled.
func mustCompileDFA(expr string, tabs *[3]*[256]byte) *anchoredDFA {
	d, err := compileDFA(expr, tabs)
	if err != nil {
		panic("compiling " + expr + ": " + err.Error())
	}
	return d
}

func isRuneOp(op syntax.InstOp) bool {
	return op == syntax.InstRune || op == syntax.InstRune1 || op == syntax.InstRuneAny || op == syntax.InstRuneAnyNotNL
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// What a state knows of the byte before it, for the empty-width
// assertions at its position.
const (
	prevNone = 1 << iota // the start of the text
	prevWord
	prevNewline
)

const (
	dfaDead    = 0       // no thread left
	dfaStart   = 1       // the program's start at the start of the text
	dfaMatched = 1 << 30 // in a transition: a match ends before the byte
	dfaUnknown = -1      // a transition not computed yet
	// A cache holds at most dfaMaxStates states and dfaMaxThreads threads
	// in all (for a stride of 30 classes, some 60 KiB of transitions).
	dfaMaxStates  = 512
	dfaMaxThreads = 16 << 10
)

// dfaCache holds the states of one anchoredDFA that texts have needed.
type dfaCache struct {
	d         *anchoredDFA
	maxStates int
	index     map[string]int32
	trans     []int32  // stride per state; next state | dfaMatched, or dfaUnknown
	prev      []uint8  // per state: prevNone, prevWord, prevNewline
	pcs       []uint32 // the states' threads, in priority order, end to end
	at        []int32  // per state: where its threads start in pcs; one more
	// Scratch for computing a transition.
	seen   []uint32 // sparse set of program counters, over marked
	marked []uint32
	dense  []uint32
	stack  []uint32
	next   []uint32
	key    []byte
}

// newDFACache makes an empty cache of d's states.
func newDFACache(d *anchoredDFA) *dfaCache {
	c := &dfaCache{d: d, maxStates: dfaMaxStates, seen: make([]uint32, len(d.prog.Inst))}
	c.reset()
	return c
}

func (c *dfaCache) reset() {
	c.index = map[string]int32{}
	c.trans, c.prev, c.pcs, c.at = c.trans[:0], c.prev[:0], c.pcs[:0], append(c.at[:0], 0)
	c.intern(nil, 0)                                     // dfaDead
	c.intern([]uint32{uint32(c.d.prog.Start)}, prevNone) // dfaStart
}

// intern returns the state of threads pcs after a byte described by prev.
func (c *dfaCache) intern(pcs []uint32, prev uint8) int32 {
	c.key = append(c.key[:0], prev)
	for _, pc := range pcs {
		c.key = append(c.key, byte(pc), byte(pc>>8), byte(pc>>16), byte(pc>>24))
	}
	if s, ok := c.index[string(c.key)]; ok {
		return s
	}
	s := int32(len(c.prev))
	c.index[string(c.key)] = s
	c.prev = append(c.prev, prev)
	c.pcs = append(c.pcs, pcs...)
	c.at = append(c.at, int32(len(c.pcs)))
	for range c.d.stride {
		c.trans = append(c.trans, dfaUnknown)
	}
	return s
}

// end returns where the leftmost-first match of the expression at the
// start of b, read through the tables of kind, ends, or -1: FindIndex's
// end on b's alphabet bytes. It also returns where the last thread died:
// before b[read], or at read == len(b), having read b to its end (which it
// took for the end of the text).
func (c *dfaCache) end(b []byte, kind viewKind) (end, read int) {
	d := c.d
	class := &d.class[kind]
	s := int32(dfaStart)
	end = -1
	for i := 0; ; i++ {
		cls := len(d.rep) // end of text
		if i < len(b) {
			cls = int(class[b[i]])
		}
		t := c.trans[int(s)*d.stride+cls]
		if t == dfaUnknown {
			t = c.step(s, cls)
		}
		if t&dfaMatched != 0 {
			end = i
		}
		s = t &^ dfaMatched
		if s == dfaDead {
			return end, i
		}
	}
}

// step computes the transition of state s on byte class cls (len(rep):
// the end of the text), as one step of regexp's Pike VM: the threads'
// closure under the assertions that hold between the byte before and
// this one, in priority order and cut after the first match, then the
// threads that take the byte.
func (c *dfaCache) step(s int32, cls int) int32 {
	d := c.d
	r := -1
	if cls < len(d.rep) {
		r = int(d.rep[cls])
	}
	prev := c.prev[s]
	var ctx syntax.EmptyOp
	switch {
	case prev&prevNone != 0:
		ctx |= syntax.EmptyBeginText | syntax.EmptyBeginLine
	case prev&prevNewline != 0:
		ctx |= syntax.EmptyBeginLine
	}
	switch {
	case r < 0:
		ctx |= syntax.EmptyEndText | syntax.EmptyEndLine
	case r == '\n':
		ctx |= syntax.EmptyEndLine
	}
	if (prev&prevWord != 0) != (r >= 0 && syntax.IsWordChar(rune(r))) {
		ctx |= syntax.EmptyWordBoundary
	} else {
		ctx |= syntax.EmptyNoWordBoundary
	}

	// The closure, depth first in the order regexp's add follows.
	c.marked, c.dense, c.next = c.marked[:0], c.dense[:0], c.next[:0]
	matched := false
	for _, pc := range c.pcs[c.at[s]:c.at[s+1]] {
		if matched = c.closure(pc, ctx); matched {
			break
		}
	}
	// The threads before the match take the byte.
	if r >= 0 {
		for _, pc := range c.dense { // rune instructions only
			if in := &d.prog.Inst[pc]; in.MatchRune(rune(r)) {
				c.next = append(c.next, in.Out)
			}
		}
	}
	t, store := int32(dfaDead), true
	if len(c.next) > 0 {
		var after uint8
		if syntax.IsWordChar(rune(r)) {
			after |= prevWord
		}
		if r == '\n' {
			after |= prevNewline
		}
		if len(c.prev) >= c.maxStates || len(c.pcs)+len(c.next) > dfaMaxThreads {
			// Full: start over, keeping only the state being entered; s
			// is gone with the rest, so the transition is not stored.
			c.reset()
			store = false
		}
		t = c.intern(c.next, after)
	}
	if matched {
		t |= dfaMatched
	}
	if store {
		c.trans[int(s)*d.stride+cls] = t
	}
	return t
}

// closure adds the threads reachable from pc without a byte to c.dense
// (rune instructions only) and reports whether a match was reached, after
// which lower-priority threads are cut.
func (c *dfaCache) closure(pc uint32, ctx syntax.EmptyOp) bool {
	c.stack = append(c.stack[:0], pc)
	for len(c.stack) > 0 {
		pc := c.stack[len(c.stack)-1]
		c.stack = c.stack[:len(c.stack)-1]
		if c.visited(pc) {
			continue
		}
		in := &c.d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			c.stack = append(c.stack, in.Arg, in.Out) // Out first
		case syntax.InstCapture, syntax.InstNop:
			c.stack = append(c.stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^ctx == 0 {
				c.stack = append(c.stack, in.Out)
			}
		case syntax.InstMatch:
			return true
		case syntax.InstFail:
		default:
			c.dense = append(c.dense, pc)
		}
	}
	return false
}

// visited marks pc and reports whether it was marked already in this
// step.
func (c *dfaCache) visited(pc uint32) bool {
	i := c.seen[pc]
	if i < uint32(len(c.marked)) && c.marked[i] == pc {
		return true
	}
	c.seen[pc] = uint32(len(c.marked))
	c.marked = append(c.marked, pc)
	return false
}
