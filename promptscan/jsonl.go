package promptscan

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/promptwall/promptwall/engine"
)

// scanJSONL answers one line per input line, in order. Each of the
// machine's cores runs a worker that takes the next batch of lines from the
// input itself (so no reader goroutine competes with the workers for the
// cores) and scans it; the answers are written in input order, and an error
// on a line is answered in its place. It returns the worst verdict and
// how many lines could not be scanned; an error reading the input or
// writing the answers stops the run after the answers before it.
func scanJSONL(eng *engine.Engine, in io.Reader, w *bufio.Writer) (engine.Verdict, int, error) {
	type result struct {
		out   []byte
		worst engine.Verdict
		bad   int
		err   error
	}
	workers := runtime.GOMAXPROCS(0)
	// order holds each batch's answer slot, in input order; a worker sends
	// it while it holds mu, so the order of the sends is the input's.
	order := make(chan chan result, 2*workers)
	stop := make(chan struct{})
	defer close(stop)
	// Buffers go round: a batch's lines back to the next batch once
	// answered, an answer back to the workers once written. Fresh memory
	// costs a page fault every 4 KiB, a good part of a short run.
	inBufs, outBufs := make(chan []byte, 2*workers+2), make(chan []byte, 2*workers+2)
	get := func(bufs chan []byte, n int) []byte {
		select {
		case b := <-bufs:
			if cap(b) >= n {
				return b[:0]
			}
		default:
		}
		return make([]byte, 0, n)
	}
	put := func(bufs chan []byte, b []byte) {
		select {
		case bufs <- b:
		default:
		}
	}

	var (
		mu     sync.Mutex // guards the input and what follows
		rd     = bufio.NewReaderSize(in, 64<<10)
		lineNo int
		ended  bool // the input is read to its end, or failed, or the run stopped
	)
	// next reads the next batch of about batchSize bytes of lines into
	// data, grown as needed: the lines (nil for a blank one, which keeps
	// its number and answers nothing), the first one's number and the read
	// error after them.
	next := func(data []byte) (_ []byte, lines [][]byte, first int, err error) {
		first = lineNo + 1
		var ends []int // end of each line in data; -1: blank
		// A batch also ends where the input has nothing more to give
		// without waiting: lines piped in one at a time are answered one
		// at a time, not when 64 KiB have come.
		for len(data) < batchSize && err == nil && (len(ends) == 0 || rd.Buffered() > 0) {
			start := len(data)
			data, err = readLine(rd, data)
			lineNo++
			if len(bytes.TrimSpace(data[start:])) > 0 {
				ends = append(ends, len(data))
			} else {
				data = data[:start]
				ends = append(ends, -1)
			}
		}
		lines = make([][]byte, len(ends))
		start := 0
		for k, end := range ends {
			if end >= 0 {
				lines[k] = data[start:end:end]
				start = end
			}
		}
		return data, lines, first, err
	}

	for range workers {
		go func() {
			var bufs lineBuffers
			for {
				mu.Lock()
				select {
				case <-stop:
					ended = true
				default:
				}
				if ended {
					mu.Unlock()
					return
				}
				data := get(inBufs, batchSize+batchSize/4)
				data, lines, first, rerr := next(data)
				if rerr != nil {
					ended = true
				}
				slot := make(chan result, 1)
				select {
				case order <- slot:
				case <-stop:
					ended = true
					mu.Unlock()
					return
				}
				if ended {
					close(order)
				}
				mu.Unlock()

				// An answer is the line's other fields and a result that
				// holds the sanitized text again: about twice the line.
				out := get(outBufs, 2*len(data)+1024)
				r := result{worst: engine.Safe}
				for k, line := range lines {
					var v engine.Verdict
					var ok bool
					if out, v, ok = bufs.scanLine(eng, line, first+k, out); !ok {
						r.bad++
					}
					r.worst = worse(r.worst, v)
				}
				if rerr != nil && rerr != io.EOF {
					r.err = fmt.Errorf("reading standard input: %w", rerr)
				}
				put(inBufs, data)
				r.out = out
				slot <- r
			}
		}()
	}

	worst, bad := engine.Safe, 0
	for slot := range order {
		r := <-slot
		if _, err := w.Write(r.out); err != nil {
			return worst, bad, err
		}
		if len(order) == 0 {
			// Nothing else is ready: what is answered goes out now.
			if err := w.Flush(); err != nil {
				return worst, bad, err
			}
		}
		put(outBufs, r.out)
		worst, bad = worse(worst, r.worst), bad+r.bad
		if r.err != nil {
			return worst, bad, r.err
		}
	}
	return worst, bad, nil
}

// worse is the worse of two verdicts.
func worse(a, b engine.Verdict) engine.Verdict {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}

// batchSize is about how many bytes of lines make a batch: small enough
// that the cores share the end of a run evenly, large enough that taking a
// batch costs little.
const batchSize = 64 << 10

func readLine(rd *bufio.Reader, dst []byte) ([]byte, error) {
	for {
		chunk, err := rd.ReadSlice('\n')
		dst = append(dst, chunk...)
		if err != bufio.ErrBufferFull {
			if n := len(dst); n > 0 && dst[n-1] == '\n' {
				dst = dst[:n-1]
			}
			return dst, err
		}
	}
}
