package engine

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"

	"github.com/promptwall/promptwall/rulebook/jsregex"
)

// View bits, in the order of docs/SPEC.md section 3.
const (
	vOriginal = 1 << iota
	vLeet
	vPercent
	vBase64
)

var viewNames = [4]string{ViewOriginal, ViewLeet, ViewPercent, ViewBase64}

// Per-ASCII-unit facts that decide which views can report. classifyVBMI
// (classify_amd64.s) tests these bits by their values.
const (
	fLeet = 1 << iota // one of 0 1 3 4 5 7 @ $
	fB64              // [A-Za-z0-9+/_-]
	fPct              // '%'
)

var (
	// unitFlags is zero from 128 up: no flag is a non-ASCII unit's. Its
	// first 128 bytes are classifyVBMI's table.
	unitFlags [256]uint8
	leetTo    [128]byte
)

func init() {
	for i, c := range "013457@$" {
		unitFlags[c] |= fLeet
		leetTo[c] = "oieastas"[i]
	}
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-" {
		unitFlags[c] |= fB64
	}
	unitFlags['%'] |= fPct
}

// scanState is one scan's working memory (one level of base64 nesting).
type scanState struct {
	t     text
	enc   []byte
	enc2  []byte
	pct   pctView
	m     *matcher
	spans []span
	// With keepCover, cover gets every match of the original, leetspeak
	// and percent views before their filters, at original positions: a
	// dropped match still used up its text, and the stream (stream.go)
	// may only cut where none lies.
	keepCover bool
	cover     []span
	// With keepEdits, finish lists the groups of the sanitized copy in
	// edits (ScanCover).
	keepEdits bool
	edits     []edit
}

// collect runs every view of t and appends the reported spans to st.spans.
func (e *Engine) collect(st *scanState) {
	c := e.c
	t := &st.t
	n := t.len()
	emit := func(view uint8, rule, s, end int) {
		st.spans = append(st.spans, span{rule: int32(rule), start: int32(s), end: int32(end), views: view})
	}
	unitsOf := func(dst []rune) []rune {
		t.widen()
		for i := 0; i < n; i++ {
			dst = append(dst, rune(jsregex.Canonicalize(t.at(i))))
		}
		return dst
	}

	// The original view. An ASCII text is read as it is (the automata and
	// DFAs map its bytes); an encoded copy is only made for a rule that
	// Go's regexp must run over the whole text.
	var held byteSet // none for an ASCII text
	orig := view{src: t.raw, kind: viewASCII, buf: &st.enc, held: &held}
	if !t.ascii {
		st.enc = c.encodeRaw(st.enc, t, &held)
		orig = view{src: st.enc, held: &held}
	}
	orig.keepTries = len(t.leet) > 0
	c.findLiterals(&orig, st.m)
	c.matchView(orig, unitsOf, st.m, func(rule, s, end int) {
		if st.keepCover {
			st.cover = append(st.cover, span{rule: int32(rule), start: int32(s), end: int32(end)})
		}
		emit(vOriginal, rule, s, end)
	})

	if len(t.leet) > 0 {
		st.m.keepCandidates(c)
		v := view{src: t.raw, kind: viewLeet, buf: &st.enc2, leet: t.leet, held: &held}
		if !t.ascii {
			// The encoded original with its leetspeak characters folded: the
			// two differ only there, and the original view is done with its
			// bytes, so they are folded in place (a copy was a pass over the
			// text of its own).
			enc := st.enc[:n]
			for j, i := range t.leet {
				enc[i] = c.asciiLeet[t.raw[t.leetAt[j]]]
			}
			v = view{src: enc, leet: t.leet, held: &held} // the folds are ASCII
		}
		c.findLiteralsNear(&v, st.m)
		leetUnits := func(dst []rune) []rune {
			t.widen()
			for i := 0; i < n; i++ {
				u := t.at(i)
				if isLeet(u) {
					u = uint16(leetTo[u])
				}
				dst = append(dst, rune(jsregex.Canonicalize(u)))
			}
			return dst
		}
		c.matchView(v, leetUnits, st.m, func(rule, s, end int) {
			if st.keepCover {
				st.cover = append(st.cover, span{rule: int32(rule), start: int32(s), end: int32(end)})
			}
			// The view reports only matches that hold a leetspeak character.
			if k, _ := slices.BinarySearch(t.leet, int32(s)); k < len(t.leet) && int(t.leet[k]) < end {
				emit(vLeet, rule, s, end)
			}
		})
	}

	if !t.noPct && st.pct.build(t) {
		p := &st.pct
		var pctHeld byteSet
		st.enc2 = c.encodeUnits(st.enc2, p.units, &pctHeld)
		enc2 := st.enc2
		pctUnits := func(dst []rune) []rune {
			for _, u := range p.units {
				dst = append(dst, rune(jsregex.Canonicalize(u)))
			}
			return dst
		}
		pv := view{src: enc2, held: &pctHeld}
		c.findLiterals(&pv, st.m)
		c.matchView(pv, pctUnits, st.m, func(rule, s, end int) {
			if st.keepCover && end > s {
				st.cover = append(st.cover, span{rule: int32(rule), start: p.from[s], end: p.to[end-1]})
			}
			if end > s && p.escBefore[end]-p.escBefore[s] > 0 {
				emit(vPercent, rule, int(p.from[s]), int(p.to[end-1]))
			}
		})
	}

	e.base64View(st, emit)
}

// encodeUnits returns the alphabet bytes of units, in dst's storage, and
// adds to held the bytes its units from 128 up read as: a rule whose
// prefixes all need one it lacks cannot match (rule.mayOccur; OB-1's
// memchr for invisible characters was a tenth of a long text's scan with
// one em dash in it).
func (c *compiled) encodeUnits(dst []byte, units []uint16, held *byteSet) []byte {
	dst = grow(dst, len(units))
	if c.alphabet == nil {
		clear(dst)
		*held = byteSet{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)} // nothing known
		return dst
	}
	tab, out := &c.alphabet.Byte, dst
	for len(units) >= 32 {
		// The ASCII stretches with a vector kernel where there is one, the
		// next 32 units (which hold a non-ASCII one) with the table, or
		// the next 256 after a stretch of none (a text in another script
		// would otherwise pay a call every 32 units).
		n := encodeASCII(out, units, &c.ascii, &c.asciiNib)
		out, units = out[n:], units[n:]
		m := min(32, len(units))
		if n == 0 {
			m = min(256, len(units))
		}
		encodeHolding(out[:m], units[:m], tab, held)
		out, units = out[m:], units[m:]
	}
	encodeHolding(out, units, tab, held)
	return dst
}

// encodeRaw is encodeUnits for the units of t, which is not ASCII, read
// from its bytes: its units need not be made.
func (c *compiled) encodeRaw(dst []byte, t *text, held *byteSet) []byte {
	dst = grow(dst, t.n)
	if c.alphabet == nil {
		clear(dst)
		*held = byteSet{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)} // nothing known
		return dst
	}
	raw, tab, asc := t.raw, &c.alphabet.Byte, &c.ascii
	k := 0
	for i := 0; i < len(raw); {
		// The ASCII blocks with a vector kernel where there is one, the
		// next 32 bytes (which hold a non-ASCII one) below, or the next
		// 256 after a stretch of none (a text in another script would
		// otherwise pay a call every 32 bytes).
		n := encodeASCIIBytes(dst[k:], raw[i:], &c.asciiNib)
		i, k = i+n, k+n
		stop := min(i+32, len(raw))
		if n == 0 {
			stop = min(i+256, len(raw))
		}
		for i < stop {
			if i+8 <= len(raw) {
				if w := binary.LittleEndian.Uint64(raw[i:]); w&0x8080808080808080 == 0 {
					d, r := dst[k:k+8:k+8], raw[i:i+8:i+8]
					d[0], d[1], d[2], d[3] = asc[r[0]], asc[r[1]], asc[r[2]], asc[r[3]]
					d[4], d[5], d[6], d[7] = asc[r[4]], asc[r[5]], asc[r[6]], asc[r[7]]
					i, k = i+8, k+8
					continue
				}
			}
			if b := raw[i]; b < utf8.RuneSelf {
				dst[k] = asc[b]
				i, k = i+1, k+1
				continue
			}
			r, size := utf8.DecodeRune(raw[i:])
			if r >= 0x10000 {
				u, v := surrogates(r)
				hi, lo := tab[u], tab[v]
				dst[k], dst[k+1] = hi, lo
				held.add(int(hi))
				held.add(int(lo))
				k += 2
			} else {
				dst[k] = tab[r]
				held.add(int(dst[k]))
				k++
			}
			i += size
		}
	}
	return dst
}

// encodeHolding is encodeWithTable and holdNonASCII in one pass, which
// looks at the units again only where four of them hold one from 128 up:
// without a vector kernel (encodeASCII) every unit of a text that is not
// ASCII comes here, and a second pass over them was a sixth of its
// encoding.
func encodeHolding(out []byte, units []uint16, tab *[1 << 16]byte, held *byteSet) {
	for len(units) >= 4 {
		d, u := out[:4:4], units[:4:4]
		d[0], d[1], d[2], d[3] = tab[u[0]], tab[u[1]], tab[u[2]], tab[u[3]]
		if (u[0]|u[1]|u[2]|u[3])&^127 != 0 {
			holdNonASCII(held, d, u)
		}
		out, units = out[4:], units[4:]
	}
	encodeWithTable(out, units, tab)
	holdNonASCII(held, out, units)
}

// holdNonASCII adds to held the bytes out holds for units from 128 up.
func holdNonASCII(held *byteSet, out []byte, units []uint16) {
	for i, u := range units {
		if u >= 128 {
			held.add(int(out[i]))
		}
	}
}

// encodeWithTable writes tab[u] to out for every unit of units.
func encodeWithTable(out []byte, units []uint16, tab *[1 << 16]byte) {
	for len(units) >= 4 {
		d, u := out[:4:4], units[:4:4]
		d[0], d[1], d[2], d[3] = tab[u[0]], tab[u[1]], tab[u[2]], tab[u[3]]
		out, units = out[4:], units[4:]
	}
	for i, u := range units {
		out[i] = tab[u]
	}
}

// nibbleTables is a table of 128 bytes as the AVX2 kernel encodeAVX2 reads
// it: table k, twice (one for each half of a register), holds the XOR of
// rows k and k-1 of the table's rows of 16 (row 0 as it is).
type nibbleTables [8][32]byte

func nibbleTablesOf(tab *[256]byte) (nib nibbleTables) {
	for k := range 8 {
		for j := range 16 {
			b := tab[16*k+j]
			if k > 0 {
				b ^= tab[16*(k-1)+j]
			}
			nib[k][j], nib[k][16+j] = b, b
		}
	}
	return nib
}

// mapBytes sets dst[i] to tab[src[i]]; dst is at least as long as src.
func mapBytes(dst, src []byte, tab *[256]byte) {
	dst = dst[:len(src)]
	for len(src) >= 8 {
		d, s := dst[:8:8], src[:8:8]
		d[0], d[1], d[2], d[3] = tab[s[0]], tab[s[1]], tab[s[2]], tab[s[3]]
		d[4], d[5], d[6], d[7] = tab[s[4]], tab[s[5]], tab[s[6]], tab[s[7]]
		dst, src = dst[8:], src[8:]
	}
	for i, b := range src {
		dst[i] = tab[b]
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// pctView is the percent-decoded view (docs/SPEC.md section 3.3).
type pctView struct {
	units     []uint16
	from, to  []int32 // each decoded unit's range in the original text
	escBefore []int32 // escBefore[i]: units before i that came from escapes
	bytes     []byte
}

func isHex(u uint16) bool {
	return u >= '0' && u <= '9' || u >= 'a' && u <= 'f' || u >= 'A' && u <= 'F'
}

func unhex(u uint16) byte {
	switch {
	case u <= '9':
		return byte(u - '0')
	case u >= 'a':
		return byte(u - 'a' + 10)
	}
	return byte(u - 'A' + 10)
}

// build makes the view; it reports false, making nothing, when t holds
// no escape, since the view can then report nothing.
func (p *pctView) build(t *text) bool {
	if !hasPctEscape(t.raw) {
		return false // a lone '%' ("50%") makes no view
	}
	t.widen()
	n := t.len()
	// The view has at most n units: room for them once, not by doubling
	// (a long text's four slices were a sixth of its scan).
	p.units, p.from, p.to = slices.Grow(p.units[:0], n), slices.Grow(p.from[:0], n), slices.Grow(p.to[:0], n)
	p.escBefore = append(slices.Grow(p.escBefore[:0], n+1), 0)
	esc := int32(0)
	isEsc := func(i int) bool { return i+2 < n && t.at(i) == '%' && isHex(t.at(i+1)) && isHex(t.at(i+2)) }
	for i := 0; i < n; {
		if !isEsc(i) {
			p.units = append(p.units, t.at(i))
			p.from = append(p.from, int32(i))
			p.to = append(p.to, int32(i+1))
			p.escBefore = append(p.escBefore, esc)
			i++
			continue
		}
		// A maximal run of escapes becomes its bytes, decoded like the input.
		runStart := i
		p.bytes = p.bytes[:0]
		for isEsc(i) {
			p.bytes = append(p.bytes, unhex(t.at(i+1))<<4|unhex(t.at(i+2)))
			i += 3
		}
		for j := 0; j < len(p.bytes); {
			r, size := utf8.DecodeRune(p.bytes[j:])
			from, to := int32(runStart+3*j), int32(runStart+3*(j+size))
			if r >= 0x10000 {
				hi, lo := surrogates(r)
				p.push(hi, from, to, &esc)
				p.push(lo, from, to, &esc)
			} else {
				p.push(uint16(r), from, to, &esc)
			}
			j += size
		}
	}
	return true
}

// hasPctEscape reports whether raw holds a %XX escape. '%' and hex digits
// are ASCII, so the text's bytes show it as its units would.
func hasPctEscape(raw []byte) bool {
	for i := 0; ; i++ {
		k := bytes.IndexByte(raw[i:], '%')
		if k < 0 {
			return false
		}
		if i += k; i+2 < len(raw) && isHex(uint16(raw[i+1])) && isHex(uint16(raw[i+2])) {
			return true
		}
	}
}

func (p *pctView) push(u uint16, from, to int32, esc *int32) {
	p.units = append(p.units, u)
	p.from = append(p.from, from)
	p.to = append(p.to, to)
	*esc++
	p.escBefore = append(p.escBefore, *esc)
}

// base64View finds base64 tokens in the original text, scans each decoded
// token with the whole procedure and reports its rules at the token's span
// (docs/SPEC.md section 3.4). Only a token with a match has its span
// mapped to units: for a text that is not ASCII that walks the text, and
// most tokens of a long one (paths, identifiers) decode to nothing.
func (e *Engine) base64View(st *scanState, emit func(view uint8, rule, s, end int)) {
	t := &st.t
	at := textCursor{t: t}
	var buf []byte
	t.eachToken(func(start, runEnd, end int, url bool) {
		enc := base64.RawStdEncoding
		if url {
			enc = base64.RawURLEncoding
		}
		buf = grow(buf, enc.DecodedLen(runEnd-start))
		m, err := enc.Decode(buf, t.raw[start:runEnd])
		if err != nil || !plausibleText(buf[:m]) {
			return
		}
		rules := e.rulesMatching(append([]byte(nil), buf[:m]...))
		if len(rules) == 0 {
			return
		}
		s, end := at.unitAt(start), at.unitAt(end)
		for _, rule := range rules {
			emit(vBase64, rule, s, end)
		}
	})
}

// eachToken calls token for every base64 token of t, in order, at byte
// offsets of t.raw (textCursor maps them to units). A token is ASCII, and
// neither a non-ASCII character nor an invalid byte is a base64 unit or
// '=', so the raw bytes of a text that is not ASCII hold the same runs as
// its units, and a token's bytes are its units: they are searched
// instead, 64 bytes a step where a kernel can.
func (t *text) eachToken(token func(start, runEnd, end int, url bool)) {
	from := 0
	if t.ascii {
		from = t.tokens
	}
	findTokens(t.raw, from, token)
}

// findTokens calls token for every base64 token of s: a run of at least 16
// characters of [A-Za-z0-9+/_-] that does not mix the two alphabets and
// whose length mod 4 is not 1, with up to two '=' after it (end includes
// them). It looks from from, where no run of base64 characters may go on
// from before.
func findTokens(s []byte, from int, token func(start, runEnd, end int, url bool)) {
	n := len(s)
	isB64 := func(c byte) bool { return unitFlags[c]&fB64 != 0 }
	for i := from; i+16 <= n; {
		// Blocks, then words, that cannot hold the start of a token.
		if i = skipWords(s, skipBlocks(s, i)); i+16 > n {
			return
		}
		// A token needs 16 base64 characters in a row: the last character
		// of the next 16 that is not one rules out every start up to it
		// (looking from the end skips most of a line of words at once).
		k := i + 15
		for k >= i && isB64(s[k]) {
			k--
		}
		if k >= i {
			i = k + 1
			continue
		}
		if i > 0 && isB64(s[i-1]) {
			// Inside a run that began before i (the caller's previous run
			// ended at '='): move on to its end.
			for i < n && isB64(s[i]) {
				i++
			}
			continue
		}
		start := i
		std, url := false, false
		for i < n && isB64(s[i]) {
			switch s[i] {
			case '+', '/':
				std = true
			case '-', '_':
				url = true
			}
			i++
		}
		runEnd := i
		for k := 0; k < 2 && i < n && s[i] == '='; k++ {
			i++
		}
		runLen := runEnd - start
		if runLen < 16 || std && url || runLen%4 == 1 {
			continue
		}
		token(start, runEnd, i, url)
	}
}

// skipWords returns a position from i up to the first one at or after i
// where 16 base64 bytes start, len(bs) when there is none, eight bytes at a
// time. A token holds a whole aligned 8-byte word, and no byte below '+'
// (space, most punctuation) is base64: it skips the words that hold one.
// The first such word in a token has fewer than 8 of its bytes before it,
// so with the free bytes that end the word before and begin the word after
// it makes 16 or more; a long word of prose mostly does not. No token
// starts before the word ahead of the first word left.
func skipWords(bs []byte, i int) int {
	n := len(bs)
	j := (i + 7) &^ 7
	for {
		for j+8 <= n && belowPlus(binary.LittleEndian.Uint64(bs[j:j+8])) != 0 {
			j += 8
		}
		if j+8 > n {
			return n
		}
		before, after := min(j, 8), min(n-j-8, 8)
		if j >= 8 {
			before = bits.LeadingZeros64(belowPlus(binary.LittleEndian.Uint64(bs[j-8:j]))) / 8
		}
		if j+16 <= n {
			after = bits.TrailingZeros64(belowPlus(binary.LittleEndian.Uint64(bs[j+8:j+16]))) / 8
		}
		if before+8+after >= 16 {
			return max(i, j-8)
		}
		j += 8
	}
}

// plausibleText: valid UTF-8, at least 4 units, at most 10% control units.
func plausibleText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	units, ctrl := 0, 0
	for _, r := range string(b) {
		if r >= 0x10000 {
			units += 2
			continue
		}
		units++
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0x7F && r <= 0x9F {
			ctrl++
		}
	}
	return units >= 4 && ctrl*10 <= units
}

// belowPlus has the high bit set in each byte of a word of 8 ASCII bytes
// that is below '+': adding 0x80-'+' to a byte's low seven bits sets its
// high bit exactly when the byte is '+' or above, and never carries into
// the next byte. (A byte of 0x80 or above reads as not below.)
func belowPlus(x uint64) uint64 {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	return ^((x &^ high) + (0x80-'+')*ones | x) & high
}
