package llmresp

import (
	"bytes"
	"fmt"
)

// Framer cuts a response body into events. Feed it the body in any chunking, then Close it at
// the body's end; emit is called once per whole event, in order, and the event is valid only
// during the call. An error from emit stops the framer and is returned. After an error every
// call returns it again.
type Framer interface {
	Feed(p []byte, emit func(*Event) error) error
	Close(emit func(*Event) error) error
}

// NewFramer returns the framer of format f with events bounded by maxEvent bytes (0:
// DefaultMaxEvent). For FormatJSON and gemini, a body whose first byte (after white space) is
// '[' is framed as FormatJSONArray: Gemini's streamGenerateContent without alt=sse.
func NewFramer(api API, f Format, maxEvent int) Framer {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEvent
	}
	switch f {
	case FormatSSE:
		return &SSE{Max: maxEvent}
	case FormatNDJSON:
		return &NDJSON{Max: maxEvent}
	case FormatJSONArray:
		return &JSONArray{Max: maxEvent}
	}
	return &Whole{Max: maxEvent, Arrays: api == Gemini}
}

var bom = []byte("\xEF\xBB\xBF")

// SSE frames text/event-stream as the WHATWG standard reads it: lines end in CRLF, LF or CR;
// a blank line ends an event; a BOM may open the stream.
type SSE struct {
	Max int // bytes of one event, its lines included

	buf       []byte
	scan      int  // buf[:scan] has been read for line ends
	lineStart int  // start of the line being read
	bomDone   bool // the stream's start was checked for a BOM
	bomLen    int  // the BOM's length in the first event still pending
	err       error
	ev        Event
	data      []byte // joined data of multi-line events
}

func (s *SSE) Feed(p []byte, emit func(*Event) error) error {
	if s.err != nil {
		return s.err
	}
	s.buf = append(s.buf, p...)
	if !s.bomDone {
		if len(s.buf) < len(bom) && bytes.HasPrefix(bom, s.buf) {
			return nil // maybe a BOM still
		}
		s.bomDone = true
		if bytes.HasPrefix(s.buf, bom) {
			s.bomLen, s.scan, s.lineStart = len(bom), len(bom), len(bom)
		}
	}
	start := 0
	i := s.scan
	for {
		j := bytes.IndexAny(s.buf[i:], "\r\n")
		if j < 0 {
			i = len(s.buf)
			break
		}
		j += i
		next := j + 1
		if s.buf[j] == '\r' {
			if next == len(s.buf) {
				i = j // a CRLF may be split: wait for the next byte
				break
			}
			if s.buf[next] == '\n' {
				next++
			}
		}
		if j == s.lineStart { // a blank line: the event ends
			if err := s.dispatch(s.buf[start:next], false, emit); err != nil {
				return err
			}
			start = next
			s.bomLen = 0
		}
		s.lineStart, i = next, next
	}
	if len(s.buf)-start > s.Max {
		return s.fail(ErrEventTooLarge)
	}
	n := copy(s.buf, s.buf[start:])
	s.buf = s.buf[:n]
	s.scan, s.lineStart = i-start, s.lineStart-start
	return nil
}

func (s *SSE) Close(emit func(*Event) error) error {
	if s.err != nil {
		return s.err
	}
	if len(s.buf) > 0 {
		if !s.bomDone && bytes.HasPrefix(s.buf, bom) {
			s.bomLen = len(bom)
		}
		// A blank line ending in CR that waited for a LF ends the event all the same.
		n := len(s.buf)
		partial := !(s.buf[n-1] == '\r' && s.lineStart == n-1)
		if err := s.dispatch(s.buf, partial, emit); err != nil {
			return err
		}
	}
	s.buf = s.buf[:0]
	s.err = errClosed
	return nil
}

var errClosed = fmt.Errorf("llmresp: framer closed")

func (s *SSE) fail(err error) error {
	s.err = err
	return err
}

// dispatch parses the fields of one event's raw lines and emits it.
func (s *SSE) dispatch(raw []byte, partial bool, emit func(*Event) error) error {
	if len(raw) > s.Max {
		return s.fail(ErrEventTooLarge)
	}
	ev := &s.ev
	*ev = Event{Raw: raw, Partial: partial, segs: ev.segs[:0]}
	dataLen := 0
	for i := s.bomLen; i < len(raw); {
		j := bytes.IndexAny(raw[i:], "\r\n")
		end := len(raw)
		next := end
		if j >= 0 {
			end = i + j
			next = end + 1
			if raw[end] == '\r' && next < len(raw) && raw[next] == '\n' {
				next++
			}
		}
		line := raw[i:end]
		if len(line) > 0 && line[0] != ':' {
			field, vs := line, end
			if c := bytes.IndexByte(line, ':'); c >= 0 {
				field, vs = line[:c], i+c+1
				if vs < end && raw[vs] == ' ' {
					vs++
				}
			}
			switch string(field) {
			case "data":
				if len(ev.segs) > 0 {
					dataLen++ // the "\n" joining two data lines
				}
				ev.segs = append(ev.segs, seg{raw: vs, data: dataLen, n: end - vs})
				dataLen += end - vs
			case "event":
				ev.Name = string(raw[vs:end])
			}
		}
		i = next
	}
	switch len(ev.segs) {
	case 0:
	case 1:
		sg := ev.segs[0]
		ev.Data = raw[sg.raw : sg.raw+sg.n]
	default:
		s.data = s.data[:0]
		for k, sg := range ev.segs {
			if k > 0 {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, raw[sg.raw:sg.raw+sg.n]...)
		}
		ev.Data = s.data
	}
	if err := emit(ev); err != nil {
		return s.fail(err)
	}
	return nil
}

// NDJSON frames one JSON value a line, lines ending in "\n" (a "\r" before it is white space
// to JSON). A last line without "\n" is an event at Close.
type NDJSON struct {
	Max int

	buf  []byte
	scan int
	err  error
	ev   Event
}

func (s *NDJSON) Feed(p []byte, emit func(*Event) error) error {
	if s.err != nil {
		return s.err
	}
	s.buf = append(s.buf, p...)
	start := 0
	for {
		j := bytes.IndexByte(s.buf[s.scan:], '\n')
		if j < 0 {
			break
		}
		end := s.scan + j + 1
		if err := s.dispatch(s.buf[start:end], false, emit); err != nil {
			return err
		}
		start, s.scan = end, end
	}
	if len(s.buf)-start > s.Max {
		s.err = ErrEventTooLarge
		return s.err
	}
	n := copy(s.buf, s.buf[start:])
	s.buf = s.buf[:n]
	s.scan = n
	return nil
}

func (s *NDJSON) Close(emit func(*Event) error) error {
	if s.err != nil {
		return s.err
	}
	if len(s.buf) > 0 {
		if err := s.dispatch(s.buf, true, emit); err != nil {
			return err
		}
	}
	s.err = errClosed
	return nil
}

func (s *NDJSON) dispatch(raw []byte, partial bool, emit func(*Event) error) error {
	if len(raw) > s.Max {
		s.err = ErrEventTooLarge
		return s.err
	}
	s.ev = Event{Raw: raw, Partial: partial}
	a, b := trimWS(raw)
	if a < b {
		s.ev.Data, s.ev.dataOff = raw[a:b], a
	}
	if err := emit(&s.ev); err != nil {
		s.err = err
		return err
	}
	return nil
}

// trimWS returns the bounds of b without JSON white space at either end.
func trimWS(b []byte) (int, int) {
	a, z := 0, len(b)
	for a < z && isWS(b[a]) {
		a++
	}
	for z > a && isWS(b[z-1]) {
		z--
	}
	return a, z
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// JSONArray frames a JSON array streamed element by element, as Gemini's
// streamGenerateContent sends it without alt=sse: "[{...}\n,\r\n{...}\n]". Each element is an
// event whose Raw begins with the separators before it ("[" or ","); the closing "]" and what
// follows are an event without Data. Elements must be objects or arrays (Gemini sends
// objects); anything else is ErrBadFrame, and so is any byte out of the array's grammar. The
// elements' own JSON is checked later, by Pieces.
type JSONArray struct {
	Max int

	buf        []byte
	scan       int
	state      uint8 // see the constants below
	depth      int   // inside an element
	inStr, esc bool
	elem       int // start of the current element in buf
	err        error
	ev         Event
}

const (
	arrOpen  uint8 = iota // before "["
	arrFirst              // after "[": an element or "]"
	arrElem               // inside an element
	arrAfter              // after an element: "," or "]"
	arrNext               // after ",": an element
	arrEnd                // after "]": white space only
)

func (s *JSONArray) fail(err error) error {
	s.err = err
	return err
}

func (s *JSONArray) Feed(p []byte, emit func(*Event) error) error {
	if s.err != nil {
		return s.err
	}
	s.buf = append(s.buf, p...)
	start := 0
	b := s.buf
	for i := s.scan; i < len(b); i++ {
		c := b[i]
		if s.state == arrElem {
			switch {
			case s.inStr:
				if s.esc {
					s.esc = false
				} else if c == '\\' {
					s.esc = true
				} else if c == '"' {
					s.inStr = false
				}
				continue
			case c == '"':
				s.inStr = true
			case c == '{' || c == '[':
				s.depth++
			case c == '}' || c == ']':
				s.depth--
			}
			if s.depth == 0 {
				s.ev = Event{Raw: b[start : i+1], Data: b[s.elem : i+1], dataOff: s.elem - start}
				if i+1-start > s.Max {
					return s.fail(ErrEventTooLarge)
				}
				if err := emit(&s.ev); err != nil {
					return s.fail(err)
				}
				start, s.state = i+1, arrAfter
			}
			continue
		}
		if isWS(c) {
			continue
		}
		switch {
		case s.state == arrOpen && c == '[':
			s.state = arrFirst
		case (s.state == arrFirst || s.state == arrNext) && (c == '{' || c == '['):
			s.state, s.depth, s.elem = arrElem, 1, i
		case s.state == arrAfter && c == ',':
			s.state = arrNext
		case (s.state == arrFirst || s.state == arrAfter) && c == ']':
			s.state = arrEnd
		default:
			return s.fail(fmt.Errorf("%w: byte %q in a streamed JSON array", ErrBadFrame, c))
		}
	}
	if len(b)-start > s.Max {
		return s.fail(ErrEventTooLarge)
	}
	n := copy(s.buf, s.buf[start:])
	s.buf = s.buf[:n]
	s.scan = n
	s.elem -= start
	return nil
}

func (s *JSONArray) Close(emit func(*Event) error) error {
	if s.err != nil {
		return s.err
	}
	if s.state != arrEnd {
		return s.fail(fmt.Errorf("%w: the streamed JSON array is not closed", ErrBadFrame))
	}
	if len(s.buf) > 0 {
		s.ev = Event{Raw: s.buf}
		if err := emit(&s.ev); err != nil {
			return s.fail(err)
		}
	}
	s.err = errClosed
	return nil
}

// Whole buffers a whole JSON body (up to Max) and emits it at Close. With Arrays, a body that
// opens with "[" is streamed as a JSONArray instead.
type Whole struct {
	Max    int
	Arrays bool

	buf []byte
	arr *JSONArray
	err error
	ev  Event
}

func (w *Whole) Feed(p []byte, emit func(*Event) error) error {
	if w.err != nil {
		return w.err
	}
	if w.arr != nil {
		return w.arr.Feed(p, emit)
	}
	w.buf = append(w.buf, p...)
	if w.Arrays {
		if a, _ := trimWS(w.buf); a < len(w.buf) && w.buf[a] == '[' {
			w.arr = &JSONArray{Max: w.Max}
			buf := w.buf
			w.buf = nil
			return w.arr.Feed(buf, emit)
		}
	}
	if len(w.buf) > w.Max {
		w.err = ErrEventTooLarge
		return w.err
	}
	return nil
}

func (w *Whole) Close(emit func(*Event) error) error {
	if w.err != nil {
		return w.err
	}
	if w.arr != nil {
		return w.arr.Close(emit)
	}
	w.ev = Event{Raw: w.buf}
	a, b := trimWS(w.buf)
	if a < b {
		w.ev.Data, w.ev.dataOff = w.buf[a:b], a
	}
	w.err = errClosed
	if err := emit(&w.ev); err != nil {
		return err
	}
	return nil
}
