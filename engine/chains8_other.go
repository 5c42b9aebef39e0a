//go:build !amd64 || purego

package engine

// The column walk is amd64 only (chains8_amd64.go); elsewhere the four
// chains of walk take every text.
const hasColWalk = false

func walk8(p *byte, q, n int, delta *uint32, mask uint32, rows *[8]uint32) int {
	panic("walk8 without its kernel")
}

func mapColsAVX2(dst, src []byte, nib *nibbleTables, high byte) int {
	panic("mapColsAVX2 without its kernel")
}
