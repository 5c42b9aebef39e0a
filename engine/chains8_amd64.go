//go:build !purego

package engine

// walk8 steps the eight chains of a column text (walkCols) from p, chain j
// at p[j*q:], until n steps are done or a step reaches a state with
// outputs (a row with a bit of mask set), and returns the steps done; it
// reads and writes the chains' row offsets in rows. delta is the
// automaton's table, which every row offset plus column byte indexes.
//
//go:noescape
func walk8(p *byte, q, n int, delta *uint32, mask uint32, rows *[8]uint32) int

// mapColsAVX2 writes to dst the nibble tables' bytes (nibbleTablesOf) for
// the bytes of src below 128 and high for the others, 32 at a time, and
// returns how many it wrote: the whole blocks of 32. dst is at least as
// long as src.
//
//go:noescape
func mapColsAVX2(dst, src []byte, nib *nibbleTables, high byte) int

// hasColWalk: the column text is made with AVX2 (walk8 itself is scalar).
var hasColWalk = hasAVX2
