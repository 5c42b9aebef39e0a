package llmreq

import (
	"strconv"
	"sync"

	"github.com/promptwall/promptwall/jsonstr"
)

// The scanner validates a body with exactly the grammar of encoding/json (RFC 8259: whitespace is
// space, tab, CR, LF; strings may hold any byte from 0x20 up, invalid UTF-8 included, which
// decoding turns into U+FFFD) and records every value in a flat "tape" of nodes. The API walkers
// navigate the tape by index, so a request costs one slice of small fixed-size nodes (reused
// through a pool) instead of a tree of maps and interfaces.

const (
	kindObject uint8 = iota + 1
	kindArray
	kindString
	kindNumber
	kindTrue
	kindFalse
	kindNull
)

// flagEscape marks a string literal holding a backslash escape; without one, decoding is a copy.
const flagEscape uint8 = 1

// highBytes, in a string node's b, marks a literal with a byte from 0x80 up: without one, its
// bytes need no UTF-8 check (the scan learned it on its way, jsonstr.PlainEscapes).
const highBytes uint32 = 1 << 31

// node is one JSON value in 8 bytes, so even a hostile body of tiny values (16 MiB of "1,")
// indexes in 4 bytes per body byte at most. An object's children are its members' key and value
// nodes, alternating; an array's children are its elements. The children of node i are
// i+1 .. next(i)-1.
//
//	a: kind (3 bits) | flags (1 bit) | offset of the value's first byte (28 bits)
//	b: a string: offset just past its closing quote (28 bits), and highBytes; an array or
//	   object: the index of the first node after its subtree; a number or literal: unused
type node struct{ a, b uint32 }

// maxBody is the largest body the 28-bit offsets can index.
const maxBody = 1<<28 - 1

func (n node) kind() uint8     { return uint8(n.a >> 29) }
func (n node) flags() uint8    { return uint8(n.a>>28) & 1 }
func (n node) start() int      { return int(n.a & maxBody) }
func (n node) end() int        { return int(n.b & maxBody) } // strings only
func (n node) ascii() bool     { return n.b&highBytes == 0 } // strings only
func (n node) escaped() bool   { return n.flags()&flagEscape != 0 }
func (n node) container() bool { return n.kind()-1 <= kindArray-1 } // kindSkip (0) wraps: false

type tape struct {
	nodes   []node
	strVals int // string values (not keys): a bound on the number of texts

	// Buffers of the walker, pooled with the tape (see walker).
	path, scratch, paths, values []byte
	spans                        []textSpan
	lits                         []litMarks     // the walker's, reused
	marks                        []jsonstr.Mark // the marks they hold
	texts                        []Text         // zeroed before pooling: no text outlives its request

	// ParseResumed's (resume.go): whether to record the message lists (in msgs), the ranges to
	// skip, the next one, and whether one was not where the scan expected it.
	record bool
	msgs   []message
	resume *Resume
	skips  []skip
	next   int
	void   bool
}

var tapePool = sync.Pool{New: func() any { return new(tape) }}

func getTape() *tape { return tapePool.Get().(*tape) }

// putTape returns t to the pool unless a huge body made it so large that keeping it would pin
// memory for the life of the process.
func putTape(t *tape) {
	if cap(t.nodes) > 1<<20 || cap(t.values) > 4<<20 || cap(t.paths) > 1<<20 || cap(t.spans) > 1<<16 || cap(t.texts) > 1<<16 || cap(t.msgs) > 1<<16 {
		return
	}
	t.nodes = t.nodes[:0]
	tapePool.Put(t)
}

var isHex = func() (a [256]bool) {
	for _, c := range "0123456789abcdefABCDEF" {
		a[c] = true
	}
	return a
}()

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func syntaxErr(off int, msg string) error {
	return &SyntaxError{Err: ErrInvalidJSON, Offset: off, Msg: msg}
}

func unexpected(b []byte, i int, context string) error {
	if i >= len(b) {
		return syntaxErr(i, "unexpected end of input "+context)
	}
	return syntaxErr(i, "invalid character "+quoteChar(b[i])+" "+context)
}

func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	if c >= 0x80 {
		s = `"\x` + strconv.FormatUint(uint64(c), 16) + `"`
	}
	return "'" + s[1:len(s)-1] + "'"
}

// scan validates b as one JSON value and fills t.nodes.
func (t *tape) scan(b []byte) error {
	t.nodes, t.strVals, t.next, t.void = t.nodes[:0], 0, 0, false
	if len(b) > maxBody {
		return &SyntaxError{Err: ErrTooLarge, Offset: maxBody, Msg: "body over 256 MiB"}
	}
	if cap(t.nodes) == 0 {
		// A typical request has a value every 20 bytes or so; growing from there is cheap.
		t.nodes = make([]node, 0, min(len(b)/16+16, 1<<16))
	}
	i, err := t.value(b, skipSpace(b, 0), 0)
	if err != nil {
		return err
	}
	if i = skipSpace(b, i); i != len(b) {
		return unexpected(b, i, "after top-level value")
	}
	return nil
}

func (t *tape) push(kind, flags uint8, start, b int) int {
	if len(t.nodes) == cap(t.nodes) {
		// Double, where append would grow a large slice by a quarter: a 16 MiB body of tiny
		// values then allocates twice its final tape, not five times.
		grown := make([]node, len(t.nodes), 2*cap(t.nodes)+64)
		copy(grown, t.nodes)
		t.nodes = grown
	}
	t.nodes = append(t.nodes, node{a: uint32(kind)<<29 | uint32(flags)<<28 | uint32(start), b: uint32(b)})
	return len(t.nodes) - 1
}

// closeContainer records where the subtree of container idx ends.
func (t *tape) closeContainer(idx int) { t.nodes[idx].b = uint32(len(t.nodes)) }

// value scans the value starting at b[i] and returns the offset just past it. depth counts the
// containers around it.
func (t *tape) value(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, unexpected(b, i, "looking for beginning of value")
	}
	switch c := b[i]; {
	case c == '"':
		t.strVals++
		return t.str(b, i)
	case c == '{':
		return t.object(b, i, depth+1)
	case c == '[':
		return t.array(b, i, depth+1)
	case c == '-' || (c >= '0' && c <= '9'):
		return t.number(b, i)
	case c == 't':
		return t.literal(b, i, "true", kindTrue)
	case c == 'f':
		return t.literal(b, i, "false", kindFalse)
	case c == 'n':
		return t.literal(b, i, "null", kindNull)
	}
	return i, unexpected(b, i, "looking for beginning of value")
}

func (t *tape) literal(b []byte, i int, word string, kind uint8) (int, error) {
	for k := 0; k < len(word); k++ {
		if i+k >= len(b) || b[i+k] != word[k] {
			return i + k, unexpected(b, i+k, "in literal "+word)
		}
	}
	t.push(kind, 0, i, 0)
	return i + len(word), nil
}

func tooDeep(off int) error {
	return &SyntaxError{Err: ErrTooDeep, Offset: off, Msg: "more than " + strconv.Itoa(MaxDepth) + " nested arrays and objects"}
}

func (t *tape) object(b []byte, i, depth int) (int, error) {
	if depth > MaxDepth {
		return i, tooDeep(i)
	}
	idx := t.push(kindObject, 0, i, 0)
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		t.closeContainer(idx)
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, unexpected(b, i, "looking for beginning of object key string")
		}
		var err error
		if i, err = t.str(b, i); err != nil {
			return i, err
		}
		if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
			return i, unexpected(b, i, "after object key")
		}
		if i, err = t.value(b, skipSpace(b, i+1), depth); err != nil {
			return i, err
		}
		if i = skipSpace(b, i); i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			t.closeContainer(idx)
			return i + 1, nil
		}
		return i, unexpected(b, i, "after object key:value pair")
	}
}

func (t *tape) array(b []byte, i, depth int) (int, error) {
	if depth > MaxDepth {
		return i, tooDeep(i)
	}
	idx := t.push(kindArray, 0, i, 0)
	list := i
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		t.closeContainer(idx)
		return i + 1, nil
	}
	resumable := depth == 2 && len(t.skips) > 0 // a root member's array
	for {
		var err error
		if resumable {
			i, _ = t.skipAt(list, i)
		}
		if i, err = t.value(b, i, depth); err != nil {
			return i, err
		}
		if i = skipSpace(b, i); i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == ']' {
			t.closeContainer(idx)
			return i + 1, nil
		}
		return i, unexpected(b, i, "after array element")
	}
}

// number accepts exactly -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?. The digits are kept as
// bytes; nothing converts them, so no precision is lost.
func (t *tape) number(b []byte, i int) (int, error) {
	start := i
	if b[i] == '-' {
		i++
	}
	digits := func() bool {
		s := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > s
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		digits()
	default:
		return i, unexpected(b, i, "in numeric literal")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return i, unexpected(b, i, "after decimal point in numeric literal")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return i, unexpected(b, i, "in exponent of numeric literal")
		}
	}
	t.push(kindNumber, 0, start, 0)
	return i, nil
}

// str scans the string literal starting at the quote b[i].
func (t *tape) str(b []byte, i int) (int, error) {
	start := i
	var flags uint8
	ascii := true
	i++
	for {
		var a, e bool
		i, a, e = jsonstr.PlainEscapes(b, i)
		ascii = ascii && a
		if e {
			flags |= flagEscape
		}
		if i >= len(b) {
			return i, syntaxErr(i, "unexpected end of input in string literal")
		}
		switch c := b[i]; {
		case c == '"':
			t.push(kindString, flags, start, i+1)
			if !ascii {
				t.nodes[len(t.nodes)-1].b |= highBytes
			}
			return i + 1, nil
		case c == '\\':
			flags |= flagEscape
			if i+1 >= len(b) {
				return i + 1, syntaxErr(i+1, "unexpected end of input in string escape code")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := 2; k < 6; k++ {
					if i+k >= len(b) || !isHex[b[i+k]] {
						return i + k, unexpected(b, i+k, `in \u hexadecimal character escape`)
					}
				}
				i += 6
			default:
				return i + 1, unexpected(b, i+1, "in string escape code")
			}
		default: // a control character
			return i, unexpected(b, i, "in string literal")
		}
	}
}
