package firewall

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
)

// A compressed response is decoded as its bytes come, so that a compressed stream keeps its
// timing: the decoders run as a coroutine (iter.Pull) that each Write resumes with its bytes
// and that suspends when the decoders need more. The decoded bytes are framed inside the
// Write that brought them, on the writer's own turn: nothing runs beside the handler, and
// nothing is left running once the coroutine is stopped.

// respDecoder undoes a response's content codings incrementally.
type respDecoder struct {
	in    []byte // the bytes of the current Write the decoders have not read yet
	eof   bool   // the upstream's body ended
	yield func(struct{}) bool
	next  func() (struct{}, bool)
	stop  func()
	ended bool  // the coroutine returned
	err   error // why the decoders ended: io.EOF when the stream ended well

	read, out, max int64 // compressed bytes taken, decoded bytes given, the bound of each
}

// errDecoderStopped ends the decoders' reads when the writer stops them midway.
var errDecoderStopped = errors.New("firewall: decoder stopped")

// newRespDecoder starts the decoders of codings (in the order they were applied) over the
// bytes given to write; each decoded chunk goes to out, which returns false to stop.
func newRespDecoder(codings []string, max int64, out func([]byte) bool) *respDecoder {
	d := &respDecoder{max: max}
	d.next, d.stop = iter.Pull(func(yield func(struct{}) bool) {
		d.yield = yield
		d.err = d.run(codings, out)
		d.ended = true
	})
	return d
}

// run decodes until the stream ends, fails, or out or the writer stops it.
func (d *respDecoder) run(codings []string, out func([]byte) bool) error {
	var src io.Reader = d
	// Codings are listed in the order they were applied: undo them last first.
	for i := len(codings) - 1; i >= 0; i-- {
		dec, done, err := codingReader(codings[i], src, d.max)
		if err != nil {
			return decodeFailure(codings, err, d.max)
		}
		defer done()
		src = dec
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d.out += int64(n); d.out > d.max {
				return fmt.Errorf("the decoded answer is over max_body (%d bytes)", d.max)
			}
			if !out(buf[:n]) {
				return nil
			}
		}
		if err == io.EOF {
			if len(d.in) > 0 {
				return errors.New("bytes after the end of the compressed answer")
			}
			return io.EOF
		}
		if err != nil {
			if errors.Is(err, errDecoderStopped) {
				return nil
			}
			return decodeFailure(codings, err, d.max)
		}
	}
}

// decodeFailure says why a compressed answer cannot be scanned, in the response's terms.
func decodeFailure(codings []string, err error, max int64) error {
	if fe, ok := decodeError(err, max).(*failure); ok && fe.status == http.StatusRequestEntityTooLarge {
		return fmt.Errorf("the decoded answer is over max_body (%d bytes)", max)
	}
	return fmt.Errorf("the answer does not decode as its Content-Encoding %s says", strings.Join(codings, ", "))
}

// Read gives the decoders the bytes of the current Write, suspending the coroutine until
// the next one when they are all read.
func (d *respDecoder) Read(p []byte) (int, error) {
	for len(d.in) == 0 {
		if d.eof {
			return 0, io.EOF
		}
		if !d.yield(struct{}{}) {
			return 0, errDecoderStopped
		}
	}
	n := copy(p, d.in)
	d.in = d.in[n:]
	return n, nil
}

// write decodes p, returning why the decoders failed if they did; p is not kept.
func (d *respDecoder) write(p []byte) error {
	if d.ended {
		if d.err == io.EOF && len(p) > 0 {
			return errors.New("bytes after the end of the compressed answer")
		}
		return nil
	}
	if d.read += int64(len(p)); d.read > d.max {
		return fmt.Errorf("the compressed answer is over max_body (%d bytes)", d.max)
	}
	d.in = p
	d.next()
	d.in = nil
	if d.ended && d.err != io.EOF {
		return d.err
	}
	return nil
}

// close ends the compressed body: the decoders read its end and must end well.
func (d *respDecoder) close() error {
	if !d.ended {
		d.eof = true
		d.next()
	}
	if d.err == io.EOF {
		return nil
	}
	if d.err == nil {
		return errors.New("the compressed answer did not end")
	}
	return d.err
}

// release stops the decoders wherever they are; it may be called more than once.
func (d *respDecoder) release() { d.stop() }
