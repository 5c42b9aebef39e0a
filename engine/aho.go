package engine

import (
	"errors"
	"unsafe"
)

// ahoCorasick finds every occurrence of a set of literals in one pass. It
// runs over the alphabet's bytes (case already folded), as a dense DFA whose
// columns are classes of bytes, so the scan loop is one table load per
// byte.
type ahoCorasick struct {
	k     int      // columns
	ov    int      // the longest literal less one: how far chains overlap
	least int      // the shortest literal's length
	col   byteCols // alphabet byte -> column
	delta []uint32 // state*k + column -> the next state's row offset, state*k
	// The states where literals end come after all the others, from a row
	// offset of out on, a power of two: a scan tells that one of several
	// states has outputs from their row offsets ORed (walk).
	out   uint32
	outAt []int32 // state -> start of its outputs in outs
	outs  []int32 // literal ids ending at each state (suffix links folded in)
	lit   []bool  // column -> its bytes occur in some literal
}

// byteCols maps the bytes of a view to an automaton's columns. Its 256
// entries let a byte index it with no mask and no bounds check (the views
// only hold bytes below 128).
type byteCols [256]uint32

// maxTransitions bounds the automaton's table (a variable, so that a test
// can lower it).
var maxTransitions = 1 << 28

var errAutomatonTooLarge = errors.New("the rules' required words make a keyword automaton too large to index")

// newAhoCorasick builds the automaton of literals, whose bytes col maps to
// k classes. With classes, the automaton's columns are those instead of
// the classes themselves: column c reads as class classes[c] (col must then
// map alphabet bytes to columns).
func newAhoCorasick(literals []string, col *byteCols, k int, classes []int) (*ahoCorasick, error) {
	classOf := classes
	if classOf == nil {
		classOf = make([]int, k)
		for c := range classOf {
			classOf[c] = c
		}
	}
	// The trie goes straight into a dense table of k entries per node (-1:
	// no child yet); a map per node made this half of compiling a rulebook.
	most := 1
	for _, lit := range literals {
		most += len(lit)
	}
	delta := make([]int, most*k)
	for i := range delta {
		delta[i] = -1
	}
	outs := make([][]int32, 1, most) // literal ids ending at each node
	inLit := make([]bool, k)         // classes that occur in a literal
	ov, least := 0, 0
	for id, lit := range literals {
		ov = max(ov, len(lit)-1)
		if id == 0 || len(lit) < least {
			least = len(lit)
		}
		s := 0
		for i := 0; i < len(lit); i++ {
			c := classOf[col[lit[i]]]
			inLit[c] = true
			n := delta[s*k+c]
			if n < 0 {
				n = len(outs)
				outs = append(outs, nil)
				delta[s*k+c] = n
			}
			s = n
		}
		outs[s] = append(outs[s], int32(id))
	}
	nodes := len(outs)
	delta = delta[:nodes*k]
	// The automaton over classes. Breadth-first, a node's failure target
	// is shallower, so its row and outputs are complete when the node is
	// reached; a row still holds only its children (or -1) until then.
	fail := make([]int, nodes)
	queue := make([]int, 1, nodes)
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		row := delta[s*k : s*k+k]
		for c, n := range row {
			switch {
			case n >= 0:
				if s != 0 {
					fail[n] = delta[fail[s]*k+c]
				}
				outs[n] = append(outs[n], outs[fail[n]]...)
				queue = append(queue, n)
			case s == 0:
				row[c] = 0
			default:
				row[c] = delta[fail[s]*k+c]
			}
		}
	}
	// Number the states: first those without outputs, in breadth-first
	// order (the root is 0), then unused rows up to the power of two out,
	// then those with outputs.
	cols := len(classOf)
	index := make([]int, nodes)
	plain := 0
	for n := range nodes {
		if len(outs[n]) == 0 {
			index[n] = plain
			plain++
		}
	}
	out := 1
	for out < plain*cols {
		out *= 2
	}
	states := (out + cols - 1) / cols
	for n := range nodes {
		if len(outs[n]) != 0 {
			index[n] = states
			states++
		}
	}
	if states*cols > maxTransitions {
		return nil, errAutomatonTooLarge
	}
	ac := &ahoCorasick{k: cols, ov: ov, least: least, col: *col, out: uint32(out), lit: make([]bool, cols)}
	for c, class := range classOf {
		ac.lit[c] = inLit[class]
	}
	byIndex := make([][]int32, states)
	for n := range nodes {
		byIndex[index[n]] = outs[n]
	}
	ac.outAt = make([]int32, states+1)
	for s := range states {
		ac.outAt[s] = int32(len(ac.outs))
		ac.outs = append(ac.outs, byIndex[s]...)
	}
	ac.outAt[states] = int32(len(ac.outs))
	ac.delta = make([]uint32, states*cols)
	for n := range nodes {
		row := ac.delta[index[n]*cols : index[n]*cols+cols]
		for c, class := range classOf {
			row[c] = uint32(index[delta[n*k+class]] * cols)
		}
	}
	return ac, nil
}

// scan sets the bit of every literal that occurs in text, whose bytes col
// maps to columns (ac.col for alphabet bytes).
func (ac *ahoCorasick) scan(text []byte, col *byteCols, seen []uint64) {
	ac.walk(text, col, func(row uint32, _ int) { ac.mark(row, seen) })
}

// mark sets the bits of the literals that end at the state of row offset
// row.
func (ac *ahoCorasick) mark(row uint32, seen []uint64) {
	s := row / uint32(ac.k)
	for _, lit := range ac.outs[ac.outAt[s]:ac.outAt[s+1]] {
		seen[lit>>6] |= 1 << (lit & 63)
	}
}

// candidates appends to cands[r], for every active rule r, the start of
// every occurrence in text of a literal that r begins with (prefixRules
// and lens describe the literals), plus offset, in the order of their
// ends: one chain's order, though walk's four chains find them. A text of
// code has thousands, and sorting them after took a third of its scan.
// The starts come once each, in order but for prefixes of different
// lengths ending close together. later is scratch for the hits of chains
// 1 to 3, which are added once chain 0's are.
func (ac *ahoCorasick) candidates(text []byte, offset int, col *byteCols, active []bool, prefixRules [][]int32, lens []int32, cands [][]int32, later *[3][]hitAt) {
	add := func(row uint32, end int) {
		s := row / uint32(ac.k)
		for _, lit := range ac.outs[ac.outAt[s]:ac.outAt[s+1]] {
			for _, r := range prefixRules[lit] {
				if active[r] {
					cands[r] = append(cands[r], int32(offset+end)-lens[lit])
				}
			}
		}
	}
	q := ac.walkSpan(len(text))
	if q == 0 {
		ac.walk(text, col, add)
		return
	}
	// Chain j reports the hits that end in (j*q+ov, (j+1)*q+ov] (walk),
	// in order; the last chain's go on to the end of the text.
	for j := range later {
		later[j] = later[j][:0]
	}
	ac.walk(text, col, func(row uint32, end int) {
		if end <= q+ac.ov {
			add(row, end)
		} else {
			j := min((end-ac.ov-1)/q, 3)
			later[j-1] = append(later[j-1], hitAt{row, int32(end)})
		}
	})
	for _, hits := range later {
		for _, h := range hits {
			add(h.row, int(h.end))
		}
	}
}

// hitAt is a hit of walk: the row offset of the state and where it ends.
type hitAt struct {
	row uint32
	end int32
}

// walkSpan returns the distance between the starts of walk's chains over
// a text of n bytes, or 0 when one chain walks it.
func (ac *ahoCorasick) walkSpan(n int) int {
	if n < 4*ac.ov || n < 96 {
		return 0
	}
	return (n - ac.ov + 3) / 4
}

// walk runs the automaton over text, calling hit with the row offset and
// the end of every state with outputs it reaches, once per position.
//
// One chain of table loads, each depending on the last, is bound by the
// load latency. A long text is walked instead by four independent chains in
// one loop, which the processor overlaps (BenchmarkKeywords, three runs:
// 3.5x one chain's speed on 4 KiB of prose, 2.3x on 300 bytes). Chain j
// starts at j*q and runs on ov bytes past where the next one starts: an
// occurrence that ends in a chain's first ov bytes is whole in the chain
// before, which reports it, and the chain reports only what ends after
// them.
func (ac *ahoCorasick) walk(text []byte, col *byteCols, hit func(row uint32, end int)) {
	// Below about 96 bytes one chain is faster: four chains each walk ov
	// bytes more (BenchmarkKeywords).
	if ac.walkSpan(len(text)) == 0 {
		ac.resume(text, 0, 0, col, hit)
		return
	}
	var st chains4
	n := st.start(text, ac.ov)
	for i := 0; i < n; i++ {
		var hits uint32
		i, hits = st.run(ac.delta, col, ac.out, i)
		for j, row := range st.rows {
			if hits&(1<<j) != 0 && (j == 0 || i >= ac.ov) {
				hit(row, st.from[j]+i+1)
			}
		}
	}
	for j := 0; j < 3; j++ {
		ac.resume(st.rest[j], st.rows[j], st.from[j]+n, col, hit)
	}
}

// litBytes returns which bytes, through col, occur in some literal.
func (ac *ahoCorasick) litBytes(col *byteCols) (t [256]bool) {
	for b := range t {
		t[b] = ac.lit[col[b]]
	}
	return t
}

// resume runs the automaton over text, which begins at offset, from the
// row offset row (0: the start), calling hit as walk does.
func (ac *ahoCorasick) resume(text []byte, row uint32, offset int, col *byteCols, hit func(row uint32, end int)) {
	delta, out := ac.delta, ac.out
	for i, b := range text {
		if row = delta[row+col[b]]; row >= out {
			hit(row, offset+i+1)
		}
	}
}

// chains4 is the state of four chains over a text: the bytes each runs in
// the common loop (all of one length), the few bytes it has left after it,
// where each begins in the text, and their row offsets.
type chains4 struct {
	texts [4][]byte
	rest  [4][]byte
	from  [4]int
	rows  [4]uint32
}

// start sets the chains over text for literals of up to ov+1 bytes and
// returns the length of the common loop. Chain j runs from j*q over q+ov
// bytes (the last to the end of the text, q+ov-d bytes, 0 <= d < 4); the
// common loop is the last chain's length, and the others have d bytes
// left.
func (st *chains4) start(text []byte, ov int) int {
	q := (len(text) - ov + 3) / 4
	n := len(text) - 3*q
	for j := 0; j < 4; j++ {
		from := j * q
		end := min(len(text), from+q+ov)
		st.from[j] = from
		st.texts[j], st.rest[j] = text[from:from+n], text[from+n:end]
	}
	return n
}

// run steps the four chains from position i until the common loop ends or
// a step reaches states with outputs: it returns that step's position, and
// hits has bit j set when chain j's state has outputs. It calls nothing,
// so that its loop keeps every value in a register: a step is four times a
// byte, a column and a transition loaded and an add, and one test for all
// four (the row offsets ORed reach out when one does, out being a power of
// two).
func (st *chains4) run(delta []uint32, col *byteCols, out uint32, from int) (int, uint32) {
	r0, r1, r2, r3 := st.rows[0], st.rows[1], st.rows[2], st.rows[3]
	var hits uint32
	n := len(st.texts[0])
	t0 := st.texts[0][from:]
	t1, t2, t3 := st.texts[1][from:n], st.texts[2][from:n], st.texts[3][from:n]
	// No bounds checks on delta: every entry is a row offset and every
	// column is below k (newAhoCorasick, TestAutomatonRowsInRange), so
	// row+column is an index of delta.
	d := unsafe.Pointer(unsafe.SliceData(delta))
	_ = col[0] // the nil check, once
	i := 0
	for ; i < len(t0); i++ {
		r0 = *(*uint32)(unsafe.Add(d, uintptr(r0+col[t0[i]])*4))
		r1 = *(*uint32)(unsafe.Add(d, uintptr(r1+col[t1[i]])*4))
		r2 = *(*uint32)(unsafe.Add(d, uintptr(r2+col[t2[i]])*4))
		r3 = *(*uint32)(unsafe.Add(d, uintptr(r3+col[t3[i]])*4))
		if r0|r1|r2|r3 >= out {
			hits = bit(r0 >= out) | bit(r1 >= out)<<1 | bit(r2 >= out)<<2 | bit(r3 >= out)<<3
			break
		}
	}
	st.rows = [4]uint32{r0, r1, r2, r3}
	return from + i, hits
}

func bit(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
