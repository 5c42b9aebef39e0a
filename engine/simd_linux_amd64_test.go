//go:build !purego

package engine

import (
	"testing"
	"unsafe"

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
			}
			asciiLeet(nil, s)
			findTokens(s, 0, func(int, int, int, bool) {})
		}
	}
}

// TestUnitKernelsStayInside: widenAVX2, encodeAVX2 and encodeBytesAVX2 read and write no
// byte outside their slices, which lie against pages that cannot be read.
func TestUnitKernelsStayInside(t *testing.T) {
	needAVX2(t)
	page := guardpage.New(t, 1)
	out := guardpage.New(t, 1)
	nib := nibbleTablesOf(&Default().c.ascii)
	for n := 0; n <= len(page)/2; n++ {
		for j := range page {
			page[j] = "aB3 @$+/_-="[(j+n)%11]
		}
		raw := page[len(page)-n:]
		widenAVX2(unitsAt(out, n), raw, 0, 0)
		encodeAVX2(out[len(out)-n:], unitsAt(page, n), &nib)
		encodeBytesAVX2(out[len(out)-n:], raw, &nib)
	}
}

// unitsAt returns the last n units of mem, as uint16s.
func unitsAt(mem []byte, n int) []uint16 {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&mem[len(mem)-2*n])), n)
}
