package llmreq

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/promptwall/promptwall/jsonstr"
)

// Rewrite returns a new body in which Texts[i] is replaced by repl[i] for every i in repl, encoded
// as a JSON string; every other byte of the original body is kept exactly. With an empty repl it
// returns the original bytes unchanged.
//
// A file text (MediaType set) is re-encoded the way its file came: the same data URL prefix,
// base64 of the same alphabet and padding (or percent-encoding), the same charset (a character
// ISO-8859-1 or windows-1252 lacks becomes '?').
//
// Indexes outside Texts are ignored. A replacement equal to the text's Value keeps the original
// literal (its escapes included), so a caller may pass every text, changed or not, and only the
// changed ones are re-encoded. (A literal holding invalid UTF-8 is re-encoded all the same: the
// upstream then gets the U+FFFD that was scanned, not bytes a lax decoder might read as something
// else, such as an overlong '/'.)
func (r *Request) Rewrite(repl map[int]string) []byte {
	if len(repl) == 0 {
		return r.body
	}
	return r.AppendRewrite(nil, repl, nil)
}

// AppendRewrite appends Rewrite's body to dst and returns it (with an empty repl, a copy of the
// original bytes): a caller that sends many rewritten bodies can reuse its buffers.
//
// edits (nil: none) may say how repl[i] is made from Texts[i].Value: a text's literal then keeps
// its own bytes, escapes included, and only the edited spans are written anew, when the edits do
// make repl[i], fall on characters the literal writes as themselves or between escapes, and the
// literal is valid UTF-8 and MinEdited bytes or more; otherwise the literal is written whole, as
// without edits. A 256 KiB text with a few spans sanitized is then not encoded again.
func (r *Request) AppendRewrite(dst []byte, repl map[int]string, edits map[int][]Edit) []byte {
	todo, size := r.splices(repl, edits)
	out := slices.Grow(dst, max(size+size/16, len(r.body)))
	prev := 0
	for _, p := range r.pieces(todo) {
		out = append(out, r.body[prev:p.start]...)
		out = r.appendPiece(out, p)
		prev = p.end
	}
	return append(out, r.body[prev:]...)
}

// An Edit is one change of a text: the bytes [From, To) of its Value replaced by With.
type Edit struct {
	From, To int
	With     string
}

// A Splice is one span of the body that Rewrite replaces: Rewrite's body is the original's
// bytes with each Splice's [Start, End) replaced by its bytes.
type Splice struct {
	Start, End int // a literal's bytes, quotes included, or an edited span inside one
	// The new bytes are lits[LitStart:LitEnd] of the AppendSplices that returned it.
	LitStart, LitEnd int
}

// AppendSplices appends to dst the new bytes of AppendRewrite's body, and returns them with the
// Splices that place them, in body order: a caller can send the body as the original's bytes
// between them, without a copy of the whole.
func (r *Request) AppendSplices(dst []byte, repl map[int]string, edits map[int][]Edit) (lits []byte, splices []Splice) {
	todo, _ := r.splices(repl, edits)
	ps := r.pieces(todo)
	splices = make([]Splice, len(ps))
	for k, p := range ps {
		from := len(dst)
		dst = r.appendPiece(dst, p)
		splices[k] = Splice{Start: p.start, End: p.end, LitStart: from, LitEnd: len(dst)}
	}
	return dst, splices
}

// A piece is one span of the body a rewrite replaces and what replaces it: an edit's With where
// the literal keeps its own bytes (editPieces), else sp's whole new literal.
type piece struct {
	start, end int
	with       string
	sp         *splice // nil for an edit
}

// pieces returns the pieces of todo, in body order.
func (r *Request) pieces(todo []splice) []piece {
	ps := make([]piece, 0, len(todo))
	for k := range todo {
		var ok bool
		if ps, ok = r.editPieces(ps, &todo[k]); !ok {
			ps = append(ps, piece{start: todo[k].start, end: todo[k].end, sp: &todo[k]})
		}
	}
	return ps
}

// appendPiece appends p's new bytes to dst.
func (r *Request) appendPiece(dst []byte, p piece) []byte {
	if p.sp != nil {
		return r.appendLiteral(dst, *p.sp)
	}
	return appendUnquoted(dst, p.with)
}

type splice struct {
	start, end, i int
	s             string
	eds           []Edit
}

// splices returns the literals repl replaces, in body order, one per literal, and the size
// of the rewritten body.
func (r *Request) splices(repl map[int]string, edits map[int][]Edit) ([]splice, int) {
	todo := make([]splice, 0, len(repl))
	size := len(r.body)
	for i, s := range repl {
		if i < 0 || i >= len(r.Texts) {
			continue
		}
		t := &r.Texts[i]
		start, end := int(t.start), int(t.end)
		if end-start < 2 || end > len(r.body) || r.unchanged(t, s) {
			continue // not a text of this body (a caller-made Text), or nothing to do
		}
		todo = append(todo, splice{start, end, i, s, edits[i]})
		size += len(s) + 2 - (end - start)
	}
	// Splice in body order, whatever order the caller left Texts in; of two entries for one
	// literal, the lower index wins.
	slices.SortFunc(todo, func(a, b splice) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return a.i - b.i
	})
	kept, prev := todo[:0], 0
	for _, sp := range todo {
		if sp.start < prev {
			continue // the same literal again (the caller repeated a Text)
		}
		kept = append(kept, sp)
		prev = sp.end
	}
	return kept, size
}

// appendLiteral appends sp's new literal.
func (r *Request) appendLiteral(out []byte, sp splice) []byte {
	if t := &r.Texts[sp.i]; t.enc != 0 {
		orig := jsonstr.Unquote(nil, r.body[t.start+1:t.end-1])
		return jsonstr.Append(out, encodeFile(orig, t.enc, sp.s), false)
	}
	return jsonstr.Append(out, sp.s, false)
}

// unchanged reports whether replacement s of text t can keep the original literal.
func (r *Request) unchanged(t *Text, s string) bool {
	if t.enc != 0 {
		return s == t.Value && t.enc&encLossy == 0
	}
	return s == t.Value && jsonstr.ValidUTF8(r.body[t.start:t.end])
}

// litMarks says where the marks of the long literal at start are (jsonstr.UnquoteMarks):
// Request.marks[m0:m1]; or plain: it has no escape and is valid UTF-8, its bytes its value's.
type litMarks struct {
	start  int32
	plain  bool
	m0, m1 int32
}

// MinEdited is the shortest literal, in bytes, that AppendRewrite keeps around its edits, and
// whose marks a parse keeps: a shorter one is cheap to write whole, and a caller need not find
// its edits.
const MinEdited = 16 << 10

// keptMarks returns a parse's long literals, by start, and their marks, in two allocations
// (none without long literals): the walker's are the tape's, which goes back to its pool.
func keptMarks(lits []litMarks, marks []jsonstr.Mark) ([]litMarks, []jsonstr.Mark) {
	if len(lits) == 0 {
		return nil, nil
	}
	lits = slices.Clone(lits)
	slices.SortStableFunc(lits, func(a, b litMarks) int { return int(a.start - b.start) })
	return slices.CompactFunc(lits, func(a, b litMarks) bool { return a.start == b.start }), slices.Clone(marks)
}

// editPieces appends to dst the pieces of sp's edits, and reports whether they make sp's
// replacement from the text's own literal (see AppendRewrite); dst is as it was when not.
func (r *Request) editPieces(dst []piece, sp *splice) ([]piece, bool) {
	// Only a long literal (one with a record): a short one is cheap to write whole.
	t := &r.Texts[sp.i]
	k, ok := slices.BinarySearchFunc(r.lits, int32(sp.start), func(m litMarks, s int32) int { return int(m.start - s) })
	if !ok || len(sp.eds) == 0 || t.enc != 0 || !editsMake(t.Value, sp.eds, sp.s) {
		return dst, false
	}
	lm := &r.lits[k]
	lit, ms := r.body[sp.start+1:sp.end-1], r.marks[lm.m0:lm.m1]
	var at jsonstr.Mark // where the last offset was found: the edits are in order
	place := func(value int) (int, bool) {
		if lm.plain {
			return value, true
		}
		raw, ok := jsonstr.RawOffset(lit, ms, at, value)
		at = jsonstr.Mark{Raw: raw, Value: value}
		return raw, ok
	}
	n := len(dst)
	for _, ed := range sp.eds {
		from, ok1 := place(ed.From)
		to, ok2 := place(ed.To)
		if !ok1 || !ok2 {
			return dst[:n], false
		}
		dst = append(dst, piece{start: sp.start + 1 + from, end: sp.start + 1 + to, with: ed.With})
	}
	return dst, true
}

// editsMake reports whether eds, in order, between characters of v, make s of v. Each must
// write something: an empty one could join the halves of a surrogate pair, \ud83d and \ude00,
// that the value reads as two U+FFFD.
func editsMake(v string, eds []Edit, s string) bool {
	prev, at := 0, 0
	for _, ed := range eds {
		if ed.From < prev || ed.To < ed.From || ed.To > len(v) || ed.With == "" || !charStart(v, ed.From) || !charStart(v, ed.To) {
			return false
		}
		seg := v[prev:ed.From]
		if !strings.HasPrefix(s[at:], seg) || !strings.HasPrefix(s[at+len(seg):], ed.With) {
			return false
		}
		at += len(seg) + len(ed.With)
		prev = ed.To
	}
	return s[at:] == v[prev:]
}

// charStart reports whether offset i of s is the start of a character or s's end.
func charStart(s string, i int) bool { return i == len(s) || utf8.RuneStart(s[i]) }

// appendUnquoted appends s encoded as in a JSON string literal, without the quotes.
func appendUnquoted(dst []byte, s string) []byte {
	at := len(dst)
	dst = jsonstr.Append(dst, s, false)
	n := copy(dst[at:], dst[at+1:len(dst)-1])
	return dst[:at+n]
}
