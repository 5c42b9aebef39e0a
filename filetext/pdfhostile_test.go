package filetext

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/ascii85"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// hostileLimits are tight so that the tests show the bounds hold, not the defaults'
// headroom.
var hostileLimits = Limits{MaxDecompressed: 8 << 20, MaxPages: 100, MaxText: 1 << 20, Timeout: 500 * time.Millisecond}

// bomb returns n bytes of fill compressed, without holding n bytes.
func bomb(n int, fill byte) []byte {
	var buf bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	chunk := bytes.Repeat([]byte{fill}, 1<<20)
	for ; n > 0; n -= len(chunk) {
		zw.Write(chunk[:min(n, len(chunk))])
	}
	zw.Close()
	return buf.Bytes()
}

func rawStream(dict string, data []byte) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

// onePage builds a one-page document whose content stream object body is content and
// lets edit add or change objects first.
func onePage(content string, edit func(b *pdfBuilder, page int)) []byte {
	b, root := docPDF([]pageSpec{{content: "BT (x) Tj ET"}}, false)
	if content != "" {
		b.set(4, content)
	}
	if edit != nil {
		edit(b, 5)
	}
	return b.bytes(root, "")
}

func manyPages(n int, content string, flate bool) []byte {
	b := newPDF()
	catalog, tree := b.reserve(), b.reserve()
	c := b.add(stream("", []byte(content), flate))
	var kids strings.Builder
	for range n {
		p := b.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /Contents %d 0 R >>", tree, c))
		fmt.Fprintf(&kids, "%d 0 R ", p)
	}
	b.set(tree, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids.String(), n))
	b.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", tree))
	return b.bytes(catalog, "")
}

func TestExtractPDFHostile(t *testing.T) {
	const big = 64 << 20 // decompressed size of the bombs: 8 times the budget
	a85 := func(data []byte) []byte {
		var buf bytes.Buffer
		w := ascii85.NewEncoder(&buf)
		w.Write(data)
		w.Close()
		return append(buf.Bytes(), "~>"...)
	}
	simple := textPDF(false, show(injection))
	xrefAt := bytes.LastIndex(simple, []byte("xref\n0 "))

	tests := []struct {
		name string
		pdf  []byte
		want []error // any of these; nil means the text must be extracted without error
	}{
		{"flate bomb in content", onePage(rawStream("/Filter /FlateDecode", bomb(big, ' ')), nil), []error{ErrLimit}},
		{"nested flate bomb", onePage(rawStream("/Filter [/FlateDecode /FlateDecode]", deflate(bomb(big, 0))), nil), []error{ErrLimit}},
		{"ascii85 flate bomb", onePage(rawStream("/Filter [/ASCII85Decode /FlateDecode]", a85(bomb(big, 0))), nil), []error{ErrLimit}},
		{"bomb in ToUnicode", onePage("", func(b *pdfBuilder, _ int) {
			tu := b.add(rawStream("/Filter /FlateDecode", bomb(big, '0')))
			b.set(3, fmt.Sprintf("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode %d 0 R >>", tu))
		}), []error{ErrLimit}},
		{"bomb in object stream", func() []byte {
			b, root := docPDF([]pageSpec{{content: show(injection)}}, true)
			b.add(rawStream("/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode", bomb(big, '[')))
			return b.bytes(root, "")
		}(), []error{ErrLimit}},
		{"10000 pages share one content stream", manyPages(10000, show(injection), true), []error{ErrLimit}},
		{"cyclic pages", onePage("", func(b *pdfBuilder, _ int) {
			b.set(2, "<< /Type /Pages /Kids [5 0 R 2 0 R] /Count 2 >>")
		}), []error{ErrMalformed}},
		{"cycle through two nodes", onePage("", func(b *pdfBuilder, _ int) {
			n := b.add("<< /Type /Pages /Kids [2 0 R] /Count 1 >>")
			b.set(2, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", n))
		}), []error{ErrMalformed}},
		{"kids of a million nulls", onePage("", func(b *pdfBuilder, _ int) {
			b.set(2, "<< /Type /Pages /Kids ["+strings.Repeat("null ", 1<<20)+"] /Count 1 >>")
		}), []error{ErrLimit, ErrMalformed, ErrTimeout}},
		{"no objects to rebuild from", []byte("%PDF-1.4\n1 0 ob j\nstartxref\n0\n%%EOF\n"), []error{ErrMalformed}},
		{"no catalog to rebuild from", append(bytes.Replace(simple[:xrefAt:xrefAt], []byte("/Catalog"), []byte("/Catalogue"), 1), "startxref\n0\n%%EOF\n"...), []error{ErrMalformed}},
		{"wrong offsets are not rebuilt", bytes.Replace(simple, []byte("0000000015 00000 n"), []byte("0000000999 00000 n"), 1), []error{ErrMalformed}},
		{"a number defined twice is not rebuilt", append(append(simple[:xrefAt:xrefAt], "4 0 obj\n<< /Length 0 >>\nstream\n\nendstream\nendobj\n"...), "startxref\n0\n%%EOF\n"...), []error{ErrMalformed}},
		{"rebuilt table keeps the object checks", func() []byte {
			b, root := docPDF([]pageSpec{{content: show(injection)}}, true)
			data := b.xrefStreamBytes(root, []int{1, 3}, "")
			data = bytes.Replace(data, []byte("/N 2"), []byte("/N 9 0 R"), 1)
			return append(data[:bytes.LastIndex(data, []byte("startxref"))], "startxref\n1\n%%EOF\n"...)
		}(), []error{ErrMalformed}},
		{"no trailer root", bytes.Replace(simple, []byte("/Root 1 0 R"), []byte("/Rot 1 0 R"), 1), []error{ErrMalformed}},
		{"huge /Size", bytes.Replace(simple, []byte("/Size 6"), []byte("/Size 4000000000"), 1), []error{ErrLimit}},
		{"huge /Size escaped", bytes.Replace(simple, []byte("/Size 6"), []byte("/Si#7Ae %c\n 4000000000"), 1), []error{ErrLimit}},
		{"huge xref subsection", bytes.Replace(simple, []byte("xref\n0 6"), []byte("xref\n4000000000 6"), 1), []error{ErrLimit}},
		{"huge /Index", func() []byte {
			b, root := docPDF([]pageSpec{{content: show(injection)}}, true)
			return bytes.Replace(b.xrefStreamBytes(root, []int{1, 3}, ""), []byte("/W [1 4 2]"), []byte("/W [1 4 2] /Index [0 3000000000]"), 1)
		}(), []error{ErrLimit}},
		{"huge object stream /N", func() []byte {
			b, root := docPDF([]pageSpec{{content: show(injection)}}, true)
			b.objStmN = "999999999999"
			return b.xrefStreamBytes(root, []int{1, 3}, "")
		}(), []error{ErrLimit}},
		{"indirect object stream /N, huge", func() []byte {
			b, root := docPDF([]pageSpec{{content: show(injection)}}, true)
			b.objStmN = fmt.Sprintf("%d 0 R", b.add("999999999999"))
			return b.xrefStreamBytes(root, []int{1, 3}, "")
		}(), []error{ErrLimit}},
		{"indirect object stream /N in an object stream", func() []byte {
			b, root := docPDF([]pageSpec{{content: show(injection)}}, true)
			n := b.add("3")
			b.objStmN = fmt.Sprintf("%d 0 R", n)
			return b.xrefStreamBytes(root, []int{1, 3, n}, "")
		}(), []error{ErrMalformed}},
		{"object stream in itself", func() []byte {
			b, root := docPDF([]pageSpec{{content: show(injection)}}, true)
			b.editXref = func(e [][3]int) { e[len(b.objs)+1] = [3]int{2, len(b.objs) + 1, 0} }
			return b.xrefStreamBytes(root, []int{1, 2, 3, 5}, "")
		}(), []error{ErrMalformed}},
		{"object streams in a cycle", func() []byte {
			b, root := docPDF([]pageSpec{{content: show(injection)}}, true)
			b.editXref = func(e [][3]int) { e[len(b.objs)+1] = [3]int{2, 3, 0} }
			return b.xrefStreamBytes(root, []int{1, 2, 3, 5}, "")
		}(), []error{ErrMalformed}},
		{"huge /W", func() []byte {
			b, root := docPDF([]pageSpec{{content: show(injection)}}, true)
			return bytes.Replace(b.xrefStreamBytes(root, []int{1, 3}, ""), []byte("/W [1 4 2]"), []byte("/W [1 4 999999999999]"), 1)
		}(), []error{ErrLimit}},
		{"huge /Columns", onePage(rawStream("/Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 999999999999 >>", deflate([]byte("x"))), nil), []error{ErrLimit}},
		{"xref /Prev cycle", bytes.Replace(simple, []byte("/Root 1 0 R"), fmt.Appendf(nil, "/Root 1 0 R /Prev %d", xrefAt), 1), []error{ErrTimeout, ErrMalformed}},
		{"deep object nesting", onePage("", func(b *pdfBuilder, p int) {
			b.set(p, "<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Deep "+strings.Repeat("[", 200000)+" >>")
		}), []error{ErrMalformed, nil}},
		{"deep content nesting", onePage(stream("", []byte(strings.Repeat("[", 100000)+" (x) Tj"), true), nil), nil},
		{"array of three million numbers", onePage(stream("", []byte("BT ["+strings.Repeat("0 ", 3<<20)+"] TJ ET"), true), nil), nil},
		{"array of a million strings", onePage(stream("", []byte("BT ["+strings.Repeat("(ab)", 1<<20)+"] TJ ET"), true), nil), []error{ErrLimit}},
		{"a million ActualTexts", onePage(stream("", []byte("<<"+strings.Repeat("/ActualText (ab) ", 1<<19)+">> BDC"), true), nil), []error{ErrLimit}},
		{"recursive form", onePage(stream("", []byte("/X Do"), false), func(b *pdfBuilder, p int) {
			form := b.add(stream("/Type /XObject /Subtype /Form /Resources 7 0 R", []byte("/X Do"), false))
			b.add(fmt.Sprintf("<< /XObject << /X %d 0 R >> >>", form))
			b.set(p, "<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources 7 0 R >>")
		}), []error{ErrMalformed}},
		{"huge differences", func() []byte {
			diff := "[0 " + strings.Repeat("/a ", 300000) + "]"
			b := newPDF()
			catalog, tree := b.reserve(), b.reserve()
			font := b.add("<< /Type /Font /Subtype /Type1 /Encoding << /Differences " + diff + " >> >>")
			c := b.add(stream("", []byte("BT /F1 1 Tf (abc) Tj ET"), true))
			var kids strings.Builder
			for range 90 {
				fmt.Fprintf(&kids, "%d 0 R ", b.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>", tree, font, c)))
			}
			b.set(tree, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count 90 >>", kids.String()))
			b.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", tree))
			return b.bytes(catalog, "")
		}(), []error{ErrLimit}},
		{"a million stream keywords", []byte("%PDF-1.4\n" + strings.Repeat("stream\nBT(/", 1<<20) + "\n%%EOF\n"), []error{ErrMalformed, ErrTimeout}},
		{"overlapping xref tables", []byte("%PDF-1.4\n" + strings.Repeat("xref\n0 600000\n", 1<<18) + strings.Repeat("0 0 n\n", 1<<18) + "%%EOF\n"), []error{ErrMalformed}},
		{"unknown filter", onePage(rawStream("/Filter /LZWDecode", []byte("\x80\x0b\x60\x50")), nil), []error{ErrMalformed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkBounded(t, tt.pdf, hostileLimits, tt.want)
		})
	}
}

// checkBounded extracts data and fails unless the call ends within the time budget
// (with slack for a slow machine), allocates a bounded amount and returns one of want.
func checkBounded(t *testing.T, data []byte, limits Limits, want []error) {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // samples the heap while Extract runs
		defer close(sampled)
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
		}
	}()
	start := time.Now()
	text, err := Extract(PDF, data, limits)
	elapsed := time.Since(start)
	t.Logf("%v after %v, %d bytes of text", err, elapsed, len(text))
	close(done)
	<-sampled
	if elapsed > limits.Timeout+time.Second {
		t.Errorf("took %v, over the %v budget", elapsed, limits.Timeout)
	}
	if grown := peak - base; grown > uint64(16*len(data))+3*uint64(limits.MaxDecompressed)+32<<20 {
		t.Errorf("heap grew by %d MiB for a %d KiB file", grown>>20, len(data)>>10)
	}
	if len(text) > limits.MaxText {
		t.Errorf("text of %d bytes over MaxText %d", len(text), limits.MaxText)
	}
	if want == nil {
		if err != nil {
			t.Errorf("err = %v, want none", err)
		}
		return
	}
	for _, w := range want {
		if w == nil && err == nil || w != nil && errors.Is(err, w) {
			return
		}
	}
	t.Errorf("err = %v, want one of %v", err, want)
}

// TestExtractPDFSharedContent reads 10,000 pages within the page limit that all show one
// content stream: each read is charged, so the budget ends it.
func TestExtractPDFSharedContent(t *testing.T) {
	limits := hostileLimits
	limits.MaxPages, limits.MaxText = 20000, 64<<20
	checkBounded(t, manyPages(10000, show(strings.Repeat("x", 1000)), true), limits, []error{ErrLimit, ErrTimeout})
}

// TestExtractPDFObjectStreamTokens hides a five-million-element array in an object
// stream within the byte budget: the library would parse it whole.
func TestExtractPDFObjectStreamTokens(t *testing.T) {
	b, root := docPDF([]pageSpec{{content: show(injection), extra: "/Annots 6 0 R"}}, true)
	b.add("[" + strings.Repeat("0 ", 5<<20) + "]")
	limits := hostileLimits
	limits.MaxDecompressed = 32 << 20
	checkBounded(t, b.xrefStreamBytes(root, []int{1, 2, 3, 5, 6}, ""), limits, []error{ErrLimit})
}

func TestExtractPDFTruncated(t *testing.T) {
	docs := [][]byte{
		textPDF(true, show(injection), show("two")),
		func() []byte {
			b, root := docPDF([]pageSpec{{content: show(injection)}}, true)
			return b.xrefStreamBytes(root, []int{1, 2, 3, 5}, "")
		}(),
	}
	for _, doc := range docs {
		for n := 0; n < len(doc); n += 7 {
			text, err := Extract(PDF, doc[:n], hostileLimits)
			if err == nil && text == "" {
				t.Fatalf("prefix of %d bytes: no error and no text", n)
			}
		}
	}
}

func TestExtractPDFCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ExtractContext(ctx, PDF, textPDF(false, show(injection)), Limits{})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}
