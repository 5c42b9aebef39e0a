package engine

import (
	"syscall"
	"testing"
)

// TestKernelsStayInside: the kernels, and the functions that call them,
// read no byte before or after their slice, which lies against pages that
// cannot be read.
func TestKernelsStayInside(t *testing.T) {
	needAVX2(t)
	size := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 3*size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[:size], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mprotect(mem[2*size:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	page := mem[size : 2*size : 2*size]
	for n := 0; n <= len(page); n += 1 + n/8 {
		for _, s := range [][]byte{page[:n:n], page[len(page)-n:]} {
			for i := range s {
				s[i] = "aB3 @$+/_-="[(i+n)%11]
			}
			leetAVX2(make([]int32, len(s)+64), s, 0)
			tokenSkipAVX2(s)
			if hasAVX512BW {
				tokenSkipAVX512(s)
			}
			asciiLeet(nil, s)
			findTokens(s, func(int, int, int, bool) {})
		}
	}
}
