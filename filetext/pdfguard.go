package filetext

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"encoding/ascii85"
	"errors"
	"fmt"
	"io"
	"time"
)

// The PDF library trusts sizes it reads: it allocates an xref table of /Size entries,
// grows it to the largest /Index or xref subsection entry, loops /N times over an object
// stream, allocates predictor rows of /Columns bytes, and decodes streams without bound.
// Allocations that large are fatal, not panics. preCheck over-approximates each of these
// on the raw bytes and on every decoded stream before the library is called: every
// occurrence counts, even inside strings, comments or binary data, so that no lexing
// disagreement can hide one. The cross-reference chain is followed as the library
// follows it (pdfxref.go), for what only the xref streams say.

// maxObjectID bounds object numbers: a real file spends several bytes per object, so
// ids beyond a quarter of the file size plus a margin are hostile, and the xref table
// the library allocates stays proportional to the input.
func maxObjectID(data []byte) int64 { return 4096 + int64(len(data))/4 }

// preCheck returns ErrLimit or ErrMalformed for a file the library must not see.
func preCheck(ctx context.Context, data []byte, b *budget) error {
	c := &checker{ctx: ctx, raw: data, maxID: maxObjectID(data), b: b}
	if err := c.scan(data, true); err != nil {
		return err
	}
	kinds, err := checkXrefChain(ctx, data, c.maxID, b)
	if err != nil {
		return err
	}
	for _, id := range c.indirect {
		if id < int64(len(kinds)) && kinds[id] == 's' {
			return fmt.Errorf("%w: indirect /N %d in an object stream", ErrMalformed, id)
		}
	}
	return nil
}

// checker holds what one pre-check needs across the file and its decoded streams.
type checker struct {
	ctx   context.Context
	raw   []byte
	maxID int64
	b     *budget
	objs  map[int64][]int // where each object of the raw file is defined, built on demand
	// indirect are the objects indirect counts refer to; one kept in an object stream,
	// where this check cannot read it, is refused.
	indirect []int64
}

// scan checks the names at every slash of data and, in the raw file, every xref table
// and every stream; the decoded streams are scanned for names too, since object
// streams hold dictionaries.
func (c *checker) scan(data []byte, raw bool) error {
	for i := 0; i < len(data); i++ {
		if i%(64<<10) == 0 {
			if err := checkTime(c.ctx, c.b.deadline); err != nil {
				return err
			}
		}
		switch ch := data[i]; {
		case ch == '/':
			name, end := lexName(data, i+1)
			if err := c.checkName(data, name, end); err != nil {
				return err
			}
		case !raw:
		case ch == 'x':
			if bytes.HasPrefix(data[i:], []byte("xref")) && (i == 0 || !isRegular(data[i-1])) {
				if err := checkXrefTable(data, i+4, c.maxID); err != nil {
					return err
				}
			}
		case ch == 's':
			if bytes.HasPrefix(data[i:], []byte("stream")) {
				if err := c.checkStream(data, i+len("stream")); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// maxStreamTokens bounds the tokens of one decoded stream: the library parses an object
// of an object stream whole, at some 16 bytes a token, wherever its bytes came from.
// Image data, which the library never parses, has a token about every ten bytes.
const maxStreamTokens = 4 << 20

// countTokens counts where PDF tokens may start: at each delimiter, and at each regular
// byte after whitespace or a delimiter.
func countTokens(data []byte) int {
	n := 0
	prevRegular := false
	for _, c := range data {
		regular := isRegular(c)
		if !regular && !isSpace(c) || regular && !prevRegular {
			n++
		}
		prevRegular = regular
	}
	return n
}

// maxColumns bounds a predictor's /Columns: the library allocates a row of that size.
const maxColumns = 1 << 20

func (c *checker) checkName(data []byte, name string, end int) error {
	switch name {
	case "Size", "N", "Columns":
		pos := skipSpace(data, end)
		v, next, ok := lexInt(data, pos)
		if !ok {
			return nil
		}
		if err := c.checkCount(name, v); err != nil {
			return err
		}
		g, next2, ok := lexInt(data, skipSpace(data, next))
		if p := skipSpace(data, next2); !ok || p >= len(data) || data[p] != 'R' || p+1 < len(data) && isRegular(data[p+1]) {
			return nil
		}
		// An indirect /N is common (an appearance dictionary's /N is a stream); the
		// library would read a count from it, so every definition of its object in
		// the file must be a count within bounds, or no number at all.
		if name != "N" {
			return fmt.Errorf("%w: indirect /%s", ErrMalformed, name)
		}
		return c.checkIndirectCount(name, v, g)
	case "Index":
		pos := skipSpace(data, end)
		if pos >= len(data) || data[pos] != '[' {
			return nil
		}
		for pos = skipSpace(data, pos+1); ; pos = skipSpace(data, pos) {
			v, next, ok := lexInt(data, pos)
			if !ok {
				return nil
			}
			if v > c.maxID {
				return fmt.Errorf("%w: /Index entry %d", ErrLimit, v)
			}
			pos = next
		}
	}
	return nil
}

func (c *checker) checkCount(name string, v int64) error {
	if v > c.maxID || name == "Columns" && v > maxColumns {
		return fmt.Errorf("%w: /%s %d", ErrLimit, name, v)
	}
	return nil
}

func (c *checker) checkIndirectCount(name string, id, gen int64) error {
	if c.objs == nil {
		c.objs = map[int64][]int{}
		for i := bytes.Index(c.raw, []byte("obj")); i >= 0; {
			if id, _, start, ok := objHeader(c.raw, i); ok {
				c.objs[id] = append(c.objs[id], start)
			}
			next := bytes.Index(c.raw[i+3:], []byte("obj"))
			if next < 0 {
				break
			}
			i += 3 + next
		}
	}
	if len(c.indirect) < 1<<16 {
		c.indirect = append(c.indirect, id)
	} else {
		return fmt.Errorf("%w: over %d indirect counts", ErrLimit, 1<<16)
	}
	for _, off := range c.objs[id] {
		l := &lexer{data: c.raw[off:min(len(c.raw), off+64)]}
		l.next()
		l.next()
		l.next() // id gen obj
		if t := l.next(); t.kind == tNum {
			if t.num > float64(c.maxID) {
				return fmt.Errorf("%w: /%s %d %d R is %v", ErrLimit, name, id, gen, t.num)
			}
		}
	}
	return nil
}

// checkXrefTable bounds the subsection headers of a cross-reference table: "start count"
// followed by count entries of three tokens.
func checkXrefTable(data []byte, pos int, maxID int64) error {
	for {
		start, next, ok := lexInt(data, skipSpace(data, pos))
		if !ok {
			return nil
		}
		count, next, ok := lexInt(data, skipSpace(data, next))
		if !ok {
			return nil
		}
		if start > maxID || count > maxID {
			return fmt.Errorf("%w: xref subsection %d %d", ErrLimit, start, count)
		}
		// The library stops at the first malformed entry, and so does this walk, so
		// that overlapping tables cost no more than the file.
		pos = next
		for range count {
			p, ok := xrefEntry(data, pos)
			if !ok {
				return nil
			}
			pos = p
		}
	}
}

// xrefEntry reads "offset generation n|f" at pos.
func xrefEntry(data []byte, pos int) (int, bool) {
	for range 2 {
		_, next, ok := lexInt(data, skipSpace(data, pos))
		if !ok {
			return pos, false
		}
		pos = next
	}
	pos = skipSpace(data, pos)
	if pos >= len(data) || data[pos] != 'n' && data[pos] != 'f' || pos+1 < len(data) && isRegular(data[pos+1]) {
		return pos, false
	}
	return pos + 1, true
}

// checkStream decodes the stream data that would start after a "stream" keyword, layer
// by layer as long as a layer's output is zlib (or ASCII85 whose output is zlib), and
// charges the decoded size to the budget. Data without a zlib layer is not decoded: it
// cannot expand much, and the content streams the library reads are charged then.
func (c *checker) checkStream(data []byte, pos int) error {
	ctx, b := c.ctx, c.b
	switch {
	case bytes.HasPrefix(data[pos:], []byte("\r\n")):
		pos += 2
	case pos < len(data) && (data[pos] == '\n' || data[pos] == '\r'):
		pos++
	default:
		return nil
	}
	// Most streams are neither: tell without allocating.
	if rest := data[pos:]; len(rest) < 2 || !isZlibHeader(rest[0], rest[1]) && !ascii85Zlib(rest) {
		return nil
	}
	var r io.Reader = bytes.NewReader(data[pos:])
	flate := false
	for layer := 0; layer < 8; layer++ {
		br := bufio.NewReaderSize(r, 512)
		head, _ := br.Peek(2)
		r = br
		if len(head) == 2 && isZlibHeader(head[0], head[1]) {
			zr, err := zlib.NewReader(br)
			if err != nil {
				break
			}
			r, flate = zr, true
			continue
		}
		if layer > 0 || len(head) == 0 || !isASCII85Start(head[0]) {
			break
		}
		r = ascii85.NewDecoder(&ascii85Body{r: br})
	}
	if !flate {
		return nil
	}
	var out bytes.Buffer
	_, err := io.Copy(&budgetBuffer{ctx: ctx, b: b, buf: &out}, r)
	if errors.Is(err, ErrLimit) || errors.Is(err, ErrTimeout) {
		return err
	}
	// A corrupt stream is the library's to report, when and if it reads it; what
	// decoded may be an object stream's dictionaries.
	if n := countTokens(out.Bytes()); n > maxStreamTokens {
		return fmt.Errorf("%w: a stream of over %d tokens", ErrLimit, maxStreamTokens)
	}
	return c.scan(out.Bytes(), false)
}

func isZlibHeader(cmf, flg byte) bool {
	return cmf&0x0F == 8 && cmf>>4 <= 7 && (uint16(cmf)<<8|uint16(flg))%31 == 0
}

// ascii85Zlib reports whether data starts with ASCII85 text whose first bytes are a
// zlib header.
func ascii85Zlib(data []byte) bool {
	var src [10]byte
	n := 0
	for _, c := range data[:min(len(data), 64)] {
		if c == '~' || n == len(src) {
			break
		}
		if isASCII85Start(c) {
			src[n] = c
			n++
		} else if !isSpace(c) {
			break
		}
	}
	var dst [8]byte
	m, _, _ := ascii85.Decode(dst[:], src[:n], true)
	return m >= 2 && isZlibHeader(dst[0], dst[1])
}

func isASCII85Start(c byte) bool { return c >= '!' && c <= 'u' || c == 'z' }

// ascii85Body yields ASCII85 data up to its "~>" end marker, without whitespace.
type ascii85Body struct {
	r    *bufio.Reader
	done bool
}

func (a *ascii85Body) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && !a.done {
		c, err := a.r.ReadByte()
		if err != nil {
			a.done = true
			break
		}
		switch {
		case c == '~':
			a.done = true
		case isASCII85Start(c):
			p[n] = c
			n++
		case isSpace(c):
		default:
			a.done = true
		}
	}
	if n == 0 && a.done {
		return 0, io.EOF
	}
	return n, nil
}

// budget is the decompressed bytes one extraction may still decode, shared by the
// pre-check and the content streams.
type budget struct {
	left     int64
	deadline time.Time
}

func (b *budget) charge(ctx context.Context, n int) error {
	b.left -= int64(n)
	if b.left < 0 {
		return fmt.Errorf("%w: decompressed bytes", ErrLimit)
	}
	return checkTime(ctx, b.deadline)
}

func checkTime(ctx context.Context, deadline time.Time) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrTimeout, err)
	}
	if time.Now().After(deadline) {
		return ErrTimeout
	}
	return nil
}

// guardedFile is the io.ReaderAt the library reads the file through. Once the time
// budget is spent every read fails, so that whatever loop the library is in ends at
// its next read; err keeps the reason for the caller.
type guardedFile struct {
	ctx      context.Context
	data     []byte
	deadline time.Time
	err      error
}

func (g *guardedFile) ReadAt(p []byte, off int64) (int, error) {
	if g.err == nil {
		g.err = checkTime(g.ctx, g.deadline)
	}
	if g.err != nil {
		return 0, g.err
	}
	if off < 0 || off >= int64(len(g.data)) {
		return 0, io.EOF
	}
	n := copy(p, g.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
