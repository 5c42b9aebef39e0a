package jsonstr

import (
	"bytes"
	"sort"
)

// A Mark is a place where a literal and its value line up: the literal's
// first Raw bytes unquote to the value's first Value bytes. A caller that
// changes a few spans of a long value can then write the literal's own
// bytes around them (RawOffset) instead of encoding the whole value again.
type Mark struct {
	Raw, Value int
}

// markEvery is the most literal bytes UnquoteMarks leaves between two
// marks, but for an escape that crosses: RawOffset walks at most that far.
const markEvery = 16 << 10

// UnquoteMarks is Unquote for s, the bytes of a literal between its
// quotes, which must be valid UTF-8; it also appends to marks a Mark at
// the start and one at least every markEvery bytes of s.
func UnquoteMarks(dst, s []byte, marks []Mark) ([]byte, []Mark) {
	dst = unquote(dst, s, true, &marks)
	return dst, marks
}

// RawOffset returns the offset in s, a literal's bytes between its quotes,
// valid UTF-8, of the value's byte offset value, walking from the later of
// at (a place known to line up, such as the last RawOffset's: the zero
// Mark for none) and the last of marks (UnquoteMarks's for s) at or before
// value. It reports false when value is inside the value of an escape, or
// past the end, or before at.
func RawOffset(s []byte, marks []Mark, at Mark, value int) (int, bool) {
	if value < at.Value {
		return 0, false
	}
	i, v := at.Raw, at.Value
	if k := sort.Search(len(marks), func(k int) bool { return marks[k].Value > value }); k > 0 && marks[k-1].Value > v {
		i, v = marks[k-1].Raw, marks[k-1].Value
	}
	var scratch [utf8Max]byte
	var canonical bool
	for i <= len(s) {
		// Up to the next escape, the literal's bytes are the value's.
		run := bytes.IndexByte(s[i:], '\\')
		if run < 0 {
			run = len(s) - i
		}
		if value-v <= run {
			return i + value - v, true
		}
		i, v = i+run, v+run
		if i >= len(s) {
			break
		}
		next, out, ok := unescape(scratch[:0], s, i, false, &canonical)
		if !ok || v+len(out) > value {
			return 0, false
		}
		i, v = next, v+len(out)
	}
	return 0, false
}

// utf8Max is the longest value of one escape: a surrogate pair's character.
const utf8Max = 4
