package filetext

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ledongthuc/pdf"
)

// textDecoder maps the bytes a text operator shows to Unicode: pdf.TextEncoding.
type textDecoder interface {
	Decode(raw string) string
}

// ToUnicode CMaps are parsed here, not by the library, whose PostScript interpreter keeps
// an unbounded operand stack. These caps are far above real fonts'.
const (
	maxCMapChars  = 1 << 17
	maxCMapRanges = 1 << 14
	// maxDifferences bounds a simple font's /Differences array: 256 names and their
	// code numbers fit.
	maxDifferences = 1024
)

// decoder returns the decoder of a font dictionary: its ToUnicode CMap when it has one,
// else the library's encoding (base encodings and /Differences), tabulated once for the
// 256 codes of a simple font.
func (x *pdfExtractor) decoder(f pdf.Value) (textDecoder, error) {
	if f.Kind() != pdf.Dict {
		return latin1Decoder{}, nil
	}
	composite := f.Key("Subtype").Name() == "Type0"
	tu := f.Key("ToUnicode")
	if tu.Kind() == pdf.Stream {
		var buf bytes.Buffer
		if err := x.readStream(&buf, tu); err != nil && (errors.Is(err, ErrLimit) || errors.Is(err, ErrTimeout)) {
			return nil, err
		}
		m, err := parseCMap(buf.Bytes(), composite)
		if err != nil {
			return nil, err
		}
		if m != nil {
			return m, nil
		}
		// The library's Encoder would parse this ToUnicode stream again, unbounded.
		enc := f.Key("Encoding")
		if composite || enc.Kind() != pdf.Dict && (enc.Kind() != pdf.Name || enc.Name() == "Identity-H") {
			return latin1Decoder{}, nil
		}
	}
	// The library's /Differences decoder walks the whole array for every byte; real
	// arrays name at most 256 codes, and ignoring a longer one would hide its mapping.
	if d := f.Key("Encoding").Key("Differences"); d.Len() > maxDifferences {
		return nil, fmt.Errorf("%w: /Differences of %d entries", ErrLimit, d.Len())
	}
	enc := (&pdf.Font{V: f}).Encoder()
	if composite {
		return enc, nil
	}
	var t byteTable
	for c := range 256 {
		t[c] = enc.Decode(string([]byte{byte(c)}))
	}
	return &t, nil
}

type latin1Decoder struct{}

func (latin1Decoder) Decode(raw string) string { return decodeSingleByte([]byte(raw), nil) }

// byteTable is a simple font's encoding: one string per code.
type byteTable [256]string

func (t *byteTable) Decode(raw string) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		b.WriteString(t[raw[i]])
	}
	return b.String()
}

// cmap is a parsed ToUnicode CMap.
type cmap struct {
	lens   []int             // code lengths in bytes, shortest first
	chars  map[string]string // code → text
	ranges [5][]cmapRange    // by code length, sorted by lo
	simple bool              // unmapped single-byte codes read as latin-1
}

type cmapRange struct {
	lo, hi string
	dst    []uint16 // UTF-16 of lo; later codes increment its last unit
	arr    []string // or one text per code
}

// parseCMap returns nil for a CMap without mappings and ErrLimit for one over the caps:
// dropping mappings would hide text.
func parseCMap(data []byte, composite bool) (*cmap, error) {
	m := &cmap{chars: map[string]string{}, simple: !composite}
	var spaceLens, srcLens []int
	l := &lexer{data: data}
	over := false
	var arrays [][]string // dst arrays of bfrange, by the index in their token's num
	strs := func(end string, n int, each func([]token)) {
		group := make([]token, 0, n)
		for {
			t := l.next()
			if t.kind == tEOF || t.kind == tOp && t.s == end {
				return
			}
			if t.kind == tArrOpen {
				arrays = append(arrays, readStrArray(l))
				t = token{kind: tArrOpen, num: float64(len(arrays) - 1)}
			}
			if group = append(group, t); len(group) == n {
				each(group)
				group = group[:0]
			}
		}
	}
	for {
		t := l.next()
		if t.kind == tEOF {
			break
		}
		if t.kind != tOp {
			continue
		}
		switch t.s {
		case "begincodespacerange":
			strs("endcodespacerange", 2, func(g []token) {
				if n := len(g[0].s); n >= 1 && n <= 4 {
					spaceLens = append(spaceLens, n)
				}
			})
		case "beginbfchar":
			strs("endbfchar", 2, func(g []token) {
				if len(m.chars) >= maxCMapChars {
					over = true
				} else if g[0].kind == tStr && g[1].kind == tStr && len(g[0].s) >= 1 && len(g[0].s) <= 4 {
					m.chars[g[0].s] = utf16BE(g[1].s)
					srcLens = append(srcLens, len(g[0].s))
				}
			})
		case "beginbfrange":
			strs("endbfrange", 3, func(g []token) {
				if m.count() >= maxCMapRanges {
					over = true
				} else {
					m.addRange(g, arrays, &srcLens)
				}
			})
		}
	}
	if over {
		return nil, fmt.Errorf("%w: ToUnicode CMap over %d chars or %d ranges", ErrLimit, maxCMapChars, maxCMapRanges)
	}
	if len(m.chars) == 0 && m.count() == 0 {
		return nil, nil
	}
	m.lens = spaceLens
	if len(m.lens) == 0 {
		m.lens = srcLens
	}
	slices.Sort(m.lens)
	m.lens = slices.Compact(m.lens)
	for n := range m.ranges {
		slices.SortFunc(m.ranges[n], func(a, b cmapRange) int { return strings.Compare(a.lo, b.lo) })
	}
	return m, nil
}

func readStrArray(l *lexer) []string {
	var out []string
	for {
		t := l.next()
		if t.kind == tEOF || t.kind == tArrClose || t.kind == tOp {
			return out
		}
		if t.kind == tStr && len(out) < 1<<16 {
			out = append(out, t.s)
		}
	}
}

func (m *cmap) count() int {
	n := 0
	for _, r := range m.ranges {
		n += len(r)
	}
	return n
}

func (m *cmap) addRange(g []token, arrays [][]string, srcLens *[]int) {
	lo, hi := g[0].s, g[1].s
	n := len(lo)
	if g[0].kind != tStr || g[1].kind != tStr || n < 1 || n > 4 || len(hi) != n || hi < lo {
		return
	}
	r := cmapRange{lo: lo, hi: hi}
	switch g[2].kind {
	case tStr:
		s := g[2].s
		for i := 0; i+1 < len(s); i += 2 {
			r.dst = append(r.dst, uint16(s[i])<<8|uint16(s[i+1]))
		}
		if len(r.dst) == 0 {
			return
		}
	case tArrOpen:
		for _, s := range arrays[int(g[2].num)] {
			r.arr = append(r.arr, utf16BE(s))
		}
	default:
		return
	}
	m.ranges[n] = append(m.ranges[n], r)
	*srcLens = append(*srcLens, n)
}

func codeValue(s string) int {
	v := 0
	for i := 0; i < len(s); i++ {
		v = v<<8 | int(s[i])
	}
	return v
}

// lookup maps one code of len(code) bytes.
func (m *cmap) lookup(code string) (string, bool) {
	if s, ok := m.chars[code]; ok {
		return s, true
	}
	rs := m.ranges[len(code)]
	i, _ := slices.BinarySearchFunc(rs, code, func(r cmapRange, c string) int { return strings.Compare(r.lo, c) })
	if i < len(rs) && rs[i].lo == code {
		i++
	}
	if i == 0 {
		return "", false
	}
	r := rs[i-1]
	if code > r.hi {
		return "", false
	}
	off := codeValue(code) - codeValue(r.lo)
	if r.arr != nil {
		if off < len(r.arr) {
			return r.arr[off], true
		}
		return "", false
	}
	dst := slices.Clone(r.dst)
	dst[len(dst)-1] += uint16(off)
	return utf16Units(dst), true
}

func utf16Units(u []uint16) string {
	b := make([]byte, 0, 2*len(u))
	for _, v := range u {
		b = append(b, byte(v>>8), byte(v))
	}
	return utf16BE(string(b))
}

// Decode reads codes of the CMap's lengths, shortest first as the codespace says;
// an unmapped code is skipped by its shortest length.
func (m *cmap) Decode(raw string) string {
	var b strings.Builder
	for i := 0; i < len(raw); {
		matched := false
		for _, n := range m.lens {
			if i+n > len(raw) {
				break
			}
			if s, ok := m.lookup(raw[i : i+n]); ok {
				b.WriteString(s)
				i += n
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		n := 1
		if len(m.lens) > 0 {
			n = m.lens[0]
		}
		if m.simple && n == 1 {
			b.WriteString(decodeSingleByte([]byte{raw[i]}, nil))
		}
		i += n
	}
	return b.String()
}
