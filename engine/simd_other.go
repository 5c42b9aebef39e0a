//go:build !amd64 || purego

package engine

// Without vector kernels the word loops take the whole text.

func asciiLeetBlocks(dst []int32, raw []byte) ([]int32, int, bool, bool, int) {
	return dst, 0, true, false, 0
}

func skipBlocks(bs []byte, i int) int { return i }

// hasAVX2: no vector kernels run here.
const hasAVX2 = false

// hasVBMI: nor the kernels that also follow base64 runs and widen
// ASCII bytes to units; decodeText never calls this stand-in.
const hasVBMI = false

func widenVBMI(units []uint16, raw []byte, pos []int32, i, k int) (iOut, kOut, n int) {
	return i, k, 0
}

// leetKernelMin: decodeText's AVX2 path, which uses it, never runs here.
const leetKernelMin = 64
