package jsregex

import (
	"math/bits"
	"slices"
	"sync"
	"unicode/utf16"
)

// Set is a set of UTF-16 code units (a bitmap of 65,536 bits).
type Set [1024]uint64

// SetOf returns the set holding the given units.
func SetOf(units ...uint16) *Set {
	s := &Set{}
	for _, u := range units {
		s.Add(u)
	}
	return s
}

var (
	singlesMu sync.Mutex
	singles   = map[uint16]*Set{}
	singleOf  = map[*Set]uint16{} // the inverse of singles
	foldedMu  sync.Mutex
	folded    = map[*Set]*Set{}
)

// single returns the shared, never modified set of one unit: patterns are
// mostly literal characters, and a set is 8 KiB.
func single(u uint16) *Set {
	singlesMu.Lock()
	defer singlesMu.Unlock()
	s, ok := singles[u]
	if !ok {
		s = SetOf(u)
		singles[u] = s
		singleOf[s] = u
	}
	return s
}

// Add adds u.
func (s *Set) Add(u uint16) { s[u>>6] |= 1 << (u & 63) }

// Has reports whether u is in s.
func (s *Set) Has(u uint16) bool { return s[u>>6]&(1<<(u&63)) != 0 }

// AddRange adds lo..hi inclusive.
func (s *Set) AddRange(lo, hi uint16) {
	for u := uint32(lo); u <= uint32(hi); u++ {
		s.Add(uint16(u))
	}
}

// Union adds every unit of o.
func (s *Set) Union(o *Set) {
	for i := range s {
		s[i] |= o[i]
	}
}

// Complement returns a new set with every unit not in s.
func (s *Set) Complement() *Set {
	c := &Set{}
	for i := range s {
		c[i] = ^s[i]
	}
	return c
}

// Len returns the number of units in s.
func (s *Set) Len() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// only returns the unit of s when s holds exactly one, without counting
// the whole set.
func (s *Set) only() (uint16, bool) {
	found := -1
	for i, w := range s {
		if w == 0 {
			continue
		}
		if found >= 0 || w&(w-1) != 0 {
			return 0, false
		}
		found = i<<6 | bits.TrailingZeros64(w)
	}
	return uint16(found), found >= 0
}

// Single returns the only unit of s, or -1 if s does not hold exactly one.
func (s *Set) Single() int {
	if u, ok := s.only(); ok {
		return int(u)
	}
	return -1
}

// Each calls f for every unit of s in order.
func (s *Set) Each(f func(u uint16)) {
	for i, w := range s {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			f(uint16(i<<6 | b))
			w &= w - 1
		}
	}
}

// SpaceSet is ECMAScript's \s: WhiteSpace and LineTerminator.
func SpaceSet() *Set {
	s := SetOf(0x20, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF)
	s.AddRange(0x09, 0x0D)
	s.AddRange(0x2000, 0x200A)
	return s
}

// WordSet is ECMAScript's \w and the word characters of \b: [A-Za-z0-9_].
func WordSet() *Set {
	s := SetOf('_')
	s.AddRange('a', 'z')
	s.AddRange('A', 'Z')
	s.AddRange('0', '9')
	return s
}

func digitSet() *Set {
	s := &Set{}
	s.AddRange('0', '9')
	return s
}

// dotSet is `.`: everything but line terminators, or everything with s.
func dotSet(dotAll bool) *Set {
	s := SetOf('\n', '\r', 0x2028, 0x2029)
	if dotAll {
		s = &Set{}
	}
	return s.Complement()
}

var (
	canonOnce  sync.Once
	canonTable []uint16
	// foldClasses lists the units that share their Canonicalize with at
	// least one other unit, grouped: only these can change under folding.
	foldClasses [][]uint16
)

// canonical returns ECMAScript's non-unicode Canonicalize for every unit:
// the single-unit upper-case mapping, except that a unit whose full upper
// case is several units keeps itself, and no non-ASCII unit maps to ASCII
// (so U+017F ſ never matches s, nor U+212A K k). The units it moves are
// listed in canonical_table.go, generated from Go's Unicode tables by
// TestCanonicalTable: computing them here took a few milliseconds of every
// process that compiles a rulebook.
//
//go:generate go test -run TestCanonicalTable -update .
func canonical() []uint16 {
	canonOnce.Do(func() {
		t := make([]uint16, 1<<16)
		for u := range t {
			t[u] = uint16(u)
		}
		for _, p := range canonicalPairs {
			t[p>>16] = uint16(p)
		}
		canonTable = t
		// The classes: each unit that another maps to, with the units that
		// map to it, grouped by sorting the pairs by their target.
		byKey := make([]uint32, len(canonicalPairs))
		for i, p := range canonicalPairs {
			byKey[i] = p<<16 | p>>16
		}
		slices.Sort(byKey)
		for i := 0; i < len(byKey); {
			k := uint16(byKey[i] >> 16)
			var class []uint16
			if t[k] == k {
				class = append(class, k)
			}
			for ; i < len(byKey) && uint16(byKey[i]>>16) == k; i++ {
				class = append(class, uint16(byKey[i]))
			}
			if len(class) > 1 {
				foldClasses = append(foldClasses, class)
			}
		}
	})
	return canonTable
}

// FoldCase returns the set of units that match s case-insensitively:
// every unit whose Canonicalize equals that of a unit in s.
func FoldCase(s *Set) *Set {
	canonical()
	singlesMu.Lock()
	u, one := singleOf[s]
	singlesMu.Unlock()
	if !one {
		u, one = s.only()
	}
	if one {
		foldedMu.Lock()
		f, ok := folded[single(u)]
		foldedMu.Unlock()
		if ok {
			return f
		}
		f = foldSet(s)
		foldedMu.Lock()
		folded[single(u)] = f
		foldedMu.Unlock()
		return f
	}
	return foldSet(s)
}

func foldSet(s *Set) *Set {
	out := *s
	for _, class := range foldClasses {
		for _, u := range class {
			if s.Has(u) {
				for _, v := range class {
					out.Add(v)
				}
				break
			}
		}
	}
	return &out
}

func utf16Units(s string) []uint16 { return utf16.Encode([]rune(s)) }

func utf16ToRunes(u []uint16) []rune { return utf16.Decode(u) }

// Canonicalize is ECMAScript's non-unicode Canonicalize of one unit. Sets
// folded by FoldCase are closed under it, so a text mapped through it
// matches them as the original would, and a back-reference then compares
// units case-insensitively exactly as ECMAScript does.
func Canonicalize(u uint16) uint16 { return canonical()[u] }
