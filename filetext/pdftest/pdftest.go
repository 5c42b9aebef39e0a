// Package pdftest writes small, valid PDF documents for tests: one page a
// text, in Helvetica, with a classic cross-reference table, so that tests
// outside package filetext can send a real PDF through what reads them.
package pdftest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
)

// Document returns a PDF with one page for each text, the text drawn as
// one line with Tj; compress writes the pages' content streams with
// FlateDecode.
func Document(compress bool, pages ...string) []byte {
	var objs []string
	add := func(body string) int {
		objs = append(objs, body)
		return len(objs)
	}
	catalog := add("")
	tree := add("")
	font := add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	var kids []string
	for _, text := range pages {
		content := []byte(fmt.Sprintf("BT /F1 12 Tf 72 720 Td (%s) Tj ET", escape(text)))
		dict := ""
		if compress {
			var buf bytes.Buffer
			zw := zlib.NewWriter(&buf)
			zw.Write(content)
			zw.Close()
			content, dict = buf.Bytes(), " /Filter /FlateDecode"
		}
		c := add(fmt.Sprintf("<< /Length %d%s >>\nstream\n%s\nendstream", len(content), dict, content))
		p := add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>", tree, font, c))
		kids = append(kids, fmt.Sprintf("%d 0 R", p))
	}
	objs[catalog-1] = fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", tree)
	objs[tree-1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))

	var out bytes.Buffer
	out.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, body := range objs {
		offsets[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, body)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, catalog, xref)
	return out.Bytes()
}

// escape writes s as the inside of a PDF literal string.
func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s)
}
