//go:build !amd64

package engine

// Without vector kernels the word loops take the whole text.

func asciiLeetBlocks(dst []int32, raw []byte) ([]int32, int, bool) { return dst, 0, true }

func skipBlocks(bs []byte, i int) int { return i }
