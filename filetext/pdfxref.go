package filetext

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"encoding/ascii85"
	"fmt"
	"io"
	"strconv"
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

// checkXrefChain returns the kind of each object number ('f', 'n', or 's' for one in an
// object stream) as the library's table will have it.
func checkXrefChain(ctx context.Context, data []byte, maxID int64, b *budget) ([]byte, error) {
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
			return nil, unread
		}
		d := parseValue(l, 0)
		if d.dict == nil || d.dict["Type"].tok.s != "XRef" || d.dict["Type"].tok.kind != tName {
			return nil, unread
		}
		if t := l.next(); t.kind != tOp || t.s != "stream" {
			return nil, unread
		}
		rows, err := xrefRows(ctx, data, l.pos, d.dict, b)
		if err != nil {
			return nil, err
		}
		if rows == nil {
			return nil, unread
		}
		var w []int
		for _, e := range d.dict["W"].arr {
			n, ok := e.int()
			if !ok || n < 0 || n > 8 {
				return nil, fmt.Errorf("%w: xref stream /W", ErrLimit)
			}
			w = append(w, int(n))
		}
		if len(w) < 3 {
			return nil, unread
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
			return nil, fmt.Errorf("%w: object %d is in object stream %d, itself in an object stream", ErrMalformed, x, s)
		}
	}
	return kinds, nil
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

// Viewers and the extractors of model providers read PDFs whose cross-reference table
// is missing or unreadable (files cut and mended, edited by hand): they rebuild it by
// finding the objects. The library does not, so a file it cannot open is rebuilt here
// once: every "n g obj" found in the file goes into a new classic xref table appended
// to the file, with a trailer naming the catalog. A number defined twice is not
// rebuilt, since readers may disagree on which definition counts; nor is a file that
// opens but whose table points to the wrong offsets, since a lenient reader sees what
// that table says. Objects kept in object streams are not found this way; a file that
// needs them stays unreadable.

// catalogWindow bounds how much of an object is parsed to find its /Type.
const catalogWindow = 4096

// repairXref returns data followed by a rebuilt cross-reference table, or nil when no
// catalog is found.
func repairXref(data []byte) []byte {
	maxID := maxObjectID(data)
	type objAt struct {
		off int
		gen int64
	}
	objs := map[int64]objAt{}
	var root, rootGen int64 = -1, 0
	for i := bytes.Index(data, []byte("obj")); i >= 0; {
		if id, gen, start, ok := objHeader(data, i); ok && id > 0 && id <= maxID {
			if _, dup := objs[id]; dup {
				// Readers that rebuild may pick another of the two; the text of
				// the one not picked here would go unscanned.
				return nil
			}
			objs[id] = objAt{start, gen}
			l := &lexer{data: data[i+3 : min(len(data), i+3+catalogWindow)]}
			if v := parseValue(l, 0); v.dict != nil && v.dict["Type"].tok.kind == tName && v.dict["Type"].tok.s == "Catalog" {
				root, rootGen = id, gen
			}
		}
		next := bytes.Index(data[i+3:], []byte("obj"))
		if next < 0 {
			break
		}
		i += 3 + next
	}
	if root < 0 {
		return nil
	}
	var size int64
	for id := range objs {
		size = max(size, id+1)
	}
	out := bytes.NewBuffer(make([]byte, 0, len(data)+int(size)*20+128))
	out.Write(data)
	out.WriteString("\n")
	xref := out.Len()
	fmt.Fprintf(out, "xref\n0 %d\n", size)
	for id := range size {
		if o, ok := objs[id]; ok {
			fmt.Fprintf(out, "%010d %05d n \n", o.off, o.gen)
		} else {
			out.WriteString("0000000000 65535 f \n")
		}
	}
	fmt.Fprintf(out, "trailer\n<< /Size %d /Root %d %d R >>\nstartxref\n%d\n%%%%EOF\n", size, root, rootGen, xref)
	return out.Bytes()
}

// objHeader reads "id gen" before the "obj" keyword at i, returning where id starts.
func objHeader(data []byte, i int) (id, gen int64, start int, ok bool) {
	if i+3 < len(data) && isRegular(data[i+3]) {
		return 0, 0, 0, false
	}
	genEnd := i
	for genEnd > 0 && isSpace(data[genEnd-1]) {
		genEnd--
	}
	genStart := digitsBefore(data, genEnd)
	idEnd := genStart
	for idEnd > 0 && isSpace(data[idEnd-1]) {
		idEnd--
	}
	idStart := digitsBefore(data, idEnd)
	if genEnd == i || genStart == genEnd || idStart == idEnd || idEnd == genStart {
		return 0, 0, 0, false
	}
	if genEnd-genStart > 5 || idEnd-idStart > 10 || idStart > 0 && isRegular(data[idStart-1]) {
		return 0, 0, 0, false
	}
	id, err1 := strconv.ParseInt(string(data[idStart:idEnd]), 10, 64)
	gen, err2 := strconv.ParseInt(string(data[genStart:genEnd]), 10, 64)
	if err1 != nil || err2 != nil || gen > 65535 {
		return 0, 0, 0, false
	}
	return id, gen, idStart, true
}

func digitsBefore(data []byte, end int) int {
	start := end
	for start > 0 && end-start < 11 && data[start-1] >= '0' && data[start-1] <= '9' {
		start--
	}
	return start
}
