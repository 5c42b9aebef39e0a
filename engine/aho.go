package engine

// ahoCorasick finds every occurrence of a set of literals in one pass. It
// runs over the alphabet's bytes (case already folded), as a dense DFA whose
// columns are the alphabet's classes, so the scan loop is one table load
// per byte.
type ahoCorasick struct {
	k     int      // columns: classes of the alphabet
	col   [128]int // byte -> column
	delta []uint32 // state*k + column -> next state*k, hasOut in the top bit
	outAt []int32  // state -> start of its outputs in outs
	outs  []int32  // literal ids ending at each state (suffix links folded in)
}

const hasOut = 1 << 31

func newAhoCorasick(literals []string, col [128]int, k int) *ahoCorasick {
	type node struct {
		next map[int]int
		fail int
		out  []int32
	}
	nodes := []node{{next: map[int]int{}}}
	for id, lit := range literals {
		s := 0
		for i := 0; i < len(lit); i++ {
			c := col[lit[i]]
			n, ok := nodes[s].next[c]
			if !ok {
				nodes = append(nodes, node{next: map[int]int{}})
				n = len(nodes) - 1
				nodes[s].next[c] = n
			}
			s = n
		}
		nodes[s].out = append(nodes[s].out, int32(id))
	}
	ac := &ahoCorasick{k: k, col: col}
	ac.delta = make([]uint32, len(nodes)*k)
	// Breadth-first: a node's failure target is shallower, so its row and
	// outputs are complete when the node is reached.
	queue := []int{0}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for c := 0; c < k; c++ {
			if n, ok := nodes[s].next[c]; ok {
				if s == 0 {
					nodes[n].fail = 0
				} else {
					nodes[n].fail = int(ac.delta[nodes[s].fail*k+c] &^ hasOut)
				}
				nodes[n].out = append(nodes[n].out, nodes[nodes[n].fail].out...)
				ac.delta[s*k+c] = uint32(n)
				queue = append(queue, n)
			} else if s == 0 {
				ac.delta[c] = 0
			} else {
				ac.delta[s*k+c] = ac.delta[nodes[s].fail*k+c] &^ hasOut
			}
		}
	}
	ac.outAt = make([]int32, len(nodes)+1)
	for s := range nodes {
		ac.outAt[s] = int32(len(ac.outs))
		ac.outs = append(ac.outs, nodes[s].out...)
	}
	ac.outAt[len(nodes)] = int32(len(ac.outs))
	// Entries hold the next state's row offset (state*k), so the scan loop
	// does no multiplication.
	for i, v := range ac.delta {
		t := v &^ hasOut
		ac.delta[i] = t * uint32(k)
		if ac.outAt[t] != ac.outAt[t+1] {
			ac.delta[i] |= hasOut
		}
	}
	return ac
}

// scan sets the bit of every literal that occurs in text, whose bytes col
// maps to columns (ac.col for alphabet bytes).
func (ac *ahoCorasick) scan(text []byte, col *[128]int, seen []uint64) {
	ac.resume(text, 0, col, seen)
}

// resume runs the automaton over text from the row offset row (0: the
// start), marking the literals it finds, and returns the union of
// unitFlags over text (what the ASCII path needs; cheap beside the load
// chain).
func (ac *ahoCorasick) resume(text []byte, row uint32, col *[128]int, seen []uint64) uint8 {
	var flags uint8
	delta := ac.delta
	for _, b := range text {
		b &= 0x7F
		flags |= unitFlags[b]
		v := delta[row+uint32(col[b])]
		row = v &^ hasOut
		if v&hasOut != 0 {
			ac.mark(row, seen)
		}
	}
	return flags
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
// and lens describe the literals). The hit handling is written out here
// rather than called per hit: prefixes such as "<" or a newline are common.
func (ac *ahoCorasick) candidates(text []byte, active []bool, prefixRules [][]int32, lens []int32, cands [][]int32) {
	row := uint32(0)
	k := uint32(ac.k)
	delta, col := ac.delta, &ac.col
	for i, b := range text {
		v := delta[row+uint32(col[b&0x7F])]
		row = v &^ hasOut
		if v&hasOut == 0 {
			continue
		}
		s := row / k
		for _, lit := range ac.outs[ac.outAt[s]:ac.outAt[s+1]] {
			for _, r := range prefixRules[lit] {
				if active[r] {
					cands[r] = append(cands[r], int32(i+1)-lens[lit])
				}
			}
		}
	}
}

// scanASCII is scan over an all-ASCII text as it is, with col mapping its
// bytes to columns; it also returns the union of unitFlags over the text.
//
// The loop is bound by the latency of one table load per byte, each
// depending on the last. Two halves of a long text run as independent
// chains in the same loop, which the processor overlaps (on 256 KiB of
// prose: 500 MB/s against 330 with one chain). The second half starts
// maxLit-1 bytes early, so that every occurrence ending in it is whole in
// it; it is the longer, and finishes alone.
func (ac *ahoCorasick) scanASCII(text []byte, col *[128]int, maxLit int, seen []uint64) uint8 {
	if len(text) < 512 {
		return ac.resume(text, 0, col, seen)
	}
	mid := len(text) / 2
	lo, hi := text[:mid], text[mid-maxLit+1:]
	delta := ac.delta
	var flags uint8
	var r1, r2 uint32
	for i, b1 := range lo {
		b1, b2 := b1&0x7F, hi[i]&0x7F
		flags |= unitFlags[b1] | unitFlags[b2]
		v1 := delta[r1+uint32(col[b1])]
		v2 := delta[r2+uint32(col[b2])]
		r1, r2 = v1&^hasOut, v2&^hasOut
		if (v1|v2)&hasOut != 0 {
			if v1&hasOut != 0 {
				ac.mark(r1, seen)
			}
			if v2&hasOut != 0 {
				ac.mark(r2, seen)
			}
		}
	}
	return flags | ac.resume(hi[len(lo):], r2, col, seen)
}
