//go:build !purego

package engine

import (
	"testing"

	"github.com/promptwall/promptwall/internal/guardpage"
)

// TestKernelsStayInside: the kernels, and the functions that call them,
// read no byte before or after their slice, which lies against pages that
// cannot be read.
func TestKernelsStayInside(t *testing.T) {
	needAVX2(t)
	page := guardpage.New(t, 1)
	for n := 0; n <= len(page); n++ {
		for _, s := range [][]byte{page[:n:n], page[len(page)-n:]} {
			for i := range s {
				s[i] = "aB3 @$+/_-="[(i+n)%11]
			}
			leetAVX2(make([]int32, len(s)+64), s, 0)
			tokenSkipAVX2(s)
			if hasAVX512BW {
				tokenSkipAVX512(s)
			}
			if hasVBMI {
				classifyVBMI(make([]int32, len(s)+64), s, 0, 0, -1)
				widenVBMI(make([]uint16, len(s)), s, make([]int32, len(s)+64), 0, 0)
			}
			asciiLeet(nil, s)
			findTokens(s, 0, func(int, int, int, bool) {})
		}
	}
}
