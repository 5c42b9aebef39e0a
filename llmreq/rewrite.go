package llmreq

import (
	"slices"

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
	return r.AppendRewrite(nil, repl)
}

// AppendRewrite appends Rewrite's body to dst and returns it (with an empty repl, a copy of the
// original bytes): a caller that sends many rewritten bodies can reuse its buffers.
func (r *Request) AppendRewrite(dst []byte, repl map[int]string) []byte {
	todo, size := r.splices(repl)
	out := slices.Grow(dst, max(size+size/16, len(r.body)))
	prev := 0
	for _, sp := range todo {
		out = append(out, r.body[prev:sp.start]...)
		out = r.appendLiteral(out, sp)
		prev = sp.end
	}
	return append(out, r.body[prev:]...)
}

// A Splice is one string literal of the body that Rewrite replaces: Rewrite's body is the
// original's bytes with each Splice's [Start, End) replaced by its literal.
type Splice struct {
	Start, End int // the original literal's bytes, quotes included
	// The new literal, quotes included, is lits[LitStart:LitEnd] of the AppendSplices that
	// returned it.
	LitStart, LitEnd int
}

// AppendSplices appends to dst the new literals of Rewrite's body, and returns them with the
// Splices that place them, in body order: a caller can send the body as the original's bytes
// between them, without a copy of the whole.
func (r *Request) AppendSplices(dst []byte, repl map[int]string) (lits []byte, splices []Splice) {
	todo, _ := r.splices(repl)
	splices = make([]Splice, len(todo))
	for k, sp := range todo {
		from := len(dst)
		dst = r.appendLiteral(dst, sp)
		splices[k] = Splice{Start: sp.start, End: sp.end, LitStart: from, LitEnd: len(dst)}
	}
	return dst, splices
}

type splice struct {
	start, end, i int
	s             string
}

// splices returns the literals repl replaces, in body order, one per literal, and the size
// of the rewritten body.
func (r *Request) splices(repl map[int]string) ([]splice, int) {
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
		todo = append(todo, splice{start, end, i, s})
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
