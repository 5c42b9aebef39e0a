package engine

import (
	"bytes"
	"slices"
	"testing"
	"unsafe"

	"github.com/promptwall/promptwall/bench/chatbody"
	"github.com/promptwall/promptwall/internal/guardpage"
)

// TestScanWideGuardPages runs the wide chains, and encodeUnits, on texts
// that begin or end at the edge of an inaccessible page: a read or write
// outside them crashes the test.
func TestScanWideGuardPages(t *testing.T) {
	data := guardpage.New(t, 64<<10)
	size := len(data)
	copy(data, chatbody.Prose(size, 3))
	c := Default().c
	col := &c.keywordCols[viewASCII]
	// The units of encodeUnits against the end of the pages, and its output
	// (ASCII units, so that the kernel reads and writes up to the edges).
	asUnits := func(b []byte) []uint16 {
		for i := 0; i+1 < len(b); i += 2 {
			b[i], b[i+1] = 'a', 0
		}
		return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2)
	}
	for n := 0; n <= 200; n++ {
		want := bytes.Repeat([]byte{c.alphabet.Byte['a']}, n)
		if out := c.encodeUnits(data[:n:n], asUnits(data[size-2*n:]), new(byteSet)); !bytes.Equal(out, want) {
			t.Fatalf("%d units at the end: %v", n, out)
		}
		if out := c.encodeUnits(data[size-n:], asUnits(data[:2*n]), new(byteSet)); !bytes.Equal(out, want) {
			t.Fatalf("%d units at the start: %v", n, out)
		}
	}
	copy(data, chatbody.Prose(size, 3))
	for _, n := range []int{wideMinLen, wideMinLen + 1, wideMinLen + 2, wideMinLen + 3, 40001, size} {
		for _, text := range [][]byte{data[:n:n], data[size-n:]} {
			if got, one := wideAndOne(c, text, col); !slices.Equal(got, one) {
				t.Fatalf("%d bytes: wide %x, one chain %x", n, got, one)
			}
		}
	}
}
