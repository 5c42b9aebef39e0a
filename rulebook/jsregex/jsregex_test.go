package jsregex

import (
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	for _, p := range []string{`(`, `)`, `a{2,1}`, `*a`, `a**`, `[b-a]`, `\`, `(?<n>a)(?<n>b)`, `\k<nope>(?<x>a)`, `(?x)`, `a{1}{2}`, `(?<=a)*`} {
		if _, err := Parse(p, Flags{}); err == nil {
			t.Errorf("%q parsed", p)
		} else if !strings.Contains(err.Error(), "invalid regular expression at position") {
			t.Errorf("%q: %v", p, err)
		}
	}
}

// Annex B syntax that browsers and Node accept must parse, as literals.
func TestParseAnnexB(t *testing.T) {
	for p, wantSingle := range map[string]int{
		`{`: '{', `}`: '}', `]`: ']', `a{`: -1, `\c`: -1, `\8`: '8', `\01`: 1, `\377`: 0xFF, `\x4`: -1, `\u12`: -1, `\q`: 'q', `[\b]`: '\b', `\cJ`: '\n',
	} {
		pat, err := Parse(p, Flags{})
		if err != nil {
			t.Errorf("%q: %v", p, err)
			continue
		}
		if wantSingle >= 0 && (pat.Root.Op != OpSet || pat.Root.Set.Single() != wantSingle) {
			t.Errorf("%q: got op %d set %d, want the single unit %d", p, pat.Root.Op, pat.Root.Set.Single(), wantSingle)
		}
	}
}

func TestBacktrackingConstructsAreMarked(t *testing.T) {
	for p, bt := range map[string]bool{`a(?=b)`: true, `(?<!a)b`: true, `(a)\1`: true, `(?<x>a)\k<x>`: true, `(a)\2`: false, `a(?:b)`: false} {
		pat, err := Parse(p, Flags{})
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		if pat.NeedsBT != bt {
			t.Errorf("%q: NeedsBT %v", p, pat.NeedsBT)
		}
	}
}

// ECMAScript's non-unicode Canonicalize: upper case, never non-ASCII to ASCII.
func TestFoldCase(t *testing.T) {
	s := FoldCase(SetOf('s'))
	if !s.Has('S') || s.Has(0x017F) {
		t.Error("s must fold to S and not to ſ (U+017F)")
	}
	k := FoldCase(SetOf('k'))
	if !k.Has('K') || k.Has(0x212A) {
		t.Error("k must fold to K and not to the Kelvin sign")
	}
	if i := FoldCase(SetOf('i')); i.Has(0x0130) || i.Has(0x0131) {
		t.Error("i must not fold to İ or ı")
	}
	if e := FoldCase(SetOf(0xE9)); !e.Has(0xC9) {
		t.Error("é must fold to É")
	}
	if Canonicalize('a') != 'A' || Canonicalize(0x017F) != 0x017F || Canonicalize(0x1F80) != 0x1F80 {
		t.Error("Canonicalize")
	}
	// A negated class folds its members first: [^a-c] with i excludes B.
	p, _ := Parse(`[^a-c]`, Flags{IgnoreCase: true})
	if set := p.Sets()[0]; set.Has('B') || set.Has('b') || !set.Has('d') {
		t.Error("[^a-c] under i")
	}
}

func TestSpaceSetIsECMAScripts(t *testing.T) {
	s := SpaceSet()
	for _, u := range []uint16{9, 10, 11, 12, 13, 0x20, 0xA0, 0x1680, 0x2000, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF} {
		if !s.Has(u) {
			t.Errorf("U+%04X missing", u)
		}
	}
	for _, u := range []uint16{0x85, 0x180E, 0x200B, 0x1C} {
		if s.Has(u) {
			t.Errorf("U+%04X is not ECMAScript white space", u)
		}
	}
}

func TestGoSyntaxRefusesWhatItCannotRun(t *testing.T) {
	for _, tc := range []struct {
		p string
		f Flags
	}{{`a(?=b)`, Flags{}}, {`^a`, Flags{Multiline: true}}, {`a{1001}`, Flags{}}} {
		pat, err := Parse(tc.p, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		a, err := NewAlphabet(pat.Sets())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.GoSyntax(pat); err == nil {
			t.Errorf("%q translated for Go's regexp", tc.p)
		}
		if _, err := Backtracking(pat, 0); err != nil {
			t.Errorf("%q: backtracking: %v", tc.p, err)
		}
	}
}

// The alphabet gives word units word bytes, and units no pattern tells
// apart the same byte.
func TestAlphabet(t *testing.T) {
	p, _ := Parse(`\bab\s`, Flags{IgnoreCase: true})
	a, err := NewAlphabet(p.Sets())
	if err != nil {
		t.Fatal(err)
	}
	isWord := func(b byte) bool { return WordSet().Has(uint16(b)) }
	if a.Byte['a'] != a.Byte['A'] || a.Byte['a'] == a.Byte['b'] || !isWord(a.Byte['z']) || isWord(a.Byte[' ']) {
		t.Error("letters")
	}
	if a.Byte[0xA0] != a.Byte['\t'] || a.Byte[0xA0] == a.Byte['x'] || a.Byte[0xE9] != a.Byte['-'] {
		t.Errorf("classes: nbsp %d tab %d é %d - %d", a.Byte[0xA0], a.Byte['\t'], a.Byte[0xE9], a.Byte['-'])
	}
}

// FuzzParse: no pattern makes the parser or the translations panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`\b(ignore|x)\b[^.\n]{0,40}`, `(?<n>a)\k<n>`, `[\s\S]*?$`, `a{2,}?|(?!b)`, `[\d-z]`, `\c1`} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, pattern string, i bool) {
		if len(pattern) > 300 {
			return
		}
		p, err := Parse(pattern, Flags{IgnoreCase: i})
		if err != nil {
			return
		}
		if a, err := NewAlphabet(p.Sets()); err == nil {
			a.GoSyntax(p)
			a.Analyze(p)
		}
		Backtracking(p, 0)
	})
}
