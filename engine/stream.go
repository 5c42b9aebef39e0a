package engine

import (
	"unicode/utf8"

	"github.com/promptwall/promptwall/rulebook"
)

// DefaultStreamCap is how many bytes a Stream holds back at most before
// it releases anyway (see Stream.CapReached).
const DefaultStreamCap = 64 << 10

// A Stream scans one text fed in chunks, with the result Scan gives for
// the whole text: it reports each match once it is final and releases the
// sanitized copy as soon as nothing still held back could change it. A
// Stream is for one goroutine at a time; streams of one Engine may run
// concurrently.
//
// # Exactness
//
// The stream keeps a window: the text from a cut to the end so far, and
// rescans it (with one pad unit before it, see below) as text arrives. A
// cut is a position c such that the unit before it, u = text[c-1], is:
//
//   - a unit no view treats specially: not an ASCII word character (so
//     `\b` at c reads the same with the pad before c), not a leetspeak
//     character, '%', a hex digit, a base64 character or '=' (so no
//     escape, no base64 run and no token holds u, and every view has u
//     itself before c), and not a high surrogate;
//   - inside no match of any rule in any view, dropped ones included
//     (scanState.cover): leftmost-first iteration then reaches c with no
//     match open, and resumes the search at c or before, where nothing
//     starts until c.
//
// Matches from c on are then those of the window scanned alone: the pad
// unit replaces u and can start no match (it is in no rule's first set,
// so `^`, true at the window's start, is never used), and matches and the
// sanitizer's groups on either side of u neither overlap nor touch.
//
// A cut may only be taken where everything before it is final: the
// window's matches starting before the hold point H (below) are those of
// every longer text. For each rule the analysis of its pattern (Node tree)
// gives C, the units it can match at all, U, the units its unbounded
// repetitions can match, and B, the most units the rest of it can match.
// A match attempt at s that is still alive at the end n of the text so
// far reads a prefix of a match (plus the one unit `\b` looks at after
// it): that holds no unit outside C before its last, and at most B+1
// units outside U. So once text[s:n-1] holds a unit outside C, or
// text[s:n] B+2 units outside U, the attempt at s has ended and its
// outcome is final. A unit counts only where the views agree on it: a
// leetspeak character only if its folded letter does too, and a unit of
// a %XX escape (or of the last three units, which may still become one)
// never, since the percent view decodes it into something else.
//
// Of the attempts left open, a rule whose matches all begin with one of
// its prefixes (compiled.rules' prefixes, where the scan's candidates come
// from) holds only from the first place that can read as one of them, as
// it is or folded (an escape, or the end, may read as anything), or from
// 0 for a rule that may begin at the text's start; in prose that is a
// few bytes. A base64 run that may still go on (it reaches the end, or is
// followed by fewer than two '=') holds from its first unit: its token is
// decoded and scanned whole. H is the least place held, over all rules
// and runs. A rulebook with a rule without such bounds (a look-around,
// `$`, a pattern that matches the empty string) holds everything, up to
// the cap.
//
// Matches reported and bytes released are those before the last cut: a
// cut is never inside a match or a group, so a group's category is final
// when it is released. For the v1 rulebook, on the chat corpus's
// assistant messages streamed in 20-byte chunks, the held bytes after a
// chunk are 6 at the median and 111 at p99 (BenchmarkStream); a long
// base64 run, URL (EX-3's value is unbounded) or run of white space
// after a newline or '<' (RH-1, RH-2) holds until it ends.
//
// # The cap
//
// When more than the cap (DefaultStreamCap unless SetCap) is held, the
// stream commits everything it has scanned as it is (a match still
// growing is cut there) and CapReached reports true from then on: the
// result is exact only while CapReached is false.
//
// # Time
//
// Each Write rescans the window (and walks back over it for the hold
// point) only when it is at most 1 KiB or the text not yet scanned is an
// eighth of it: a window above 1 KiB is rescanned at most about nine
// times per byte in all, one of at most 1 KiB costs at most 1 KiB per
// Write, and the cap bounds the window, so the time stays linear in the
// text.
type Stream struct {
	e  *Engine
	si *streamInfo
	// buf is the window's bytes, after the pad unit from the first cut
	// on (off is 1 then; the text's own start needs no pad: `^` is true
	// there); at is the unit position of buf[off] in the whole text.
	buf     []byte
	off     int
	at      int
	atByte  int // the byte offset of buf[off] in the whole text
	scanned int // len(buf) at the last scan
	cap     int
	capHit  bool
	closed  bool

	matches []Match // every final match
	newFrom int     // matches[newFrom:] not yet returned by Final
	ready   []byte  // released sanitized bytes not yet taken by Ready
	repl    []Replacement
	replNew int    // repl[replNew:] not yet returned by Replacements
	spare   []byte // the buffer Ready returned last
	verdict Verdict
	counts  map[string]int
	cov     []int32 // scratch: coverage counts
	count   [64]int // scratch: holdPoint's counts per group
	settle  [64]int // and where each group settled
}

// NewStream starts scanning a text fed in chunks.
func (e *Engine) NewStream() *Stream {
	e.streamOnce.Do(func() { e.stream = streamInfoOf(e) })
	return &Stream{e: e, si: e.stream, cap: DefaultStreamCap}
}

// SetCap sets how many bytes the stream may hold back before it releases
// anyway (CapReached); n <= 0 means DefaultStreamCap.
func (s *Stream) SetCap(n int) {
	if n <= 0 {
		n = DefaultStreamCap
	}
	s.cap = n
}

// Write feeds the next bytes of the text. Chunks may split a UTF-8
// sequence, an escape or a base64 run anywhere. After it, Final, Ready
// and Replacements give what became final. Write after Close panics.
func (s *Stream) Write(chunk []byte) {
	if s.closed {
		panic("engine: Write after Close")
	}
	s.buf = append(s.buf, chunk...)
	pending := len(s.buf) - s.scanned
	if pending == 0 {
		return
	}
	if len(s.buf) <= 1<<10 || pending*8 >= len(s.buf) || len(s.buf)-s.off > s.cap {
		s.step()
	}
}

// Final returns the matches that became final since the last call, in the
// order of Result.Matches, at UTF-16 positions of the whole text.
func (s *Stream) Final() []Match {
	out := s.matches[s.newFrom:]
	s.newFrom = len(s.matches)
	return out
}

// Ready returns the sanitized bytes released since the last call: the
// concatenation of every Ready and Close's Sanitized is Scan's Sanitized.
// The slice is valid until the next call of Ready or Close.
func (s *Stream) Ready() []byte {
	out := s.ready
	s.ready, s.spare = s.spare[:0], out
	return out
}

// A Replacement is one group of the sanitized copy (docs/SPEC.md section
// 6): the bytes [Start, End) of the text are replaced by
// "[removed: <Category>]". A caller that forwards the text in pieces of
// its own (the events of a response) rewrites each piece from these.
type Replacement struct {
	Start, End int // byte offsets in the whole text
	Category   string
}

// Replacements returns the groups released since the last call, in order;
// every byte before Released that none of them covers is kept as it is.
func (s *Stream) Replacements() []Replacement {
	out := s.repl[s.replNew:]
	s.replNew = len(s.repl)
	return out
}

// Released returns how many bytes of the text are final: Ready has given
// their sanitized copy, and Replacements every group among them.
func (s *Stream) Released() int { return s.atByte }

// Held returns how many bytes of the text are held back (not released).
func (s *Stream) Held() int { return len(s.buf) - s.off }

// CapReached reports whether the stream ever held more than its cap and
// released anyway; the result is exact only while it is false.
func (s *Stream) CapReached() bool { return s.capHit }

// Close ends the text and returns the whole result: the verdict, every
// match and the category counts, as Scan gives them, with Sanitized the
// part of the sanitized copy not yet taken by Ready. Final still returns
// the matches Close made final.
func (s *Stream) Close() Result {
	if !s.closed {
		s.closed = true
		s.step()
	}
	res := Result{Verdict: Safe, Sanitized: s.Ready()}
	if len(s.matches) > 0 {
		res.Verdict, res.Matches, res.CategoryCounts = s.verdict, s.matches, s.counts
	}
	return res
}

// step rescans the window, commits what is final and moves the cut.
func (s *Stream) step() {
	lim := len(s.buf)
	if !s.closed {
		lim = completeUTF8(s.buf)
	}
	s.scanned = len(s.buf)
	e := s.e
	st := e.pool.Get().(*scanState)
	st.spans, st.cover, st.keepCover = st.spans[:0], st.cover[:0], true
	decodeText(s.buf[:lim], &st.t)
	e.collect(st)
	st.keepCover = false
	t := &st.t
	n := t.len()
	cut := 0 // in window units; 0: no cut
	switch {
	case s.closed:
		cut = n
	default:
		cut = s.findCut(st, n)
		if cut == 0 && len(s.buf)-s.off > s.cap {
			cut, s.capHit = n, true
		}
	}
	if cut > s.off {
		s.commit(st, cut)
	}
	e.release(st)
}

// findCut returns the last cut at or before the hold point, or 0.
func (s *Stream) findCut(st *scanState, n int) int {
	if !s.si.ok {
		return 0
	}
	t := &st.t
	h := s.holdPoint(t, n)
	if h <= s.off {
		return 0
	}
	// Coverage of the units before h by the matches of every view.
	cov := grow(s.cov, h+1)
	clear(cov)
	for _, sp := range st.cover {
		if int(sp.start) < h {
			cov[sp.start]++
			cov[min(int(sp.end), h)]--
		}
	}
	s.cov = cov
	last, run := 0, int32(0)
	for i := 0; i < h; i++ {
		run += cov[i]
		if run == 0 && i >= s.off && cutUnit(t.at(i)) {
			last = i + 1
		}
	}
	return last
}

// cutUnit reports whether a cut may follow unit u (see Stream).
func cutUnit(u uint16) bool {
	if u >= 128 {
		return u < 0xD800 || u > 0xDBFF
	}
	if u == '%' || u == '=' || unitFlags[u]&(fLeet|fB64) != 0 {
		return false
	}
	return !(u >= 'a' && u <= 'z' || u >= 'A' && u <= 'Z' || u >= '0' && u <= '9' || u == '_')
}

// commit reports the window's matches before cut and releases its
// sanitized bytes before cut, then drops them from the window.
func (s *Stream) commit(st *scanState, cut int) {
	e := s.e
	t := &st.t
	res := e.finish(st)
	first := len(s.matches)
	for _, m := range res.Matches {
		if m.Start >= cut {
			break // sorted by start
		}
		m.Start += s.at - s.off
		m.End += s.at - s.off
		s.matches = append(s.matches, m)
		if s.counts == nil {
			s.counts = map[string]int{}
			s.verdict = Suspicious
		}
		s.counts[m.Category]++
		if m.Severity == rulebook.Malicious {
			s.verdict = Malicious
		}
	}
	// The sanitized bytes of units 1..cut (groups as in sanitize).
	ms := s.matches[first:]
	cur := textCursor{t: t}
	last := cur.byteAt(s.off)
	for i := 0; i < len(ms); {
		gs, ge := ms[i].Start, ms[i].End
		best := ms[i]
		j := i + 1
		for ; j < len(ms) && ms[j].Start <= ge; j++ {
			ge = max(ge, ms[j].End)
			if s.outranks(ms[j], best) {
				best = ms[j]
			}
		}
		bs, be := cur.byteAt(gs-s.at+s.off), cur.byteAt(ge-s.at+s.off)
		s.repl = append(s.repl, Replacement{Start: s.atByte + bs - s.off, End: s.atByte + be - s.off, Category: best.Category})
		s.ready = append(s.ready, t.raw[last:bs]...)
		s.ready = append(s.ready, "[removed: "...)
		s.ready = append(s.ready, best.Category...)
		s.ready = append(s.ready, ']')
		last = be
		i = j
	}
	bc := cur.byteAt(cut)
	s.ready = append(s.ready, t.raw[last:bc]...)
	s.at += cut - s.off
	s.atByte += bc - s.off
	if s.off == 0 {
		s.buf = append([]byte{s.si.pad}, s.buf[bc:]...)
	} else {
		s.buf = append(s.buf[:1], s.buf[bc:]...)
	}
	s.scanned -= bc - 1
	s.off = 1
}

// outranks is engine.outranks for matches.
func (s *Stream) outranks(a, b Match) bool {
	sa, sb := a.Severity.Rank(), b.Severity.Rank()
	if sa != sb {
		return sa > sb
	}
	if la, lb := a.End-a.Start, b.End-b.Start; la != lb {
		return la > lb
	}
	return s.si.rank[a.Rule] < s.si.rank[b.Rule]
}

// completeUTF8 returns the length of buf without a last UTF-8 sequence
// that more bytes could still complete.
func completeUTF8(buf []byte) int {
	n := len(buf)
	for i := n - 1; i >= 0 && i >= n-3; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				return i
			}
			return n
		}
	}
	return n
}
