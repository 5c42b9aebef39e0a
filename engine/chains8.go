package engine

import "unsafe"

// The union automaton's walk over a long text as eight chains of column
// bytes (walk8, amd64). The four chains of walk take three loads a byte
// and chain (the byte, its column, the transition); with the text first
// mapped to its columns, 32 bytes a step (mapColsAVX2), a step takes two,
// and eight chains keep more of them in flight
// (BenchmarkUnionDocument).

// colMap maps a view's bytes to the union automaton's columns as bytes.
type colMap struct {
	nib nibbleTables // of the columns of the bytes below 128
	// high is the column of every byte from 0x80 up, or -1 when they
	// have more than one or a column does not fit a byte: the view is
	// then walked by walk's four chains.
	high int
}

func newColMap(col *byteCols) colMap {
	var tab [256]byte
	m := colMap{high: int(col[0x80])}
	for b, c := range col {
		if c > 255 {
			return colMap{high: -1}
		}
		tab[b] = byte(c)
		if b >= 0x80 && int(c) != m.high {
			m.high = -1
		}
	}
	m.nib = nibbleTablesOf(&tab)
	return m
}

// identityCols is the byte table of a column text: its bytes are columns.
var identityCols = func() (c byteCols) {
	for b := range c {
		c[b] = uint32(b)
	}
	return c
}()

// colWalkSpan returns the distance between the starts of walkCols' chains
// over a text of n bytes, or 0 when walk should take it: the eight chains
// each walk ov bytes more, and the mapping pays for itself from some
// hundreds of bytes.
func colWalkSpan(n, ov int) int {
	if n < 1024 || n < 16*ov {
		return 0
	}
	return (n - ov + 7) / 8
}

// mapCols writes the columns of text's bytes (col being m's table) to
// dst, which is at least as long: 32 bytes a step where the kernel runs,
// the rest a byte at a time.
func (m *colMap) mapCols(dst, text []byte, col *byteCols) {
	i := 0
	if hasColWalk && len(text) >= 32 {
		i = mapColsAVX2(dst, text, &m.nib, byte(m.high))
	}
	for ; i < len(text); i++ {
		dst[i] = byte(col[text[i]])
	}
}

// walkCols appends to hits the hits walk would report over the column
// text ct (colMap.mapCols), with eight chains q apart (colWalkSpan): chain
// j starts at j*q and reports only what ends after its first ov bytes.
// They are returned rather than handed to a function at each stop: what
// the caller reads of a hit (the state's outputs, the keywords seen) the
// walk's table pushes out of the cache, and at a stop each of those loads
// waits on the one before (BenchmarkUnionDocument/eight: 170-220 µs with
// the hits marked after the walk, 205-285 µs at each stop).
func (ac *ahoCorasick) walkCols(ct []byte, q int, hits []hitAt) []hitAt {
	ov, out := ac.ov, ac.out
	n := len(ct) - 7*q // the common steps: the last chain's length
	var rows [8]uint32
	// out is a power of two: a row offset is at least out when it has a
	// bit of ^(out-1).
	mask := ^(out - 1)
	delta := unsafe.SliceData(ac.delta)
	for i := 0; i < n; {
		i += walk8(&ct[i], q, n-i, delta, mask, &rows)
		if (rows[0]|rows[1]|rows[2]|rows[3]|rows[4]|rows[5]|rows[6]|rows[7])&mask == 0 {
			continue
		}
		// The step at i-1 reached outputs: the occurrences end there.
		for j, row := range rows {
			if row >= out && (j == 0 || i > ov) {
				hits = append(hits, hitAt{row, int32(j*q + i)})
			}
		}
	}
	for j := range 7 {
		from := j*q + n
		ac.resume(ct[from:min(len(ct), j*q+q+ov)], rows[j], from, &identityCols, func(row uint32, end int) {
			hits = append(hits, hitAt{row, int32(end)})
		})
	}
	return hits
}
