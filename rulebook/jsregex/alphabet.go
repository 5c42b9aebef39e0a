package jsregex

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// An Alphabet maps each UTF-16 code unit to one ASCII byte so that Go's
// regexp package, which matches UTF-8, can run ECMAScript patterns with
// V8's results:
//
//   - one byte per unit makes byte offsets JavaScript string positions and
//     makes `{0,40}` count units (an emoji is two), as V8 does;
//   - two units get the same byte only when no set of any pattern tells them
//     apart (the classes of a partition of all 65,536 units), so matching the
//     bytes is matching the units; case folding, `\s` and `.` are already
//     resolved into the sets;
//   - word units ([A-Za-z0-9_]) get word bytes and the others non-word bytes,
//     so Go's ASCII `\b` is ECMAScript's `\b`.
//
// There are 63 word bytes and 65 non-word bytes; a rulebook whose patterns
// need more classes than that cannot use the alphabet (ErrTooManyClasses).
type Alphabet struct {
	// Byte maps a unit to its byte.
	Byte [1 << 16]byte
	// classes maps a byte back to its class index (0xFF: unused).
	classOf [128]uint8
	// Size is the number of classes in use.
	Size int
	// rep holds one unit of each class: a set that is a union of classes
	// holds a class exactly when it holds its representative.
	rep []uint16
	// bytesOf caches Bytes: the literal analysis asks for the same sets
	// many times.
	bytesMu sync.Mutex
	bytesOf map[*Set][]byte
}

// ErrTooManyClasses means the patterns tell apart more units than one
// ASCII byte each can stand for.
var ErrTooManyClasses = errors.New("patterns distinguish too many characters for the byte alphabet")

// Sets returns the sets of every OpSet node of the patterns, case-folded
// in place for patterns with the i flag. Call it once per pattern before
// building an Alphabet.
func (p *Pattern) Sets() []*Set {
	var out []*Set
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Op == OpSet {
			if p.Flags.IgnoreCase {
				n.Set = FoldCase(n.Set)
			}
			if n.Inverted {
				n.Set, n.Inverted = n.Set.Complement(), false
			}
			out = append(out, n.Set)
		}
		for _, s := range n.Subs {
			walk(s)
		}
	}
	if !p.folded {
		walk(p.Root)
		p.folded = true
		p.sets = out
	}
	return p.sets
}

// NewAlphabet builds the coarsest partition of the units that keeps every
// given set a union of classes, plus the word set.
func NewAlphabet(sets []*Set) (*Alphabet, error) {
	// class holds each unit's class, but only in words that are not
	// uniform: uniform[w] says the 64 units of word w are all in one class,
	// wclass[w]. Most of the 65,536 units are in blocks no pattern looks
	// into, and such a block is refined as one unit.
	class := make([]uint16, 1<<16)
	var wclass [1024]uint16
	var uniform [1024]bool
	for w := range uniform {
		uniform[w] = true
	}
	nclass := 1
	all := append([]*Set{WordSet()}, sets...)
	// The same set comes many times (shared literals, repeated classes):
	// skip repeats by pointer, then by content.
	seenPtr := map[*Set]bool{}
	seen := map[uint64][]*Set{}
	remap := make([]int32, 0, 256)
	for _, s := range all {
		if seenPtr[s] {
			continue
		}
		seenPtr[s] = true
		var h uint64
		for i, w := range s {
			h ^= w * uint64(2*i+1)
		}
		dup := false
		for _, o := range seen[h] {
			dup = dup || *o == *s
		}
		if dup {
			continue
		}
		seen[h] = append(seen[h], s)
		remap = remap[:0]
		for i := 0; i < 2*nclass; i++ {
			remap = append(remap, -1)
		}
		next := 0
		// renumber gives the new class of a unit of class c, in s or not,
		// numbering new classes in the order of their first unit.
		renumber := func(c uint16, in bool) uint16 {
			k := int(c) * 2
			if in {
				k++
			}
			if remap[k] < 0 {
				remap[k] = int32(next)
				next++
			}
			return uint16(remap[k])
		}
		for w, word := range s {
			if uniform[w] && (word == 0 || word == ^uint64(0)) {
				wclass[w] = renumber(wclass[w], word != 0)
				continue
			}
			base := w << 6
			if uniform[w] {
				uniform[w] = false
				for u := base; u < base+64; u++ {
					class[u] = wclass[w]
				}
			}
			for u := base; u < base+64; u++ {
				class[u] = renumber(class[u], word&(1<<(u-base)) != 0)
			}
		}
		nclass = next
		if nclass > 128 {
			return nil, ErrTooManyClasses
		}
	}
	for w, uni := range uniform {
		if uni {
			for u := w << 6; u < (w+1)<<6; u++ {
				class[u] = wclass[w]
			}
		}
	}
	a := &Alphabet{Size: nclass}
	for i := range a.classOf {
		a.classOf[i] = 0xFF
	}
	const wordBytes = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
	var nonWord []byte
	for b := 0; b < 128; b++ {
		if !strings.ContainsRune(wordBytes, rune(b)) {
			nonWord = append(nonWord, byte(b))
		}
	}
	// Prefer a unit's own byte for ASCII classes: it keeps the encoded text
	// readable when debugging, and costs nothing.
	classByte := make([]int, nclass)
	for i := range classByte {
		classByte[i] = -1
	}
	used := [128]bool{}
	word := WordSet()
	for u := 0; u < 128; u++ {
		c := class[u]
		if classByte[c] < 0 && !used[u] {
			classByte[c] = u
			used[u] = true
		}
	}
	wi, ni := 0, 0
	for u := 0; u < 1<<16; u++ {
		c := class[u]
		if classByte[c] >= 0 {
			continue
		}
		pool, idx := nonWord, &ni
		if word.Has(uint16(u)) {
			pool, idx = []byte(wordBytes), &wi
		}
		for *idx < len(pool) && used[pool[*idx]] {
			*idx++
		}
		if *idx == len(pool) {
			return nil, ErrTooManyClasses
		}
		classByte[c] = int(pool[*idx])
		used[pool[*idx]] = true
	}
	for u := 0; u < 1<<16; u++ {
		a.Byte[u] = byte(classByte[class[u]])
	}
	for c, b := range classByte {
		a.classOf[b] = uint8(c)
	}
	a.rep = make([]uint16, nclass)
	have := make([]bool, nclass)
	for u := 0; u < 1<<16; u++ {
		if c := class[u]; !have[c] {
			have[c], a.rep[c] = true, uint16(u)
		}
	}
	return a, nil
}

// Bytes returns the bytes of the classes that make up s, in order.
func (a *Alphabet) Bytes(s *Set) []byte {
	a.bytesMu.Lock()
	defer a.bytesMu.Unlock()
	if b, ok := a.bytesOf[s]; ok {
		return b
	}
	if a.bytesOf == nil {
		a.bytesOf = map[*Set][]byte{}
	}
	b := a.bytes(s)
	a.bytesOf[s] = b
	return b
}

func (a *Alphabet) bytes(s *Set) []byte {
	var in [128]bool
	for _, u := range a.rep {
		if s.Has(u) {
			in[a.Byte[u]] = true
		}
	}
	var out []byte
	for b := 0; b < 128; b++ {
		if in[b] {
			out = append(out, byte(b))
		}
	}
	return out
}

// GoSyntax returns p in the syntax of Go's regexp package over the
// alphabet's bytes. Patterns that need a backtracking engine, the m flag
// (Go's multi-line anchors know only \n) or repeat bounds above Go's limit
// of 1,000 cannot be translated.
func (a *Alphabet) GoSyntax(p *Pattern) (string, error) {
	if p.NeedsBT {
		return "", errors.New("look-arounds and back-references need a backtracking engine")
	}
	if p.Flags.Multiline {
		return "", errors.New("the m flag needs a backtracking engine")
	}
	p.Sets()
	var b strings.Builder
	if err := a.emit(&b, p.Root); err != nil {
		return "", err
	}
	return b.String(), nil
}

func (a *Alphabet) emit(b *strings.Builder, n *Node) error {
	switch n.Op {
	case OpSet:
		writeByteClass(b, a.Bytes(n.Set))
	case OpConcat:
		for _, s := range n.Subs {
			if err := a.emit(b, s); err != nil {
				return err
			}
		}
	case OpAlternate:
		b.WriteString("(?:")
		for i, s := range n.Subs {
			if i > 0 {
				b.WriteByte('|')
			}
			if err := a.emit(b, s); err != nil {
				return err
			}
		}
		b.WriteByte(')')
	case OpGroup:
		b.WriteString("(?:")
		if err := a.emit(b, n.Subs[0]); err != nil {
			return err
		}
		b.WriteByte(')')
	case OpRepeat:
		if n.Min > 1000 || n.Max > 1000 {
			return fmt.Errorf("repeat bound {%d,%d} above 1000", n.Min, n.Max)
		}
		b.WriteString("(?:")
		if err := a.emit(b, n.Subs[0]); err != nil {
			return err
		}
		b.WriteByte(')')
		switch {
		case n.Max == -1:
			fmt.Fprintf(b, "{%d,}", n.Min)
		default:
			fmt.Fprintf(b, "{%d,%d}", n.Min, n.Max)
		}
		if !n.Greedy {
			b.WriteByte('?')
		}
	case OpBegin:
		b.WriteString(`\A`)
	case OpEnd:
		b.WriteString(`\z`)
	case OpWordBoundary:
		b.WriteString(`\b`)
	case OpNoWordBoundary:
		b.WriteString(`\B`)
	case OpEmpty:
		b.WriteString(`(?:)`)
	default:
		return errors.New("construct needs a backtracking engine")
	}
	return nil
}

func writeByteClass(b *strings.Builder, bs []byte) {
	switch len(bs) {
	case 0:
		b.WriteString(`[^\x00-\x{10FFFF}]`)
		return
	case 128:
		b.WriteString(`(?s:.)`)
		return
	}
	b.WriteByte('[')
	for i := 0; i < len(bs); {
		j := i
		for j+1 < len(bs) && bs[j+1] == bs[j]+1 {
			j++
		}
		fmt.Fprintf(b, `\x%02X`, bs[i])
		if j > i {
			fmt.Fprintf(b, `-\x%02X`, bs[j])
		}
		i = j + 1
	}
	b.WriteByte(']')
}

// Column returns the dense class index of an alphabet byte (0 for bytes
// no unit maps to; they never occur in an encoded text).
func (a *Alphabet) Column(b byte) int {
	if c := a.classOf[b&0x7F]; c != 0xFF {
		return int(c)
	}
	return 0
}
