//go:build !amd64

package engine

// Without vector kernels the word loops take the whole text.

func asciiLeetBlocks(dst []int32, raw []byte) ([]int32, int, bool, bool, int) {
	return dst, 0, true, false, 0
}

func skipBlocks(bs []byte, i int) int { return i }

// hasAVX2: no vector kernels run here.
const hasAVX2 = false

// hasClassify: nor the kernel that also follows base64 runs.
const hasClassify = false
