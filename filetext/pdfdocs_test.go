package filetext

import (
	"fmt"
	"strings"
)

// Documents that exercise one feature each, shared by the tests, the fuzz seeds and the
// benchmarks.

const identityCMap = "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n" +
	"1 begincodespacerange <0000> <FFFF> endcodespacerange\n" +
	"2 beginbfchar <0001> <0069> <0002> <0067> endbfchar\n" +
	"2 beginbfrange <0003> <0004> <006E> <0005> <0006> [<006F> <0072>] endbfrange\n" +
	"endcmap CMapName currentdict /CMap defineresource pop end end"

// singlePage writes a one-page document around a page dictionary made by page(tree).
func singlePage(b *pdfBuilder, catalog, tree int, page string) []byte {
	p := b.add(page)
	b.set(tree, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", p))
	b.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", tree))
	return b.bytes(catalog, "")
}

// cmapPDF shows two-byte codes of a Type0 font through identityCMap: "ignnoo r".
func cmapPDF() []byte {
	b := newPDF()
	catalog, tree := b.reserve(), b.reserve()
	tu := b.add(stream("", []byte(identityCMap), true))
	font := b.add(fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /X /Encoding /Identity-H /ToUnicode %d 0 R >>", tu))
	c := b.add(stream("", []byte("BT /F1 12 Tf <0001000200030003> Tj <0004> Tj [<0005> -400 <0006>] TJ ET"), true))
	return singlePage(b, catalog, tree, fmt.Sprintf(
		"<< /Type /Page /Parent %d 0 R /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>", tree, font, c))
}

// formPDF draws a Form XObject ("from a form"), an image whose data looks like text,
// then "page".
func formPDF() []byte {
	b := newPDF()
	catalog, tree := b.reserve(), b.reserve()
	font := b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	form := b.add(stream(fmt.Sprintf("/Type /XObject /Subtype /Form /BBox [0 0 100 100] /Resources << /Font << /F9 %d 0 R >> >>", font),
		[]byte("BT /F9 10 Tf (from a form) Tj ET"), true))
	img := b.add(stream("/Type /XObject /Subtype /Image /Width 1 /Height 1 /BitsPerComponent 8 /ColorSpace /DeviceGray", []byte("(not text) Tj"), false))
	c := b.add(stream("", []byte("q /Fm1 Do /Im1 Do Q BT /F1 1 Tf (page) Tj ET"), false))
	return singlePage(b, catalog, tree, fmt.Sprintf(
		"<< /Type /Page /Parent %d 0 R /Resources << /Font << /F1 %d 0 R >> /XObject << /Fm1 %d 0 R /Im1 %d 0 R >> >> /Contents %d 0 R >>",
		tree, font, form, img, c))
}

// contentsArrayPDF splits the page's content between two streams: the string operand in
// the first, its operator in the second.
func contentsArrayPDF() []byte {
	b := newPDF()
	catalog, tree := b.reserve(), b.reserve()
	c1 := b.add(stream("", []byte("BT /F1 12 Tf ("+injection+")"), true))
	c2 := b.add(stream("", []byte("Tj ET"), false))
	return singlePage(b, catalog, tree, fmt.Sprintf("<< /Type /Page /Parent %d 0 R /Contents [%d 0 R %d 0 R] >>", tree, c1, c2))
}

// objStmPDF keeps the catalog, page tree, font and page in an object stream indexed by
// a cross-reference stream.
func objStmPDF() []byte {
	b, root := docPDF([]pageSpec{{content: show(injection)}}, true)
	return b.xrefStreamBytes(root, []int{1, 2, 3, 5}, "")
}

// infoPDF has a title and keywords, a page showing "body" and a text annotation.
func infoPDF() []byte {
	b, root := docPDF([]pageSpec{{content: show("body"), extra: "/Annots [<< /Type /Annot /Subtype /Text /Contents (a note) >>]"}}, false)
	info := b.add("<< /Title (The title) /Keywords <FEFF00680069> >>")
	return b.bytes(root, fmt.Sprintf("/Info %d 0 R", info))
}

// reportPDF is a typical document: pages of forty lines of prose, compressed.
func reportPDF(pages int) []byte {
	line := "The quarterly report shows steady growth in every region, with margins holding."
	contents := make([]string, pages)
	for p := range contents {
		var c strings.Builder
		c.WriteString("BT /F1 11 Tf 14 TL 72 760 Td\n")
		for i := range 40 {
			fmt.Fprintf(&c, "[(%s) -250 (%d)] TJ T*\n", line[:40+i], p*40+i)
		}
		c.WriteString("ET")
		contents[p] = c.String()
	}
	return textPDF(true, contents...)
}
