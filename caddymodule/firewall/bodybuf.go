package firewall

import (
	"bytes"
	"math/bits"
	"net/http"
	"sync"
	"sync/atomic"
)

// Request bodies are read into buffers recycled through pools, one per
// power-of-two size from 4 KiB to 2 MiB: a body read whole for scanning
// otherwise costs an allocation of its size per request, and the garbage
// collector's work grows with it (at 4 KiB it was a fifth of the
// firewall's cost under load).
const (
	minBufShift = 12
	maxBufShift = 21
)

var bodyPools [maxBufShift - minBufShift + 1]sync.Pool

// getBodyBuf returns an empty buffer of capacity at least size.
func getBodyBuf(size int64) []byte {
	if size > 1<<maxBufShift {
		return make([]byte, 0, size)
	}
	class := max(0, bits.Len64(uint64(size-1))-minBufShift)
	if p, _ := bodyPools[class].Get().(*[]byte); p != nil {
		return (*p)[:0]
	}
	return make([]byte, 0, 1<<(class+minBufShift))
}

// putBodyBuf gives b to the pool of its capacity, if there is one. The
// caller must hold the only reference to b's bytes.
func putBodyBuf(b []byte) {
	c := cap(b)
	if c < 1<<minBufShift || c > 1<<maxBufShift || c&(c-1) != 0 {
		return
	}
	b = b[:0]
	bodyPools[bits.Len(uint(c))-1-minBufShift].Put(&b)
}

// upstreamBody is the request body the next handler reads, over a pooled
// buffer. The buffer goes back to its pool when both the handler is done
// (release) and the body is closed: an HTTP transport may still be writing
// the body after the handler returns, and may close it from another
// goroutine while it reads. The lock makes sure no Read copies from the
// buffer once Close has returned.
type upstreamBody struct {
	mu     sync.Mutex
	r      bytes.Reader
	buf    []byte
	closed bool
	refs   atomic.Int32
}

func newUpstreamBody(buf []byte) *upstreamBody {
	b := &upstreamBody{buf: buf}
	b.r.Reset(buf)
	b.refs.Store(2) // the handler, and Close
	return b
}

func (b *upstreamBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	return b.r.Read(p)
}

func (b *upstreamBody) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.r.Reset(nil)
	b.mu.Unlock()
	b.release()
	return nil
}

// release drops one of the two references; the last one returns the
// buffer.
func (b *upstreamBody) release() {
	if b.refs.Add(-1) == 0 {
		recycle(b.buf)
		b.buf = nil
	}
}

// recycle is putBodyBuf; tests replace it to see when buffers come back.
var recycle = putBodyBuf
