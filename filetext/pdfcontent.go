package filetext

import (
	"bytes"
	"fmt"

	"github.com/ledongthuc/pdf"
)

// operand is a content-stream operand: a number, string or name, an array of them, or
// the marked-content texts of a dictionary.
type operand struct {
	tok  token
	arr  []operand
	text []string // /ActualText, /Alt and /E strings of a dictionary operand
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
		o := in.operand(t, l, 0)
		if len(in.stack) >= maxOperands {
			in.stack = in.stack[:0]
		}
		in.stack = append(in.stack, o)
	}
}

// operand completes the operand that starts with t: arrays and dictionaries are read
// whole.
func (in *interp) operand(t token, l *lexer, depth int) operand {
	switch t.kind {
	case tArrOpen:
		var o operand
		for {
			e := l.next()
			if e.kind == tOp {
				// An unclosed array ends at an operator, which still runs.
				l.back(e)
				return o
			}
			if e.kind == tEOF || e.kind == tArrClose {
				return o
			}
			// Deeper than the cap, nested brackets are dropped and their elements
			// kept at this level.
			if depth < maxArrayDepth || e.kind != tArrOpen && e.kind != tDictOpen {
				o.arr = append(o.arr, in.operand(e, l, depth+1))
			}
		}
	case tDictOpen:
		var o operand
		key := ""
		for {
			e := l.next()
			switch {
			case e.kind == tOp:
				l.back(e)
				return o
			case e.kind == tEOF || e.kind == tDictClose:
				return o
			case e.kind == tName && key == "":
				key = e.s
				continue
			case e.kind == tStr && (key == "ActualText" || key == "Alt" || key == "E"):
				o.text = append(o.text, textString(e.s))
			case e.kind == tArrOpen || e.kind == tDictOpen:
				if depth < maxArrayDepth {
					in.operand(e, l, depth+1)
				}
			}
			key = ""
		}
	}
	return operand{tok: t}
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
		for _, s := range in.last().text {
			if err := out.line(s); err != nil {
				return err
			}
		}
	case "Do":
		return in.do(in.last().tok.s)
	case "BI":
		skipInlineImage(l)
	}
	return nil
}

// show writes a string operand, or the strings of an array operand (TJ's, or any
// operator's given one: a superset of what readers show) with a space for a gap wider
// than a fifth of the font size.
func (in *interp) show(o operand) error {
	if o.arr != nil {
		for _, e := range o.arr {
			var err error
			if e.tok.kind == tNum && e.tok.num < -200 {
				err = in.x.out.space(" ")
			} else {
				err = in.show(e)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	t := o.tok
	if t.kind != tStr || t.s == "" {
		return nil
	}
	var s string
	if in.font != nil {
		s = in.font.Decode(t.s)
	} else {
		s = decodeSingleByte([]byte(t.s), nil)
	}
	return in.x.out.write(s)
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
