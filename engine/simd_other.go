//go:build !amd64 || purego

package engine

// Without vector kernels the word loops take the whole text.

func asciiLeetBlocks(dst []int32, raw []byte) ([]int32, int, bool, bool, int) {
	return dst, 0, true, false, 0
}

func skipBlocks(bs []byte, i int) int { return i }

// hasAVX2: no vector kernels run here.
const hasAVX2 = false

// hasVBMI: nor the kernel that also follows base64 runs.
const hasVBMI = false

// leetKernelMin: decodeText's AVX2 path, which uses it, never runs here.
const leetKernelMin = 64

// leetAVX2: decodeLazy never calls it here (hasAVX2 is false).
func leetAVX2(pos []int32, raw []byte, from int) (n, end int, ascii, pct bool) {
	return 0, from, true, false
}
