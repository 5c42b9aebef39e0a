//go:build unix

// Package guardpage gives tests memory between two pages that cannot be
// read or written, so that a kernel that reads or writes past its slice
// crashes the test instead of reading a neighbour's bytes.
package guardpage

import (
	"syscall"
	"testing"
)

// New returns size bytes (rounded up to whole pages) that begin right
// after, and end right before, an inaccessible page. They are unmapped
// when t ends.
func New(t testing.TB, size int) []byte {
	t.Helper()
	page := syscall.Getpagesize()
	size = (max(size, 1) + page - 1) / page * page
	mem, err := syscall.Mmap(-1, 0, size+2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	for _, guard := range [][]byte{mem[:page], mem[page+size:]} {
		if err := syscall.Mprotect(guard, syscall.PROT_NONE); err != nil {
			t.Fatal(err)
		}
	}
	return mem[page : page+size : page+size]
}
