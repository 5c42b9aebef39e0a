// Package bufpool recycles byte buffers through pools, one per power-of-two
// capacity from 4 KiB to 2 MiB. A request body read whole, a long text's
// decoded value or its sanitized copy otherwise costs an allocation of its
// size per request, zeroed, and the garbage collector's work grows with
// them: at 4 KiB the body's was a fifth of the firewall's cost under load,
// and at 256 KiB the value's and the copy's a sixth.
//
// A buffer given back must have no other user: its bytes, and any string
// made over them, belong to whoever gets it next.
package bufpool

import (
	"math/bits"
	"sync"
)

const (
	minShift = 12
	maxShift = 21
)

var pools [maxShift - minShift + 1]sync.Pool // *[]byte

// Get returns an empty buffer of capacity at least size: a pooled one of
// the next power of two, or a new one of size past 2 MiB.
func Get(size int) []byte {
	if size > 1<<maxShift {
		return make([]byte, 0, size)
	}
	class := max(0, bits.Len(uint(max(size, 1)-1))-minShift)
	if p, _ := pools[class].Get().(*[]byte); p != nil {
		return (*p)[:0]
	}
	return make([]byte, 0, 1<<(class+minShift))
}

// Put gives b to the pool of its capacity, if there is one (Get's buffers,
// unless append grew them). The caller must hold the only reference to b's
// bytes.
func Put(b []byte) {
	c := cap(b)
	if c < 1<<minShift || c > 1<<maxShift || c&(c-1) != 0 {
		return
	}
	put(b)
}

// put is apart from Put so that only a put allocates b's pointer.
func put(b []byte) {
	b = b[:0]
	pools[bits.Len(uint(cap(b)))-1-minShift].Put(&b)
}
