package engine

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/dlclark/regexp2/v2"

	"github.com/promptwall/promptwall/rulebook"
	"github.com/promptwall/promptwall/rulebook/jsregex"
)

// SlowMatchTimeout bounds one match of a pattern that only the backtracking
// engine can run (a custom rule with look-arounds or back-references).
const SlowMatchTimeout = 2 * time.Second

// rule is one compiled rule.
type rule struct {
	id       string
	category string
	severity rulebook.Severity

	// The fast path: Go's regexp over the alphabet's bytes. Four forms, so a
	// match can be sought from any position with the text before it still in
	// view for \b: at 0 the pattern itself; at p>0 "one byte, then the
	// pattern" on text[p-1:]. The anchored forms (\A) try one position only
	// and run as DFAs (dfa.go). The plain form is compiled with the rulebook
	// (it proves the translation compiles); the anchored ones on a rule's
	// first use, since most rules of most runs never get that far; the
	// fourth only when a pass over the whole text must start after 0,
	// which few runs need at all.
	fast         bool
	src          string
	scan0        *regexp.Regexp
	anchorsOnce  sync.Once
	anch0, anchN *anchoredDFA
	scanNOnce    sync.Once
	scanN        *regexp.Regexp
	maxLen       int // longest match in units, -1 unbounded
	// The conjuncts of required literals (see jsregex.Literals), each a
	// mask over matcher.seen, one word per 64 literals.
	requiredMasks [][]uint64
	prefixes      [][]byte // a match begins with one of these
	// nonASCII, for a rule whose every prefix holds a byte no ASCII unit
	// maps to (OB-1's invisible characters), lists those bytes of each
	// prefix: the rule cannot match a view that lacks one of each
	// (mayOccur), such as any ASCII text. Nil for the other rules.
	nonASCII  [][]byte
	atStart   bool
	hasPrefix bool
	// bytePrefixes are the prefixes of one byte, which the prefix
	// automaton leaves out (findCandidates finds them with memchr).
	bytePrefixes [][]byte
	// gate, when not nil, finds the candidates from the literals the
	// matches reach instead (gate.go).
	gate *gate
	// reach, for a rule of bounded matches: its conjuncts' literal ids, which
	// a candidate needs within reach to be tried (reach.go).
	reach [][]int32

	// The slow path: a backtracking engine over UTF-16 units.
	slow *regexp2.Regexp
}

// compiled is everything derived once from a rulebook.
type compiled struct {
	rules    []rule
	alphabet *jsregex.Alphabet
	// ascii and asciiLeet map ASCII bytes to their alphabet bytes, as they
	// are and through the leetspeak folding; 256 entries so that a byte
	// indexes them without a bounds check.
	ascii, asciiLeet [256]byte
	asciiNib         nibbleTables // ascii's, for encodeAVX2
	// A view's bytes read as alphabet bytes through viewTabs[kind] (see
	// viewKind); keywordCols[kind] and prefixCols[kind] map them to the
	// keyword and prefix automata's columns, and preimage[kind][a] is the
	// one byte that reads as a (noPreimage: none, manyPreimages: several).
	viewTabs    [3]*[256]byte
	keywordCols [3]byteCols
	prefixCols  [3]byteCols
	preimage    [3][256]int16
	ac          *ahoCorasick
	literals    []string // the required literals, in alphabet bytes

	// keywordLit[kind] and prefixLit[kind] tell the view's bytes that occur
	// in the automata's literals (ahoCorasick.litBytes), for leetWindows.
	keywordLit, prefixLit [3][256]bool

	// litRules[l]: the rules with literal l in a required conjunct;
	// unconditional: the rules without required literals. A view's rules
	// worth checking are the union of these over its literals.
	litRules      [][]uint64
	unconditional []uint64

	// The prefixes of all rules, searched in one pass for the rules that
	// can match a view: prefixRules[lit] lists the rules lit begins.
	prefixAC    *ahoCorasick
	prefixLens  []int32
	prefixRules [][]int32
	// Both automata as one (aho_union.go), nil when it does not pay.
	union *unionAC
	// reachLit[l]: literal l is in a conjunct of a rule's reach (reach.go).
	reachLit []bool
}

// candidateFilters are the ways compile may narrow a rule's candidates:
// all of them, but for the tests that hold each to the scan without it.
type candidateFilters struct {
	gates bool // gate.go
	reach bool // reach.go
}

var allFilters = candidateFilters{gates: true, reach: true}

func compile(rb *rulebook.Rulebook, filters candidateFilters) (*compiled, error) {
	c := &compiled{rules: make([]rule, len(rb.Rules))}
	tr := rb.Translation()
	if len(tr.Patterns) != len(rb.Rules) {
		return nil, errors.New("rulebook: its rules were not all parsed (make it with rulebook.Parse or Load, and leave Rules as they are)")
	}
	alpha := tr.Alphabet
	c.alphabet = alpha
	lits := map[string]int{}
	var litList []string
	litID := func(s string) int {
		if id, ok := lits[s]; ok {
			return id
		}
		lits[s] = len(litList)
		litList = append(litList, s)
		return len(litList) - 1
	}
	required := make([][][]int, len(rb.Rules)) // per rule, conjuncts of literal ids
	for i, rr := range rb.Rules {
		r := &c.rules[i]
		*r = rule{id: rr.ID, category: rr.Category, severity: rr.Severity}
		tp := &tr.Patterns[i]
		if tp.Err == nil {
			var err error
			if required[i], err = r.compileFast(tp, litID); err == nil {
				continue
			}
		}
		slow, err := jsregex.Backtracking(tp.Pattern, SlowMatchTimeout)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", r.id, err)
		}
		r.slow = slow
	}
	if alpha != nil {
		for u := 0; u < 128; u++ {
			c.ascii[u] = alpha.Byte[u]
			c.asciiLeet[u] = alpha.Byte[u]
			if unitFlags[u]&fLeet != 0 {
				c.asciiLeet[u] = alpha.Byte[leetTo[u]]
			}
		}
		for i := range c.rules {
			if r := &c.rules[i]; filters.gates && r.fast {
				r.gate = c.gateOf(r, &tr.Patterns[i].Literals)
			}
		}
		var col byteCols
		for b := 0; b < 128; b++ {
			col[b] = uint32(alpha.Column(byte(b)))
		}
		classes := c.keywordColumns(&col, litList)
		var err error
		if c.ac, err = newAhoCorasick(litList, &c.keywordCols[viewEncoded], alpha.Size, classes); err != nil {
			return nil, err
		}
		c.literals = litList
		if err := c.prefixAutomata(&col); err != nil {
			return nil, err
		}
		if c.union == nil && c.gated() {
			// A gate's literals are found by the union automaton's pass,
			// which the rulebook does not have: the prefixes, as they are.
			for i := range c.rules {
				c.rules[i].gate = nil
			}
			if err := c.prefixAutomata(&col); err != nil {
				return nil, err
			}
		}
	}
	c.asciiNib = nibbleTablesOf(&c.ascii)
	c.viewTabs = [3]*[256]byte{&identity, &c.ascii, &c.asciiLeet}
	for kind, tab := range c.viewTabs {
		for a := range c.preimage[kind] {
			c.preimage[kind][a] = noPreimage
		}
		for b := range 128 {
			if c.prefixAC != nil {
				c.prefixCols[kind][b] = c.prefixAC.col[tab[b]]
			}
			switch pre := &c.preimage[kind][tab[b]]; *pre {
			case noPreimage:
				*pre = int16(b)
			default:
				*pre = manyPreimages
			}
		}
		if c.ac != nil {
			c.keywordLit[kind] = c.ac.litBytes(&c.keywordCols[kind])
		}
		if c.prefixAC != nil {
			c.prefixLit[kind] = c.prefixAC.litBytes(&c.prefixCols[kind])
		}
	}
	for i := range c.rules {
		r := &c.rules[i]
		if !r.hasPrefix || r.atStart {
			continue
		}
		var lists [][]byte
		for _, p := range r.prefixes {
			var bs []byte
			for _, a := range p {
				if c.preimage[viewASCII][a] == noPreimage && !slices.Contains(bs, a) {
					bs = append(bs, a)
				}
			}
			if bs == nil {
				break // an ASCII text can hold this prefix
			}
			lists = append(lists, bs)
		}
		if len(lists) == len(r.prefixes) {
			r.nonASCII = lists
		}
	}
	// The rules each literal can activate, and the ones that need no
	// literal: among them every rule on the backtracking engine, which
	// without the alphabet is every rule.
	ruleWords := (len(c.rules) + 63) / 64
	c.litRules = make([][]uint64, len(c.literals))
	c.unconditional = make([]uint64, ruleWords)
	for i := range c.rules {
		r := &c.rules[i]
		for _, conj := range required[i] {
			mask := make([]uint64, (len(c.literals)+63)/64)
			for _, l := range conj {
				mask[l>>6] |= 1 << (l & 63)
				if c.litRules[l] == nil {
					c.litRules[l] = make([]uint64, ruleWords)
				}
				c.litRules[l][i>>6] |= 1 << (i & 63)
			}
			r.requiredMasks = append(r.requiredMasks, mask)
		}
		if len(required[i]) == 0 {
			c.unconditional[i>>6] |= 1 << (i & 63)
		}
	}
	c.reachLit = make([]bool, len(c.literals))
	if filters.reach {
		c.reachRules(required)
	}
	return c, nil
}

// mayOccur reports whether a prefix of r can occur in a view whose units
// from 128 up read as the bytes held: r has no nonASCII lists, or one
// prefix's list is all held.
func (r *rule) mayOccur(held *byteSet) bool {
	if r.nonASCII == nil {
		return true
	}
	for _, bs := range r.nonASCII {
		if !slices.ContainsFunc(bs, func(a byte) bool { return !held.has(a) }) {
			return true
		}
	}
	return false
}

// anchored returns the anchored forms for views read through tabs
// (compiled.viewTabs), compiling them on first use. They are the plain form
// with a fixed prefix, so they compile when it did.
func (r *rule) anchored(tabs *[3]*[256]byte) (anch0, anchN *anchoredDFA) {
	r.anchorsOnce.Do(func() {
		r.anch0 = mustCompileDFA(`\A(?:`+r.src+`)`, tabs)
		r.anchN = mustCompileDFA(`\A(?s:.)(?:`+r.src+`)`, tabs)
	})
	return r.anch0, r.anchN
}

// afterByte returns the form that seeks a match after one byte of
// context, compiling it on first use.
func (r *rule) afterByte() *regexp.Regexp {
	r.scanNOnce.Do(func() { r.scanN = regexp.MustCompile(`(?s:.)(?:` + r.src + `)`) })
	return r.scanN
}

// compileFast sets up r on Go's regexp from its translation and returns
// the conjuncts of its required literals, as ids that litID gives.
func (r *rule) compileFast(tp *jsregex.Translated, litID func(string) int) (required [][]int, err error) {
	// regexp.Compile, never CompilePOSIX: leftmost-first is the
	// backtracking engines' choice among matches at one start.
	if r.scan0, err = regexp.Compile(tp.Go); err != nil {
		return nil, err
	}
	r.src = tp.Go
	lits := &tp.Literals
	r.maxLen = lits.MaxLen
	for _, conj := range lits.Required {
		ids := make([]int, len(conj))
		for i, s := range conj {
			ids[i] = litID(s)
		}
		required = append(required, ids)
	}
	if lits.HasPrefixes {
		r.hasPrefix, r.atStart = true, lits.AtStart
		for _, s := range lits.Prefixes {
			r.prefixes = append(r.prefixes, []byte(s))
		}
		r.prefixes = minimalPrefixes(r.prefixes)
	}
	r.fast = true
	return required, nil
}

// keywordColumns chooses the columns of the keyword automaton
// (columnsOf), setting keywordCols.
func (c *compiled) keywordColumns(col *byteCols, literals []string) (classes []int) {
	return columnsOf(c.alphabet, col, literals, &c.keywordCols)
}

// columnsOf chooses the columns of an automaton of literals. Only the
// classes that occur in a literal need columns of their own; every other
// byte reads as one class outside them. It sets cols for each kind of
// view, and returns every column's class, for newAhoCorasick.
func columnsOf(alpha *jsregex.Alphabet, col *byteCols, literals []string, cols *[3]byteCols) (classes []int) {
	var inLit [128]bool
	for _, l := range literals {
		for i := 0; i < len(l); i++ {
			inLit[col[l[i]]] = true
		}
	}
	outside := -1 // the class all bytes outside the literals read as
	classOf := func(class uint32) int {
		if inLit[class] {
			return int(class)
		}
		if outside < 0 {
			outside = int(class)
		}
		return outside
	}
	ids := map[int]uint32{}
	column := func(class int) uint32 {
		id, ok := ids[class]
		if !ok {
			id = uint32(len(classes))
			ids[class] = id
			classes = append(classes, class)
		}
		return id
	}
	// Columns are numbered in the order of their bytes' frequency in
	// English text, and rows padded to whole cache lines: the transitions
	// prose takes from a state then mostly share its row's first line.
	raw, leet, enc := &cols[viewASCII], &cols[viewLeet], &cols[viewEncoded]
	for _, b := range byFrequency {
		raw[b] = column(classOf(col[alpha.Byte[b]]))
	}
	for b := 0; b < 128; b++ {
		leet[b] = raw[b]
		if unitFlags[b]&fLeet != 0 {
			leet[b] = raw[leetTo[b]]
		}
	}
	for a := 0; a < 128; a++ {
		enc[a] = column(classOf(col[a]))
	}
	for len(classes)%16 != 0 { // 16 transitions of 4 bytes: a 64-byte line
		classes = append(classes, classes[0]) // read by no byte
	}
	return classes
}

// byFrequency lists the ASCII bytes from the most to the least frequent in
// English prose (roughly; the order only has to put the common ones first).
var byFrequency = func() []byte {
	order := []byte(" etaoinsrhldcumfpgwybvk,.\n'xjqzETAOINSRHLDCUMFPGWYBVKXJQZ0123456789-\"")
	seen := [128]bool{}
	for _, b := range order {
		seen[b] = true
	}
	for b := 0; b < 128; b++ {
		if !seen[b] {
			order = append(order, byte(b))
		}
	}
	return order
}()
