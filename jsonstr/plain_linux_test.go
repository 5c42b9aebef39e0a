package jsonstr

import (
	"testing"

	"github.com/promptwall/promptwall/internal/guardpage"
)

// TestPlainGuardPages runs Plain, PlainASCII and ASCII on strings that start or end at the edge
// of an inaccessible page: a read outside the slice crashes the test.
func TestPlainGuardPages(t *testing.T) {
	data := guardpage.New(t, 1)
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
