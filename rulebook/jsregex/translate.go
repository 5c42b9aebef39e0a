package jsregex

// Translation is a set of patterns made ready for Go's regexp: one alphabet
// for all of them (so that one encoded text serves every pattern), and
// each pattern's Go syntax over it with what its matches must contain.
type Translation struct {
	// Alphabet is nil when the patterns tell apart more characters than
	// the alphabet has bytes; every pattern then needs the backtracking
	// engine, and its Err says why.
	Alphabet *Alphabet
	Patterns []Translated
}

// Translated is one pattern of a Translation.
type Translated struct {
	// Pattern is the pattern itself, its sets case-folded (Pattern.Sets):
	// the backtracking engine's input when Err is set.
	Pattern *Pattern
	// Go is the pattern in Go's syntax over the alphabet's bytes
	// (GoSyntax), and Literals its analysis (Analyze); Err says why there
	// are none.
	Go       string
	Literals Literals
	Err      error
}

// Translate translates pats, which it folds in place (Pattern.Sets): it
// must be the only user of pats while it runs.
func Translate(pats []*Pattern) *Translation {
	t := &Translation{Patterns: make([]Translated, len(pats))}
	var sets []*Set
	for _, p := range pats {
		sets = append(sets, p.Sets()...)
	}
	var alphaErr error
	t.Alphabet, alphaErr = NewAlphabet(sets)
	for i, p := range pats {
		tp := &t.Patterns[i]
		tp.Pattern = p
		if t.Alphabet == nil {
			tp.Err = alphaErr
			continue
		}
		if tp.Go, tp.Err = t.Alphabet.GoSyntax(p); tp.Err == nil {
			tp.Literals = t.Alphabet.Analyze(p)
		}
	}
	return t
}
