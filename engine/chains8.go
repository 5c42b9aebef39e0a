package engine

// The union automaton's walk over a long text as eight chains of column
// bytes (walk8, amd64). The four chains of walk take three loads a byte
// (the byte, its column, the transition) and are bound by them, not by
// the chains' latency: with the text first mapped to its columns, 32
// bytes a step (mapColsAVX2), a step takes two, and eight chains keep
// more of them in flight. On the corpus document the walk takes about
// 40% less (bench/README.md).

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

// delta8Of returns ac.delta with every row offset over 8, or nil when a
// row offset is not a multiple of 8, an eighth does not fit 16 bits, or
// out is below 8.
func delta8Of(ac *ahoCorasick) []uint16 {
	if ac.k%8 != 0 || ac.out < 8 || len(ac.delta) > 8<<16 {
		return nil
	}
	d := make([]uint16, len(ac.delta))
	for i, row := range ac.delta {
		d[i] = uint16(row / 8)
	}
	return d
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
// dst, which is at least as long.
func (m *colMap) mapCols(dst, text []byte, col *byteCols) {
	i := 0
	if hasColWalk && len(text) >= 32 {
		i = mapColsAVX2(dst, text, &m.nib, byte(m.high))
	}
	for ; i < len(text); i++ {
		dst[i] = byte(col[text[i]])
	}
}
