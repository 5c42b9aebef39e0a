//go:build !purego

package jsonstr

import (
	"encoding/binary"
	"math/bits"

	"golang.org/x/sys/cpu"
)

// useAVX2 says whether plain may call plainAVX2.
var useAVX2 = cpu.X86.HasAVX2

// useAVX512 says whether plainASCII may call plainAVX512.
var useAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasBMI2

// plainAVX512 returns the offset of the first stop byte in b's whole
// 64-byte blocks, or the length of those blocks when they have none, and
// whether a byte from 0x80 up comes before it. It reads nothing past the
// blocks.
//
//go:noescape
func plainAVX512(b []byte) (n int, high bool)

// plainAVX2 returns the offset of the first stop byte in b's whole 32-byte
// blocks, or the length of those blocks when they have none. It reads
// nothing past them, so nothing past b.
//
//go:noescape
func plainAVX2(b []byte) int

// asciiAVX2 returns how many of b's bytes, in whole 32-byte blocks from
// the start, precede the first block that holds a byte from 0x80 up. It
// reads nothing past the blocks.
//
//go:noescape
func asciiAVX2(b []byte) int

// asciiPrefix is asciiPrefixWords after the kernel's blocks.
func asciiPrefix(b []byte) int {
	n := 0
	if useAVX2 && len(b) >= 32 {
		if n = asciiAVX2(b); n < len(b)&^31 {
			return n
		}
	}
	return n + asciiPrefixWords(b[n:])
}

// plainASCII is PlainASCII: with AVX-512 one kernel over the whole 64-byte
// blocks from i, then the SWAR loop and the ASCII words over the rest; with
// AVX2 plain, then asciiPrefix over what it passed.
func plainASCII(b []byte, i int) (int, bool) {
	// A key or a short value ends within its first word: found there, with
	// no call to a kernel (the bytes before the stop are ASCII when none
	// has its high bit).
	if i+8 <= len(b) {
		v := binary.LittleEndian.Uint64(b[i:])
		if m := stopWord(v); m != 0 {
			n := bits.TrailingZeros64(m) / 8
			return i + n, v&0x8080808080808080&(1<<(8*n)-1) == 0
		}
	}
	if !useAVX512 || len(b)-i < 64 {
		j := plain(b, i)
		if j-i < 64 { // a key, a short value: no call to assembly
			return j, asciiPrefixWords(b[i:j]) == j-i
		}
		return j, asciiPrefix(b[i:j]) == j-i
	}
	n, high := plainAVX512(b[i:])
	i += n
	j := plainSWAR(b, i)
	return j, !high && asciiPrefixWords(b[i:j]) == j-i
}

// plain is Plain: the kernel over the whole 32-byte blocks from i, the SWAR
// loop for the rest.
func plain(b []byte, i int) int {
	// Below 32 bytes the kernel has no block to test: the call would be
	// pure cost.
	if useAVX2 && len(b)-i >= 32 {
		i += plainAVX2(b[i:])
	}
	// After a hit the SWAR loop returns at its first word; after a miss it
	// reads the last 0-31 bytes.
	return plainSWAR(b, i)
}
