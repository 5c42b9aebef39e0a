package filetext

import (
	"bytes"
	"fmt"
	"strconv"
)

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
