package firewall

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
)

// spoolMemory is how much of a spooled body is held in memory; the rest
// goes to a temporary file.
const spoolMemory = 1 << 20

// spool holds a body as it streams in, so that it can go upstream as it
// came once its parts are scanned: up to spoolMemory bytes in memory, past
// that in a temporary file, unlinked as soon as it is created where the
// system allows it, so that nothing is left behind by a crash. Past max
// bytes, Write fails with a 413 failure.
type spool struct {
	mem      []byte
	file     *os.File
	n        int64
	max      int64
	overflow bool
}

func (s *spool) Write(p []byte) (int, error) {
	if s.n+int64(len(p)) > s.max {
		s.overflow = true
		return 0, tooLarge(s.max)
	}
	if s.file == nil && int64(len(s.mem)+len(p)) <= spoolMemory {
		s.mem = append(s.mem, p...)
		s.n += int64(len(p))
		return len(p), nil
	}
	if s.file == nil {
		f, err := os.CreateTemp("", "prompt-firewall-*")
		if err != nil {
			return 0, err
		}
		os.Remove(f.Name()) // unlinked while open, where the system allows it
		s.file = f
		if _, err := f.Write(s.mem); err != nil {
			return 0, err
		}
		s.mem = nil
	}
	n, err := s.file.Write(p)
	s.n += int64(n)
	return n, err
}

// reader returns the spooled bytes from the start.
func (s *spool) reader() io.Reader {
	if s.file != nil {
		return io.NewSectionReader(s.file, 0, s.n)
	}
	return bytes.NewReader(s.mem)
}

// close releases the spool: its file is closed and removed.
func (s *spool) close() {
	if s.file != nil {
		s.file.Close()
		os.Remove(s.file.Name()) // where it could not be unlinked while open
		s.file = nil
	}
	s.mem = nil
}

// spoolBody is the request body the next handler reads from a spool. The
// spool is closed when both the handler is done (release) and the body is
// closed, as with upstreamBody: the transport may still be sending it after
// the handler returns.
type spoolBody struct {
	mu     sync.Mutex
	r      io.Reader
	s      *spool
	req    *http.Request
	closed bool
	refs   atomic.Int32
}

func newSpoolBody(s *spool, r *http.Request) *spoolBody {
	b := &spoolBody{r: s.reader(), s: s, req: r}
	b.refs.Store(2)
	return b
}

func (b *spoolBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	return b.r.Read(p)
}

func (b *spoolBody) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	b.release()
	return nil
}

func (b *spoolBody) release() {
	if b.refs.Add(-1) == 0 {
		b.s.close()
	}
}

// trailerScrub is a body that streams through unread by the firewall: at
// its end, when the trailers have arrived and before the transport sends
// them on, the client's Prompt-Firewall-* trailers are removed.
type trailerScrub struct {
	io.ReadCloser
	r *http.Request
}

func (t trailerScrub) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if err == io.EOF {
		scrubTrailers(t.r)
	}
	return n, err
}
