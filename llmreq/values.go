package llmreq

import "sync"

// A long body's decoded values are not copied out of the walker's buffer: a
// 256 KiB document would cost a copy and an allocation of its size each
// request, and the garbage collector's work on them. The Request keeps the
// buffer instead (finish), and its owner may hand it back with Release once
// it is done with the texts, as the firewall does with the body itself.

// heldValues is the length of decoded values from which the Request keeps
// the buffer; below it a copy is cheaper than a pool's traffic.
const heldValues = 32 << 10

// maxHeldValues bounds the buffers kept for reuse, as putTape bounds the
// tape's.
const maxHeldValues = 4 << 20

var valuesPool sync.Pool // *[]byte, length 0

// takeValues returns a released buffer, or nil (a parse then grows its own).
func takeValues() []byte {
	if p, ok := valuesPool.Get().(*[]byte); ok {
		return *p
	}
	return nil
}

// Release hands back the memory of r's long decoded values for a later
// parse to reuse. After it, neither r nor any string it gave (its texts'
// values and paths) may be used: a later body's texts are written over
// them. A caller that cannot be sure of that need not call it; the memory
// is then collected as usual. Release on a Request without such values,
// or a second time, does nothing.
func (r *Request) Release() {
	if b := r.values; b != nil && cap(b) <= maxHeldValues {
		putValues(b)
	}
	r.values, r.Texts = nil, nil
}

// putValues pools b, apart from Release so that only a put allocates its
// pointer.
func putValues(b []byte) {
	b = b[:0]
	valuesPool.Put(&b)
}
