package firewall

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/promptwall/promptwall/bufpool"
	"github.com/promptwall/promptwall/llmreq"
)

// upstreamBody is the request body the next handler reads, over pooled
// buffers: the body as it came, or a rewritten one as the original's bytes
// between new literals (spliceBody), which spares a copy of the whole. The
// buffers go back to their pools when both the handler is done (release)
// and the body is closed: an HTTP transport may still be writing the body
// after the handler returns, and may close it from another goroutine while
// it reads. The lock makes sure no Read copies from a buffer once Close has
// returned.
type upstreamBody struct {
	mu     sync.Mutex
	segs   [][]byte // what is left to send, in order
	bufs   [2][]byte
	closed bool
	refs   atomic.Int32
}

func newUpstreamBody(buf []byte) *upstreamBody {
	b := &upstreamBody{segs: [][]byte{buf}, bufs: [2][]byte{buf}}
	b.refs.Store(2) // the handler, and Close
	return b
}

// spliceBody returns the body that is body with each splice's bytes
// replaced by its literal in lits (llmreq.Request.AppendSplices), and its
// length. It owns both buffers.
func spliceBody(body, lits []byte, splices []llmreq.Splice) (*upstreamBody, int) {
	b := &upstreamBody{segs: make([][]byte, 0, 2*len(splices)+1), bufs: [2][]byte{body, lits}}
	n, prev := 0, 0
	add := func(seg []byte) {
		if len(seg) > 0 {
			b.segs = append(b.segs, seg)
			n += len(seg)
		}
	}
	for _, sp := range splices {
		add(body[prev:sp.Start])
		add(lits[sp.LitStart:sp.LitEnd])
		prev = sp.End
	}
	add(body[prev:])
	b.refs.Store(2)
	return b, n
}

func (b *upstreamBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	n := 0
	for n < len(p) && len(b.segs) > 0 {
		k := copy(p[n:], b.segs[0])
		n += k
		if b.segs[0] = b.segs[0][k:]; len(b.segs[0]) == 0 {
			b.segs = b.segs[1:]
		}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (b *upstreamBody) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.segs = nil
	b.mu.Unlock()
	b.release()
	return nil
}

// release drops one of the two references; the last one returns the
// buffers.
func (b *upstreamBody) release() {
	if b.refs.Add(-1) == 0 {
		for i, buf := range b.bufs {
			if buf != nil {
				recycle(buf)
			}
			b.bufs[i] = nil
		}
	}
}

// recycle is bufpool.Put; tests replace it to see when buffers come back.
var recycle = bufpool.Put
