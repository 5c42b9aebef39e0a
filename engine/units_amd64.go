//go:build !purego

package engine

// widenAVX2 writes raw's bytes from i to units from k, 32 ASCII bytes a
// step, up to the first 32 that hold a byte from 0x80 up or the last bytes
// that do not make 32, and returns where it stopped in both. units must
// have room for every byte from i on.
//
//go:noescape
func widenAVX2(units []uint16, raw []byte, i, k int) (iOut, kOut int)

// encodeAVX2 writes tab[u] to dst for the units of units, 32 at a time,
// up to the first 32 that hold a unit from 128 up, and returns how many it
// wrote; nib is nibbleTablesOf(tab). dst is at least as long as units.
//
//go:noescape
func encodeAVX2(dst []byte, units []uint16, nib *nibbleTables) int

// encodeBytesAVX2 is encodeAVX2 for bytes: it writes tab[b] to dst for
// the bytes of src, 32 at a time, up to the first 32 that hold one from
// 0x80 up, and returns how many it wrote. dst is at least as long as src.
//
//go:noescape
func encodeBytesAVX2(dst, src []byte, nib *nibbleTables) int

// encodeASCIIBytes writes the alphabet bytes (nib being their nibble
// tables) of src's leading whole blocks of 32 ASCII bytes to dst, and
// returns how many it did. dst may be shorter than src (the units of a
// text that is not ASCII are fewer than its bytes): the blocks it takes
// are ASCII, a unit a byte, so those that fit in dst are enough.
func encodeASCIIBytes(dst, src []byte, nib *nibbleTables) int {
	m := min(len(src), len(dst))
	if !hasAVX2 || m < 32 {
		return 0
	}
	return encodeBytesAVX2(dst[:m], src[:m], nib)
}

// widenASCII is widenAVX2 where it can run, for a stretch of at least 64
// bytes from i; else it widens nothing.
func widenASCII(units []uint16, raw []byte, i, k int) (iOut, kOut int) {
	if !hasAVX2 || len(raw)-i < 64 || len(units)-k < len(raw)-i {
		return i, k
	}
	return widenAVX2(units, raw, i, k)
}
