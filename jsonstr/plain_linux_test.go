package jsonstr

import (
	"syscall"
	"testing"
)

// TestPlainGuardPages runs Plain and ASCII on strings that start or end at the edge
// of an inaccessible page: a read outside the slice crashes the test.
func TestPlainGuardPages(t *testing.T) {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 3*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[:page], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mprotect(mem[2*page:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	data := mem[page : 2*page : 2*page]
	for i := range data {
		data[i] = 'a'
	}
	for n := 0; n <= 200; n++ {
		checkPlain(t, data[:n:n])
		checkPlain(t, data[len(data)-n:])
		checkASCII(t, data[:n:n])
		checkASCII(t, data[len(data)-n:])
	}
}
