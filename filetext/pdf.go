package filetext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

const (
	maxTreeDepth = 64 // page tree and Form XObject nesting; a cycle exceeds it
	maxFormDepth = 8
)

func extractPDF(ctx context.Context, data []byte, limits Limits) (string, error) {
	deadline := time.Now().Add(limits.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	data, err := pdfBody(data)
	if err != nil {
		return "", err
	}
	text, opened, err := extractOnce(ctx, data, limits, deadline)
	if opened || errors.Is(err, ErrTimeout) || errors.Is(err, ErrLimit) || errors.Is(err, ErrEncrypted) {
		return text, err
	}
	repaired := repairXref(data)
	if repaired == nil {
		return text, err
	}
	if text2, opened, err2 := extractOnce(ctx, repaired, limits, deadline); opened {
		return text2, err2
	}
	return text, err
}

// extractOnce reads data with the library; opened says whether the library could open
// the file, or a rebuilt cross-reference table may help.
func extractOnce(ctx context.Context, data []byte, limits Limits, deadline time.Time) (text string, opened bool, err error) {
	// The pre-check and the reads have a budget each: a content stream is decoded
	// by both.
	if err := preCheck(ctx, data, &budget{left: limits.MaxDecompressed, deadline: deadline}); err != nil {
		return "", false, err
	}
	b := &budget{left: limits.MaxDecompressed, deadline: deadline}
	file := &guardedFile{ctx: ctx, data: data, deadline: deadline}
	x := &pdfExtractor{ctx: ctx, file: file, budget: b, limits: limits,
		out: textOut{max: limits.MaxText}}
	defer func() {
		// The library reports malformed input by panicking, and hostile input can
		// reach its runtime errors too: both are a malformed file here.
		if p := recover(); p != nil {
			err = x.failure(fmt.Errorf("%w: %v", ErrMalformed, p))
		}
		text = x.out.String()
	}()
	r, err := pdf.NewReader(file, int64(len(data)))
	if err != nil {
		if bytes.Contains(data, []byte("/Encrypt")) {
			return "", false, ErrEncrypted
		}
		return "", false, x.failure(fmt.Errorf("%w: %v", ErrMalformed, err))
	}
	if r.Trailer().Key("Encrypt").Kind() != pdf.Null {
		return "", true, ErrEncrypted
	}
	opened = true
	return "", true, x.failure(x.document(r))
}

// pdfBody returns the file from its "%PDF-" header, which readers find within the first
// 1024 bytes, and writes a 2.0 header as 1.7 (the library knows only 1.x; the syntax
// it reads is the same).
func pdfBody(data []byte) ([]byte, error) {
	i := bytes.Index(data[:min(len(data), 1024)], []byte("%PDF-"))
	if i < 0 {
		return nil, fmt.Errorf("%w: no %%PDF- header", ErrMalformed)
	}
	data = data[i:]
	if bytes.HasPrefix(data, []byte("%PDF-2.")) {
		data = bytes.Clone(data)
		copy(data, "%PDF-1.7")
	}
	return data, nil
}

type pdfExtractor struct {
	ctx    context.Context
	file   *guardedFile
	budget *budget
	limits Limits
	out    textOut
	pages  int
	nodes  int
}

// failure prefers the reason the file reads failed (time) over the library's report of
// the failed read.
func (x *pdfExtractor) failure(err error) error {
	if err == nil {
		return nil
	}
	if x.file.err != nil && !errors.Is(err, ErrLimit) {
		return x.file.err
	}
	return err
}

func (x *pdfExtractor) document(r *pdf.Reader) error {
	info := r.Trailer().Key("Info")
	for _, k := range []string{"Title", "Subject", "Keywords", "Author"} {
		if err := x.out.line(info.Key(k).Text()); err != nil {
			return err
		}
	}
	root := r.Trailer().Key("Root")
	if root.Kind() != pdf.Dict {
		return fmt.Errorf("%w: no document catalog", ErrMalformed)
	}
	if err := x.walk(root.Key("Pages"), pdf.Value{}, 0); err != nil {
		return err
	}
	if x.pages == 0 {
		return fmt.Errorf("%w: no pages", ErrMalformed)
	}
	return nil
}

// walk visits the page tree depth first, passing inherited resources down. It does not
// use the library's Page, which loops forever on a cyclic tree.
func (x *pdfExtractor) walk(node, resources pdf.Value, depth int) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("%w: page tree deeper than %d (cyclic?)", ErrMalformed, maxTreeDepth)
	}
	x.nodes++
	if x.nodes > 2*x.limits.MaxPages+maxTreeDepth {
		return fmt.Errorf("%w: page tree over %d nodes", ErrLimit, x.nodes-1)
	}
	if err := checkTime(x.ctx, x.budget.deadline); err != nil {
		return err
	}
	if res := node.Key("Resources"); res.Kind() == pdf.Dict {
		resources = res
	}
	if kids := node.Key("Kids"); kids.Kind() == pdf.Array {
		for i := 0; i < kids.Len(); i++ {
			if err := x.walk(kids.Index(i), resources, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if node.Kind() != pdf.Dict || node.Key("Type").Name() == "Pages" {
		return nil
	}
	x.pages++
	if x.pages > x.limits.MaxPages {
		return fmt.Errorf("%w: more than %d pages", ErrLimit, x.limits.MaxPages)
	}
	if x.pages > 1 {
		if err := x.out.write("\n\n"); err != nil {
			return err
		}
	}
	content, err := x.readContents(node.Key("Contents"))
	if err != nil {
		return err
	}
	in := newInterp(x, resources, 0)
	if err := in.run(content); err != nil {
		return err
	}
	return x.annotations(node.Key("Annots"), resources)
}

// annotations reads each annotation's /Contents text and its normal appearance stream,
// which viewers draw on the page.
func (x *pdfExtractor) annotations(annots, resources pdf.Value) error {
	for i := 0; i < annots.Len(); i++ {
		if i%256 == 255 {
			if err := checkTime(x.ctx, x.budget.deadline); err != nil {
				return err
			}
		}
		a := annots.Index(i)
		if err := x.out.line(a.Key("Contents").Text()); err != nil {
			return err
		}
		ap := a.Key("AP").Key("N")
		if ap.Kind() == pdf.Dict && ap.Key("Subtype").Name() == "" {
			continue // a dictionary of appearance states, not a stream
		}
		if ap.Kind() == pdf.Stream {
			if err := newInterp(x, resources, 0).form(ap); err != nil {
				return err
			}
		}
	}
	return nil
}

// readContents returns the decoded bytes of a page's content stream, or of its array of
// streams joined by a space as pdfium joins them (an operator's operands may be in the
// stream before it), charged to the budget.
func (x *pdfExtractor) readContents(v pdf.Value) ([]byte, error) {
	var buf bytes.Buffer
	switch v.Kind() {
	case pdf.Stream:
		err := x.readStream(&buf, v)
		return buf.Bytes(), err
	case pdf.Array:
		for i := 0; i < v.Len(); i++ {
			if s := v.Index(i); s.Kind() == pdf.Stream {
				if err := x.readStream(&buf, s); err != nil {
					return nil, err
				}
				buf.WriteByte(' ')
			}
		}
	}
	return buf.Bytes(), nil
}

func (x *pdfExtractor) readStream(buf *bytes.Buffer, v pdf.Value) error {
	rc := v.Reader()
	defer rc.Close()
	_, err := io.Copy(&budgetBuffer{ctx: x.ctx, b: x.budget, buf: buf}, rc)
	if err != nil && !errors.Is(err, ErrLimit) && !errors.Is(err, ErrTimeout) {
		return x.failure(fmt.Errorf("%w: stream: %v", ErrMalformed, err))
	}
	return x.failure(err)
}

type budgetBuffer struct {
	ctx context.Context
	b   *budget
	buf *bytes.Buffer
}

func (w *budgetBuffer) Write(p []byte) (int, error) {
	if err := w.b.charge(w.ctx, len(p)); err != nil {
		return 0, err
	}
	return w.buf.Write(p)
}

// textOut collects the extracted text up to max bytes.
type textOut struct {
	b   strings.Builder
	max int
}

func (t *textOut) write(s string) error {
	if !utf8.ValidString(s) {
		s = decodeUTF8([]byte(s)) // a font without an encoding passes its bytes through
	}
	if t.b.Len()+len(s) > t.max {
		t.b.WriteString(s[:validPrefix(s, t.max-t.b.Len())])
		return fmt.Errorf("%w: text over %d bytes", ErrLimit, t.max)
	}
	t.b.WriteString(s)
	return nil
}

// line writes s followed by a newline, when s is not empty.
func (t *textOut) line(s string) error {
	if s == "" {
		return nil
	}
	if err := t.write(s); err != nil {
		return err
	}
	return t.write("\n")
}

// space writes sep unless the text is empty or already ends in whitespace.
func (t *textOut) space(sep string) error {
	s := t.b.String()
	if s == "" || strings.HasSuffix(s, " ") || strings.HasSuffix(s, "\n") {
		return nil
	}
	return t.write(sep)
}

func (t *textOut) String() string { return t.b.String() }
