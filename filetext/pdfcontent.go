package filetext

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ledongthuc/pdf"
)

// operand is a content-stream operand: a number, string or name; or an array, kept as
// the text it would show (decoded with the current font, which no operator can change
// before the array's own); or a dictionary, kept as its marked-content texts. Keeping
// text rather than elements bounds an operand's memory by MaxText, whatever its length.
type operand struct {
	tok  token
	arr  bool
	text string
	over bool // text was cut at MaxText
}

// textAcc accumulates an operand's text up to max bytes.
type textAcc struct {
	b    strings.Builder
	max  int
	over bool
}

func (a *textAcc) add(s string) {
	if a.b.Len()+len(s) > a.max {
		a.over = true
		return
	}
	a.b.WriteString(s)
}

const (
	maxOperands   = 64 // no text operator takes more; a longer stack is noise
	maxArrayDepth = 32
)

// interp runs a content stream and writes the text its text operators show.
type interp struct {
	x         *pdfExtractor
	resources pdf.Value
	fonts     map[string]textDecoder
	font      textDecoder
	depth     int
	lastY     float64
	stack     []operand
}

func newInterp(x *pdfExtractor, resources pdf.Value, depth int) *interp {
	return &interp{x: x, resources: resources, fonts: map[string]textDecoder{}, depth: depth}
}

func (in *interp) run(content []byte) error {
	l := &lexer{data: content}
	for ops := 0; ; ops++ {
		if ops%1024 == 0 {
			if err := checkTime(in.x.ctx, in.x.budget.deadline); err != nil {
				return err
			}
		}
		t := l.next()
		switch t.kind {
		case tEOF:
			return nil
		case tOp:
			if err := in.op(t.s, l); err != nil {
				return err
			}
			in.stack = in.stack[:0]
			continue
		}
		o := in.operand(t, l)
		if len(in.stack) >= maxOperands {
			in.stack = in.stack[:0]
		}
		in.stack = append(in.stack, o)
	}
}

// operand completes the operand that starts with t: arrays and dictionaries are read
// whole.
func (in *interp) operand(t token, l *lexer) operand {
	switch t.kind {
	case tArrOpen:
		acc := &textAcc{max: in.x.limits.MaxText}
		in.array(l, 0, acc)
		return operand{arr: true, text: acc.b.String(), over: acc.over}
	case tDictOpen:
		acc := &textAcc{max: in.x.limits.MaxText}
		in.dict(l, 0, acc)
		return operand{text: acc.b.String(), over: acc.over}
	}
	return operand{tok: t}
}

// array reads an array's elements up to its "]" into acc: its strings' text, and a
// space for a gap wider than a fifth of the font size. Nested arrays are flattened;
// deeper than the cap, their brackets are dropped. An unclosed array ends at an
// operator, which still runs.
func (in *interp) array(l *lexer, depth int, acc *textAcc) {
	for {
		e := l.next()
		switch e.kind {
		case tOp:
			l.back(e)
			return
		case tEOF, tArrClose:
			return
		case tStr:
			if acc != nil && e.s != "" {
				acc.add(in.decode(e.s))
			}
		case tNum:
			if acc != nil && e.num < -200 && acc.b.Len() > 0 && !strings.HasSuffix(acc.b.String(), " ") {
				acc.add(" ")
			}
		case tArrOpen:
			if depth < maxArrayDepth {
				in.array(l, depth+1, acc)
			}
		case tDictOpen:
			if depth < maxArrayDepth {
				in.dict(l, depth+1, nil)
			}
		}
	}
}

// dict reads a dictionary up to its ">>", adding the /ActualText, /Alt and /E strings
// to acc, one a line.
func (in *interp) dict(l *lexer, depth int, acc *textAcc) {
	key := ""
	for {
		e := l.next()
		switch {
		case e.kind == tOp:
			l.back(e)
			return
		case e.kind == tEOF || e.kind == tDictClose:
			return
		case e.kind == tName && key == "":
			key = e.s
			continue
		case e.kind == tStr && acc != nil && (key == "ActualText" || key == "Alt" || key == "E"):
			acc.add(textString(e.s) + "\n")
		case e.kind == tArrOpen && depth < maxArrayDepth:
			in.array(l, depth+1, nil)
		case e.kind == tDictOpen && depth < maxArrayDepth:
			in.dict(l, depth+1, nil)
		}
		key = ""
	}
}

func (in *interp) arg(i int) operand {
	if i < 0 || i >= len(in.stack) {
		return operand{}
	}
	return in.stack[i]
}

func (in *interp) last() operand { return in.arg(len(in.stack) - 1) }

func (in *interp) op(op string, l *lexer) error {
	out := &in.x.out
	switch op {
	case "Tf":
		return in.setFont(in.arg(len(in.stack) - 2).tok.s)
	case "Tj", "TJ":
		return in.show(in.last())
	case "'", `"`:
		if err := out.space("\n"); err != nil {
			return err
		}
		return in.show(in.last())
	case "Td", "TD":
		if in.last().tok.num != 0 {
			return out.space("\n")
		}
		return out.space(" ")
	case "T*":
		return out.space("\n")
	case "Tm":
		y := in.last().tok.num
		sep := " "
		if y != in.lastY {
			sep = "\n"
		}
		in.lastY = y
		return out.space(sep)
	case "BT", "ET":
		return out.space(" ")
	case "BDC", "DP":
		return in.writeText(in.last())
	case "Do":
		return in.do(in.last().tok.s)
	case "BI":
		skipInlineImage(l)
	}
	return nil
}

// show writes a string operand, or the text of an array operand (TJ's, or any
// operator's given one: a superset of what readers show).
func (in *interp) show(o operand) error {
	if o.arr {
		return in.writeText(o)
	}
	if o.tok.kind != tStr || o.tok.s == "" {
		return nil
	}
	return in.x.out.write(in.decode(o.tok.s))
}

func (in *interp) writeText(o operand) error {
	if err := in.x.out.write(o.text); err != nil {
		return err
	}
	if o.over {
		return fmt.Errorf("%w: text over %d bytes", ErrLimit, in.x.limits.MaxText)
	}
	return nil
}

func (in *interp) decode(raw string) string {
	if in.font != nil {
		return in.font.Decode(raw)
	}
	return decodeSingleByte([]byte(raw), nil)
}

func (in *interp) setFont(name string) error {
	if f, ok := in.fonts[name]; ok {
		in.font = f
		return nil
	}
	f, err := in.x.decoder(in.resources.Key("Font").Key(name))
	if err != nil {
		return err
	}
	in.fonts[name] = f
	in.font = f
	return checkTime(in.x.ctx, in.x.budget.deadline)
}

// do runs a Form XObject: its text is drawn on the page. Images are not read.
func (in *interp) do(name string) error {
	xo := in.resources.Key("XObject").Key(name)
	if xo.Kind() != pdf.Stream || xo.Key("Subtype").Name() != "Form" {
		return nil
	}
	return in.form(xo)
}

func (in *interp) form(xo pdf.Value) error {
	if in.depth >= maxFormDepth {
		return fmt.Errorf("%w: Form XObjects nested deeper than %d", ErrMalformed, maxFormDepth)
	}
	var buf bytes.Buffer
	if err := in.x.readStream(&buf, xo); err != nil {
		return err
	}
	res := xo.Key("Resources")
	if res.Kind() != pdf.Dict {
		res = in.resources
	}
	return newInterp(in.x, res, in.depth+1).run(buf.Bytes())
}

// skipInlineImage moves past an inline image's data: from "ID" to an "EI" between
// whitespace.
func skipInlineImage(l *lexer) {
	for {
		t := l.next()
		if t.kind == tEOF {
			return
		}
		if t.kind == tOp && t.s == "ID" {
			break
		}
	}
	data := l.data[l.pos:]
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte("EI"))
		if j < 0 {
			l.pos = len(l.data)
			return
		}
		k := i + j
		if k > 0 && isSpace(data[k-1]) && (k+2 == len(data) || !isRegular(data[k+2])) {
			l.pos += k + 2
			return
		}
		i = k + 2
	}
}
