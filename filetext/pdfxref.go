package filetext

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"encoding/ascii85"
	"fmt"
	"io"
)

// The library resolves an object kept in an object stream by first resolving that
// stream, recursively and without reading the file: an xref stream that puts an object
// stream inside an object stream (itself, or in a cycle) recurses until the Go stack
// overflows, which kills the process. checkXrefChain follows the cross-reference chain
// as the library does (startxref, then /Prev), builds the table with the library's
// precedence (the newest entry wins), and refuses such a table. It also bounds /W, from
// which the library allocates a row buffer.

const maxXrefSections = 256

// pdfValue is a parsed object of the pre-check: a token, an array, a dictionary, or an
// indirect reference (ref, with tok the object number).
type pdfValue struct {
	tok  token
	arr  []pdfValue
	dict map[string]pdfValue
	ref  bool
}

func (v pdfValue) int() (int64, bool) {
	if v.tok.kind != tNum || v.ref || v.tok.num != float64(int64(v.tok.num)) {
		return 0, false
	}
	return int64(v.tok.num), true
}

func parseValue(l *lexer, depth int) pdfValue {
	t := l.next()
	switch {
	case depth > 32:
		return pdfValue{}
	case t.kind == tArrOpen:
		var v pdfValue
		for {
			e := l.next()
			if e.kind == tEOF || e.kind == tArrClose {
				return v
			}
			l.back(e)
			v.arr = append(v.arr, parseValue(l, depth+1))
		}
	case t.kind == tDictOpen:
		v := pdfValue{dict: map[string]pdfValue{}}
		for {
			k := l.next()
			if k.kind == tEOF || k.kind == tDictClose {
				return v
			}
			if k.kind == tName {
				v.dict[k.s] = parseValue(l, depth+1)
			}
		}
	case t.kind == tNum:
		// "n g R" is a reference.
		g := l.next()
		if g.kind == tNum {
			if r := l.next(); r.kind == tOp && r.s == "R" {
				return pdfValue{tok: t, ref: true}
			} else {
				l.back(r)
			}
		}
		l.back(g)
	}
	return pdfValue{tok: t}
}

// startXref finds the offset the library starts from: the integer after the last
// "startxref" line of the file's last 100 bytes, which must end in %%EOF.
func startXref(data []byte) (int64, bool) {
	tail := bytes.TrimRight(data[max(0, len(data)-100):], "\r\n\t ")
	if !bytes.HasSuffix(tail, []byte("%%EOF")) {
		return 0, false
	}
	for end := len(tail); ; {
		i := bytes.LastIndex(tail[:end], []byte("startxref"))
		if i <= 0 || i+9 >= len(tail) {
			return 0, false
		}
		if (tail[i-1] == '\n' || tail[i-1] == '\r') && (tail[i+9] == '\n' || tail[i+9] == '\r') {
			v, _, ok := lexInt(tail, skipSpace(tail, i+9))
			return v, ok
		}
		end = i
	}
}

func checkXrefChain(ctx context.Context, data []byte, maxID int64, b *budget) error {
	off, ok := startXref(data)
	var kinds []byte     // 'f', 'n' or 's' (in an object stream), by object number
	var streams []uint32 // the object stream of an 's' entry
	visited := map[int64]bool{}
	for sections := 0; ok && sections < maxXrefSections && off >= 0 && off < int64(len(data)) && !visited[off]; sections++ {
		visited[off] = true
		l := &lexer{data: data, pos: int(off)}
		if t := l.next(); t.kind != tNum {
			break // a classic table (no object streams), or nothing the library reads
		}
		// From here the library reads an xref stream; one this parse cannot follow
		// is refused, so that no entry escapes the check below.
		unread := fmt.Errorf("%w: unreadable xref stream at %d", ErrMalformed, off)
		if g, o := l.next(), l.next(); g.kind != tNum || o.kind != tOp || o.s != "obj" {
			return unread
		}
		d := parseValue(l, 0)
		if d.dict == nil || d.dict["Type"].tok.s != "XRef" || d.dict["Type"].tok.kind != tName {
			return unread
		}
		if t := l.next(); t.kind != tOp || t.s != "stream" {
			return unread
		}
		rows, err := xrefRows(ctx, data, l.pos, d.dict, b)
		if err != nil {
			return err
		}
		if rows == nil {
			return unread
		}
		var w []int
		for _, e := range d.dict["W"].arr {
			n, ok := e.int()
			if !ok || n < 0 || n > 8 {
				return fmt.Errorf("%w: xref stream /W", ErrLimit)
			}
			w = append(w, int(n))
		}
		if len(w) < 3 {
			return unread
		}
		size, _ := d.dict["Size"].int()
		index := []pdfValue{{tok: token{kind: tNum}}, {tok: token{kind: tNum, num: float64(size)}}}
		if ix := d.dict["Index"]; ix.arr != nil {
			index = ix.arr
		}
		width := w[0] + w[1] + w[2]
		for ; len(index) >= 2; index = index[2:] {
			start, ok1 := index[0].int()
			n, ok2 := index[1].int()
			if !ok1 || !ok2 || start < 0 || start > maxID || n > maxID {
				break
			}
			for i := range n {
				if width > len(rows) {
					break
				}
				kind, f2 := xrefInt(rows[:w[0]]), xrefInt(rows[w[0]:w[0]+w[1]])
				if w[0] == 0 {
					kind = 1
				}
				rows = rows[width:]
				x := int(start + i)
				if x >= len(kinds) {
					kinds = append(kinds, make([]byte, x-len(kinds)+1)...)
					streams = append(streams, make([]uint32, x-len(streams)+1)...)
				}
				if kinds[x] != 0 {
					continue
				}
				switch kind {
				case 0:
					kinds[x] = 'f'
				case 1:
					kinds[x] = 'n'
				case 2:
					kinds[x], streams[x] = 's', uint32(f2)
				}
			}
		}
		off, ok = d.dict["Prev"].int()
	}
	for x, k := range kinds {
		if s := int(streams[x]); k == 's' && s < len(kinds) && kinds[s] == 's' {
			return fmt.Errorf("%w: object %d is in object stream %d, itself in an object stream", ErrMalformed, x, s)
		}
	}
	return nil
}

func xrefInt(b []byte) int {
	x := 0
	for _, c := range b {
		x = x<<8 | int(c)
	}
	return x
}

// xrefRows decodes an xref stream's data starting after its "stream" keyword, with the
// filters and predictor the library supports, charged to the budget. It returns nil
// rows for what the library refuses too.
func xrefRows(ctx context.Context, data []byte, pos int, dict map[string]pdfValue, b *budget) ([]byte, error) {
	switch {
	case bytes.HasPrefix(data[pos:], []byte("\r\n")):
		pos += 2
	case pos < len(data) && (data[pos] == '\n' || data[pos] == '\r'):
		pos++
	default:
		return nil, nil
	}
	var r io.Reader = bytes.NewReader(data[pos:])
	if n, ok := dict["Length"].int(); ok && n >= 0 && n < int64(len(data)-pos) {
		r = bytes.NewReader(data[pos : pos+int(n)])
	}
	filters := dict["Filter"].arr
	if f := dict["Filter"]; f.tok.kind == tName {
		filters = []pdfValue{f}
	}
	for _, f := range filters {
		switch f.tok.s {
		case "FlateDecode":
			zr, err := zlib.NewReader(r)
			if err != nil {
				return nil, nil
			}
			r = zr
		case "ASCII85Decode":
			r = ascii85.NewDecoder(&ascii85Body{r: bufio.NewReader(r)})
		default:
			return nil, nil
		}
	}
	var out bytes.Buffer
	if _, err := io.Copy(&budgetBuffer{ctx: ctx, b: b, buf: &out}, r); err != nil && out.Len() == 0 {
		return nil, nil
	}
	parms := dict["DecodeParms"]
	if parms.ref || parms.dict["Predictor"].ref || parms.dict["Columns"].ref {
		// The library would resolve them; real files write them directly.
		return nil, fmt.Errorf("%w: indirect xref stream /DecodeParms", ErrMalformed)
	}
	if _, ok := parms.dict["Predictor"]; !ok {
		return out.Bytes(), nil
	}
	if p, _ := parms.dict["Predictor"].int(); p != 12 {
		return nil, nil
	}
	cols, _ := parms.dict["Columns"].int()
	if cols < 0 || cols > maxColumns {
		return nil, fmt.Errorf("%w: /Columns %d", ErrLimit, cols)
	}
	return pngUp(out.Bytes(), int(cols)), nil
}

// pngUp undoes the PNG Up predictor as the library does: rows of a filter byte, which
// must be 2, and cols bytes, each added to the byte above.
func pngUp(in []byte, cols int) []byte {
	hist := make([]byte, cols+1)
	var out []byte
	for len(in) >= cols+1 && in[0] == 2 {
		for i := range hist {
			hist[i] += in[i]
		}
		out = append(out, hist[1:]...)
		in = in[cols+1:]
	}
	return out
}
