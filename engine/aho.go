package engine

import "errors"

// ahoCorasick finds every occurrence of a set of literals in one pass. It
// runs over the alphabet's bytes (case already folded), as a dense DFA whose
// columns are classes of bytes, so the scan loop is one table load per
// byte.
type ahoCorasick struct {
	k     int      // columns
	ov    int      // the longest literal less one: how far chains overlap
	col   [128]int // alphabet byte -> column
	delta []uint32 // state*k + column -> next state*k | hasOut | view flags
	outAt []int32  // state -> start of its outputs in outs
	outs  []int32  // literal ids ending at each state (suffix links folded in)
	lit   []bool   // column -> its bytes occur in some literal
}

// A transition holds the next state's row offset in its low bits, hasOut
// when literals end there, and the unitFlags of the column's bytes above
// flagShift: a scan learns which views a text calls for from the loads it
// makes anyway.
const (
	hasOut    = 1 << 31
	flagShift = 28
	rowMask   = 1<<flagShift - 1
)

// maxTransitions bounds the automaton's table, whose row offsets must fit
// below the flag bits (a variable, so that a test can lower it).
var maxTransitions = rowMask

var errAutomatonTooLarge = errors.New("the rules' required words make a keyword automaton too large to index")

// acColumn is a column of the automaton: the literal class its bytes read
// as, and their unitFlags.
type acColumn struct {
	class int
	flags uint8
}

// newAhoCorasick builds the automaton of literals, whose bytes col maps to
// k classes. With cols, the automaton's columns are cols instead of the
// classes themselves (col must then map alphabet bytes to columns of cols).
func newAhoCorasick(literals []string, col [128]int, k int, cols []acColumn) (*ahoCorasick, error) {
	classOf := make([]int, k)
	for c := range classOf {
		classOf[c] = c
	}
	if cols != nil {
		classOf = make([]int, len(cols))
		for c, cc := range cols {
			classOf[c] = cc.class
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
	for id, lit := range literals {
		s := 0
		for i := 0; i < len(lit); i++ {
			c := classOf[col[lit[i]]]
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
	if nodes*len(classOf) > maxTransitions {
		return nil, errAutomatonTooLarge
	}
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
	ac := &ahoCorasick{k: len(classOf), col: col, lit: make([]bool, len(classOf))}
	inLit := make([]bool, k)
	for _, lit := range literals {
		for i := 0; i < len(lit); i++ {
			inLit[classOf[col[lit[i]]]] = true
		}
	}
	for c, class := range classOf {
		ac.lit[c] = inLit[class]
	}
	for _, l := range literals {
		ac.ov = max(ac.ov, len(l)-1)
	}
	ac.outAt = make([]int32, nodes+1)
	for s := range nodes {
		ac.outAt[s] = int32(len(ac.outs))
		ac.outs = append(ac.outs, outs[s]...)
	}
	ac.outAt[nodes] = int32(len(ac.outs))
	// Entries hold the next state's row offset (state*columns), so the scan
	// loop does no multiplication.
	ac.delta = make([]uint32, nodes*ac.k)
	for s := range nodes {
		for c, class := range classOf {
			t := delta[s*k+class]
			v := uint32(t * ac.k)
			if ac.outAt[t] != ac.outAt[t+1] {
				v |= hasOut
			}
			if cols != nil {
				v |= uint32(cols[c].flags) << flagShift
			}
			ac.delta[s*ac.k+c] = v
		}
	}
	return ac, nil
}

// scan sets the bit of every literal that occurs in text, whose bytes col
// maps to columns (ac.col for alphabet bytes), and returns the union of the
// columns' flags over text (with colRaw: the text's unitFlags).
func (ac *ahoCorasick) scan(text []byte, col *[128]int, seen []uint64) uint8 {
	return ac.walk(text, col, func(row uint32, _ int) { ac.mark(row, seen) })
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
// and lens describe the literals), plus offset. The starts come once each,
// but not in order.
func (ac *ahoCorasick) candidates(text []byte, offset int, col *[128]int, active []bool, prefixRules [][]int32, lens []int32, cands [][]int32) {
	ac.walk(text, col, func(row uint32, end int) {
		s := row / uint32(ac.k)
		for _, lit := range ac.outs[ac.outAt[s]:ac.outAt[s+1]] {
			for _, r := range prefixRules[lit] {
				if active[r] {
					cands[r] = append(cands[r], int32(offset+end)-lens[lit])
				}
			}
		}
	})
}

// walk runs the automaton over text, calling hit with the row offset and
// the end of every state with outputs it reaches, once per position, and
// returns the union of the columns' flags over text.
//
// One chain of table loads, each depending on the last, is bound by the
// load latency. A long text is walked instead by four independent chains in
// one loop, which the processor overlaps (BenchmarkKeywords, best of six
// runs: 2.7x one chain's speed on 4 KiB of prose, 1.9x on 300 bytes). Chain j starts at
// j*q and runs on ov bytes past where the next one starts: an occurrence
// that ends in a chain's first ov bytes is whole in the chain before, which
// reports it, and the chain reports only what ends after them.
func (ac *ahoCorasick) walk(text []byte, col *[128]int, hit func(row uint32, end int)) uint8 {
	if len(text) < 8*ac.ov || len(text) < 64 {
		return ac.resume(text, 0, 0, col, hit)
	}
	var st chains4
	n := st.start(text, ac.ov)
	for i := 0; i < n; i++ {
		var hits uint32
		i, hits = st.run(ac.delta, col, i)
		for j, row := range st.rows {
			if hits&(1<<j) != 0 && (j == 0 || i >= ac.ov) {
				hit(row, st.from[j]+i+1)
			}
		}
	}
	flags := uint8(st.acc>>flagShift) & 7
	for j := 0; j < 3; j++ {
		flags |= ac.resume(st.rest[j], st.rows[j], st.from[j]+n, col, hit)
	}
	return flags
}

// resume runs the automaton over text, which begins at offset, from the
// row offset row (0: the start), calling hit as walk does, and returns the
// union of the columns' flags over text.
func (ac *ahoCorasick) resume(text []byte, row uint32, offset int, col *[128]int, hit func(row uint32, end int)) uint8 {
	var acc uint32
	delta := ac.delta
	for i, b := range text {
		v := delta[row+uint32(col[b&0x7F])]
		acc |= v
		row = v & rowMask
		if v&hasOut != 0 {
			hit(row, offset+i+1)
		}
	}
	return uint8(acc>>flagShift) & 7
}

// chains4 is the state of four chains over a text: the bytes each runs in
// the common loop (all of one length), the few bytes it has left after it,
// where each begins in the text, their row offsets, and the union of the
// transitions taken.
type chains4 struct {
	texts [4][]byte
	rest  [4][]byte
	from  [4]int
	rows  [4]uint32
	acc   uint32
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

// run steps the four chains from position i until the common loop ends or a step reaches states with outputs: it returns that step's
// position, and hits has bit j set when chain j's state has outputs. It
// calls nothing, so that its loop keeps every value in a register.
func (st *chains4) run(delta []uint32, col *[128]int, i int) (int, uint32) {
	r0, r1, r2, r3 := st.rows[0], st.rows[1], st.rows[2], st.rows[3]
	acc := st.acc
	var hits uint32
	t0 := st.texts[0]
	t1, t2, t3 := st.texts[1][:len(t0)], st.texts[2][:len(t0)], st.texts[3][:len(t0)]
	for ; i < len(t0); i++ {
		v0 := delta[r0+uint32(col[t0[i]&0x7F])]
		v1 := delta[r1+uint32(col[t1[i]&0x7F])]
		v2 := delta[r2+uint32(col[t2[i]&0x7F])]
		v3 := delta[r3+uint32(col[t3[i]&0x7F])]
		r0, r1, r2, r3 = v0&rowMask, v1&rowMask, v2&rowMask, v3&rowMask
		any := v0 | v1 | v2 | v3
		acc |= any
		if any&hasOut != 0 {
			hits = v0>>31 | v1>>31<<1 | v2>>31<<2 | v3>>31<<3
			break
		}
	}
	st.rows, st.acc = [4]uint32{r0, r1, r2, r3}, acc
	return i, hits
}
