//go:build !purego

package engine

import (
	"slices"

	"golang.org/x/sys/cpu"
)

// hasAVX2 tells whether the AVX2 kernels of simd_amd64.s can run.
var hasAVX2 = cpu.X86.HasAVX2

// The shortest texts for the kernels: a whole block, from which they are
// faster than the words (measured).
const (
	leetKernelMin  = 64
	tokenKernelMin = 64
)

// leetAVX2 writes the positions of the leetspeak characters of raw from
// position from to pos, and returns how many it wrote and the position it
// stopped at: it reads whole blocks of 64 bytes, then the bytes after them
// as the end of the last 64 bytes (those before from are the caller's,
// ASCII), and stops before a block that has positions when pos has no room
// for 64 more, or with ascii false at one that holds a byte of 0x80 or
// above (the positions and the stop are then those before it, and pct
// false). It does nothing on a raw shorter than a block. pct reports a '%'
// in the blocks it read (some byte of raw is one).
//
//go:noescape
func leetAVX2(pos []int32, raw []byte, from int) (n, end int, ascii, pct bool)

// tokenSkipAVX2 returns the first position of s where 16 base64 bytes
// start, len(s) when there is none; 0 when s is shorter than a block.
//
//go:noescape
func tokenSkipAVX2(s []byte) int

// tokenSkipAVX512 is tokenSkipAVX2 with AVX-512 BW: 1.2-1.7x as fast on
// prose from 1 KiB (BenchmarkFindTokens).
//
//go:noescape
func tokenSkipAVX512(s []byte) int

// hasAVX512BW tells whether tokenSkipAVX512 can run.
var hasAVX512BW = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW

// classifyVBMI is leetAVX2 with AVX-512 VBMI, which also follows the
// runs of base64 bytes as tokenSkipAVX512 does, so that a text with no
// token (most of them) needs no second pass for findTokens: from and run
// (the base64 bytes that end raw[:from]) say where it starts; tok is the
// start of the first 16 base64 bytes in a row found before from (-1:
// none). It returns run and tok for the blocks it read. Unlike leetAVX2 it
// reads the bytes after the whole blocks on their own, under a mask, so it
// takes a raw of any length, and pct is about the bytes from from on.
//
//go:noescape
func classifyVBMI(pos []int32, raw []byte, from, run, tok int) (n, end, runOut, tokOut int, ascii, pct bool)

// hasVBMI tells whether classifyVBMI can run: it needs
// what the wide keyword chains need, and BMI1 and BMI2 (every processor
// with AVX-512 has them, and LZCNT).
var hasVBMI = haveWide && cpu.X86.HasBMI1 && cpu.X86.HasBMI2

// asciiLeetBlocks is asciiLeet with a vector kernel, for a raw of one
// block or more; it returns how far it went (0 or len(raw)) for the words
// to go on, and, when it went to the end, whether raw has a '%' (the
// kernel looks at every byte anyway: a search of its own was 5% of a long
// text's scan), and where findTokens need look from: the start of the
// first 16 base64 bytes in a row, len(raw) for none, or 0 when the kernel
// does not follow them.
func asciiLeetBlocks(dst []int32, raw []byte) (_ []int32, _ int, ascii, pct bool, tokens int) {
	if !hasAVX2 || len(raw) < leetKernelMin {
		return dst, 0, true, false, 0
	}
	run, tok := 0, -1
	for i := 0; ; {
		var n, end int
		var p bool
		if hasVBMI {
			n, end, run, tok, ascii, p = classifyVBMI(dst[len(dst):cap(dst)], raw, i, run, tok)
		} else {
			n, end, ascii, p = leetAVX2(dst[len(dst):cap(dst)], raw, i)
		}
		pct = pct || p
		if dst = dst[:len(dst)+n]; !ascii {
			if !hasVBMI {
				i = end // leetAVX2's positions and stop before the block
			}
			return dst, i, false, false, 0
		}
		if end == len(raw) {
			switch {
			case !hasVBMI:
				tok = 0
			case tok < 0:
				tok = len(raw)
			}
			return dst, end, true, pct, tok
		}
		// Room for the next block's positions, only when it has some.
		dst, i = slices.Grow(dst, 64), end
	}
}

// skipBlocks returns the first position at or after i where 16 base64
// bytes start, len(bs) when there is none, with the AVX2 kernel; or i,
// for skipWords, when bs[i:] is too short for it.
func skipBlocks(bs []byte, i int) int {
	if !hasAVX2 || len(bs)-i < tokenKernelMin {
		return i
	}
	if hasAVX512BW {
		return i + tokenSkipAVX512(bs[i:])
	}
	return i + tokenSkipAVX2(bs[i:])
}
