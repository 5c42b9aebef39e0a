package llmreq

import "github.com/promptwall/promptwall/bufpool"

// A long body's decoded values are not copied out of the walker's buffer: a
// 256 KiB document would cost a copy and an allocation of its size each
// request, and the garbage collector's work on them. The Request keeps the
// buffer instead (finish), and its owner may hand it back with Release once
// it is done with the texts, as the firewall does with the body itself.
// Past heldValues the buffer comes from bufpool, whose power-of-two sizes
// Release can give back.

// heldValues is the length of decoded values from which the Request keeps
// the buffer. Below it the values are copied into a string of their size,
// and the buffer stays with the tape for the next parse, as before.
const heldValues = 32 << 10

// growValues is grow for w.values: past heldValues the grown buffer comes
// from bufpool, and the one it replaces goes back (nothing but the walker
// holds it until finish).
func (w *walker) growValues(n int) []byte {
	buf := w.values
	if cap(buf)-len(buf) >= n {
		return buf
	}
	size := max(2*cap(buf), len(buf)+n)
	if size < heldValues {
		return grow(buf, n)
	}
	grown := append(bufpool.Get(size), buf...)
	bufpool.Put(buf)
	return grown
}

// Release hands back the memory of r's long decoded values for a later
// parse to reuse. After it, neither r nor its texts' values may be used: a
// later body's texts are written over them. A caller that cannot be sure
// of that need not call it; the memory is then collected as usual. Release
// on a Request without such values, or a second time, does nothing.
func (r *Request) Release() {
	bufpool.Put(r.values) // which keeps only its own sizes
	r.values, r.Texts = nil, nil
}
