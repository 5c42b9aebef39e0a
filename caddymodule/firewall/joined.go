package firewall

import (
	"strings"
	"unicode/utf8"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/llmreq"
)

// The text parts of one message reach the model as one text, so a match
// may run across them ("Ignore all previous" in one part, " instructions"
// in the next). Each part is scanned on its own, and the parts of a
// message (llmreq.Text.Group) also joined: with nothing between them and
// with a newline, as chat templates join them, and with a space, for a
// split at a word's edge that a model reads across. A match of a
// joined text is cut at the parts' edges into one piece per part it
// touches, and sanitizing replaces each piece in its part.

// joinSeps are the separators the parts are joined with.
var joinSeps = [...]string{"", "\n", " "}

// piece is the part of a joined match that falls in one text.
type piece struct {
	index int          // in Request.Texts
	m     engine.Match // Start and End in the text's own units
}

// joinedIndex is the index of a flagged joined text: it is no JSON string
// of the body; its pieces are.
const joinedIndex = -1

// group is one message's text parts, by their indexes in Request.Texts.
type group []int

// groups returns the groups of texts whose role f scans, each in body
// order. Most requests have none.
func (f *Firewall) groups(req *llmreq.Request) []group {
	var gs []group
	var ids []int32 // the group id of each of gs
	for i := range req.Texts {
		t := &req.Texts[i]
		if t.Group == 0 || !f.scans(t.Role) {
			continue
		}
		k := len(ids) - 1
		for k >= 0 && ids[k] != t.Group {
			k--
		}
		if k < 0 {
			ids = append(ids, t.Group)
			gs = append(gs, nil)
			k = len(gs) - 1
		}
		gs[k] = append(gs[k], i)
	}
	return gs
}

// join returns the texts of g joined by sep.
func join(req *llmreq.Request, g group, sep string) string {
	n := len(sep) * (len(g) - 1)
	for _, i := range g {
		n += len(req.Texts[i].Value)
	}
	var b strings.Builder
	b.Grow(n)
	for k, i := range g {
		if k > 0 {
			b.WriteString(sep)
		}
		b.WriteString(req.Texts[i].Value)
	}
	return b.String()
}

// scanJoined scans each group joined, and adds what matched to o: the
// verdict and action, the rules, a flagged entry and the pieces of its
// matches.
func (f *Firewall) scanJoined(req *llmreq.Request, o *outcome, client uint64) {
	for _, g := range f.groups(req) {
		if len(g) < 2 {
			continue
		}
		for _, sep := range joinSeps {
			text := join(req, g, sep)
			res, hit := f.scanCached(text, client, o)
			if hit || len(res.Matches) == 0 {
				continue
			}
			first := &req.Texts[g[0]]
			f.record(o, flagged{index: joinedIndex, path: first.Path, role: first.Role, res: res})
			o.pieces = appendPieces(o.pieces, req, g, sep, res.Matches)
			o.joined = append(o.joined, g...)
		}
	}
}

// appendPieces cuts each match of the joined text of g at the parts' edges.
func appendPieces(ps []piece, req *llmreq.Request, g group, sep string, ms []engine.Match) []piece {
	sepUnits := units(sep)
	start := 0 // the part's first unit in the joined text
	for _, i := range g {
		n := units(req.Texts[i].Value)
		for _, m := range ms {
			s, e := max(m.Start, start), min(m.End, start+n)
			if s < e {
				m.Start, m.End = s-start, e-start
				ps = append(ps, piece{index: i, m: m})
			}
		}
		start += n + sepUnits
	}
	return ps
}

// units is the length of s in UTF-16 code units, as the engine counts
// positions: a character above U+FFFF is two, an invalid byte one.
func units(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			n++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// rescanJoined scans each group again as the sanitized copies repl make
// it, and reports whether a match in it still acts.
func (f *Firewall) rescanJoined(req *llmreq.Request, repl map[int]string) (string, bool) {
	for _, g := range f.groups(req) {
		if len(g) < 2 {
			continue
		}
		changed := false
		for _, i := range g {
			_, ok := repl[i]
			changed = changed || ok
		}
		if !changed {
			continue
		}
		for _, sep := range joinSeps {
			var b strings.Builder
			for k, i := range g {
				if k > 0 {
					b.WriteString(sep)
				}
				if s, ok := repl[i]; ok {
					b.WriteString(s)
				} else {
					b.WriteString(req.Texts[i].Value)
				}
			}
			if res := f.engine.ScanString(b.String()); f.policy.strongest(res.Matches) >= doSanitize {
				return req.Texts[g[0]].Path, true
			}
		}
	}
	return "", false
}
