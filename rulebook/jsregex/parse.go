// Package jsregex parses ECMAScript regular expressions (non-unicode mode,
// with the Annex B extensions browsers and Node accept) into a small syntax
// tree over UTF-16 code units, so that they can be run by an engine other
// than V8 with V8's results: case folding, `\s`, `\b` and `.` are resolved
// here into explicit sets of code units, exactly as ECMAScript defines them.
package jsregex

import (
	"fmt"
)

// Op is the kind of a Node.
type Op uint8

// Node kinds.
const (
	OpSet            Op = iota // one code unit from Set
	OpConcat                   // Subs in sequence
	OpAlternate                // Subs in order of preference
	OpRepeat                   // Subs[0] repeated Min..Max (Max -1: no bound)
	OpGroup                    // Subs[0]; Capture says whether it numbers a group
	OpBegin                    // ^ (start of input without the m flag)
	OpEnd                      // $ (end of input without the m flag)
	OpWordBoundary             // \b
	OpNoWordBoundary           // \B
	OpLookahead                // (?=...) or, Negate, (?!...)
	OpLookbehind               // (?<=...) or, Negate, (?<!...)
	OpBackref                  // \1 or \k<name>
	OpEmpty                    // matches the empty string
)

// Node is a node of the syntax tree.
type Node struct {
	Op  Op
	Set *Set // OpSet
	// Inverted marks a negated class [^...]: Set holds the class's own
	// members, and the node matches what does not match them, which under
	// the i flag is the complement of the folded set, not the folded
	// complement (ECMAScript's CharacterSetMatcher with invert).
	Inverted bool
	Subs     []*Node
	Min      int // OpRepeat
	Max      int // OpRepeat; -1 for no upper bound
	Greedy   bool
	Capture  bool   // OpGroup
	Negate   bool   // lookarounds
	Ref      int    // OpBackref: group number (0 when by name)
	Name     string // OpBackref by name, or a named group
}

// Pattern is a parsed regular expression.
type Pattern struct {
	Root     *Node
	Groups   int  // number of capturing groups
	NeedsBT  bool // uses look-arounds or back-references: needs a backtracking engine
	Flags    Flags
	Original string

	folded bool   // OpSet nodes are case-folded (see Sets)
	sets   []*Set // every OpSet node's set
}

// Flags are the regular expression flags that change matching.
type Flags struct {
	IgnoreCase bool // i
	Multiline  bool // m
	DotAll     bool // s
}

// ParseFlags reads a flags string. g and y are accepted and ignored (the
// engine always finds all matches); u and v change the syntax itself and are
// refused, as is any repeated or unknown flag.
func ParseFlags(s string) (Flags, error) {
	var f Flags
	seen := map[rune]bool{}
	for _, c := range s {
		if seen[c] {
			return f, fmt.Errorf("flag %q repeated", c)
		}
		seen[c] = true
		switch c {
		case 'i':
			f.IgnoreCase = true
		case 'm':
			f.Multiline = true
		case 's':
			f.DotAll = true
		case 'g', 'y', 'd':
		default:
			return f, fmt.Errorf("unsupported flag %q", c)
		}
	}
	return f, nil
}

// SyntaxError reports where a pattern is malformed.
type SyntaxError struct {
	Pos int // UTF-16 unit offset in the pattern
	Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid regular expression at position %d: %s", e.Pos, e.Msg)
}

// maxNodes bounds the size of a parsed pattern, so that a hostile custom
// rulebook cannot make compilation take unbounded memory.
const maxNodes = 1 << 16

type parser struct {
	src    []uint16
	pos    int
	groups int
	names  map[string]bool
	nodes  int
	flags  Flags
	needBT bool
	refs   []*Node
}

// Parse parses pattern with flags.
func Parse(pattern string, flags Flags) (p *Pattern, err error) {
	ps := &parser{src: utf16Units(pattern), names: map[string]bool{}, flags: flags}
	ps.countGroups()
	root, err := ps.disjunction()
	if err != nil {
		return nil, err
	}
	if ps.pos < len(ps.src) {
		return nil, ps.errf("unmatched ')'")
	}
	for _, r := range ps.refs {
		if r.Name != "" && !ps.names[r.Name] {
			return nil, ps.errf("back-reference to unknown group %q", r.Name)
		}
	}
	return &Pattern{Root: root, Groups: ps.groups, NeedsBT: ps.needBT, Flags: flags, Original: pattern}, nil
}

func (p *parser) errf(format string, args ...any) error {
	return &SyntaxError{Pos: p.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) node(n *Node) (*Node, error) {
	p.nodes++
	if p.nodes > maxNodes {
		return nil, p.errf("pattern too large")
	}
	return n, nil
}

func (p *parser) more() bool { return p.pos < len(p.src) }
func (p *parser) peek() uint16 {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}
func (p *parser) lookingAt(s string) bool {
	if p.pos+len(s) > len(p.src) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if p.src[p.pos+i] != uint16(s[i]) {
			return false
		}
	}
	return true
}

// countGroups counts capturing groups in advance: in Annex B, \N is a
// back-reference only when N is at most the total number of groups.
func (p *parser) countGroups() {
	inClass := false
	total := 0
	for i := 0; i < len(p.src); i++ {
		switch c := p.src[i]; {
		case c == '\\':
			i++
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		case c == '(' && !inClass:
			if i+1 < len(p.src) && p.src[i+1] == '?' {
				if i+2 < len(p.src) && p.src[i+2] == '<' && i+3 < len(p.src) && p.src[i+3] != '=' && p.src[i+3] != '!' {
					total++
				}
				continue
			}
			total++
		}
	}
	p.groups = total
}

func (p *parser) disjunction() (*Node, error) {
	var alts []*Node
	for {
		a, err := p.alternative()
		if err != nil {
			return nil, err
		}
		alts = append(alts, a)
		if p.more() && p.peek() == '|' {
			p.pos++
			continue
		}
		break
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return p.node(&Node{Op: OpAlternate, Subs: alts})
}

func (p *parser) alternative() (*Node, error) {
	var terms []*Node
	for p.more() && p.peek() != '|' && p.peek() != ')' {
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
	switch len(terms) {
	case 0:
		return p.node(&Node{Op: OpEmpty})
	case 1:
		return terms[0], nil
	}
	return p.node(&Node{Op: OpConcat, Subs: terms})
}

func (p *parser) term() (*Node, error) {
	start := p.pos
	atom, quantifiable, err := p.atom()
	if err != nil {
		return nil, err
	}
	min, max, greedy, ok, err := p.quantifier()
	if err != nil {
		return nil, err
	}
	if !ok {
		return atom, nil
	}
	if !quantifiable {
		p.pos = start
		return nil, p.errf("nothing to repeat")
	}
	return p.node(&Node{Op: OpRepeat, Subs: []*Node{atom}, Min: min, Max: max, Greedy: greedy})
}

// quantifier reads *, +, ?, {n}, {n,}, {n,m} and a lazy '?'. A '{' that
// does not form a quantifier is left for atom to read as a literal (Annex B).
func (p *parser) quantifier() (min, max int, greedy, ok bool, err error) {
	if !p.more() {
		return
	}
	switch p.peek() {
	case '*':
		min, max = 0, -1
		p.pos++
	case '+':
		min, max = 1, -1
		p.pos++
	case '?':
		min, max = 0, 1
		p.pos++
	case '{':
		save := p.pos
		p.pos++
		lo, okLo := p.digits()
		if !okLo {
			p.pos = save
			return
		}
		hi := lo
		if p.more() && p.peek() == ',' {
			p.pos++
			if p.more() && p.peek() == '}' {
				hi = -1
			} else if h, okHi := p.digits(); okHi {
				hi = h
			} else {
				p.pos = save
				return
			}
		}
		if !p.more() || p.peek() != '}' {
			p.pos = save
			return
		}
		p.pos++
		if hi != -1 && hi < lo {
			return 0, 0, false, false, p.errf("numbers out of order in {} quantifier")
		}
		min, max = lo, hi
	default:
		return
	}
	greedy, ok = true, true
	if p.more() && p.peek() == '?' {
		greedy = false
		p.pos++
	}
	return
}

// digits reads a decimal number, saturating far above any repeat bound an
// engine accepts (the compiler refuses large bounds with a clear error).
func (p *parser) digits() (int, bool) {
	start := p.pos
	n := 0
	for p.more() && p.peek() >= '0' && p.peek() <= '9' {
		if n < 1<<30 {
			n = n*10 + int(p.peek()-'0')
		}
		p.pos++
	}
	return n, p.pos > start
}

func (p *parser) atom() (n *Node, quantifiable bool, err error) {
	c := p.peek()
	switch c {
	case '^':
		p.pos++
		n, err = p.node(&Node{Op: OpBegin})
		return n, false, err
	case '$':
		p.pos++
		n, err = p.node(&Node{Op: OpEnd})
		return n, false, err
	case '.':
		p.pos++
		n, err = p.node(&Node{Op: OpSet, Set: dotSet(p.flags.DotAll)})
		return n, true, err
	case '[':
		n, err = p.class()
		return n, true, err
	case '(':
		return p.group()
	case '\\':
		return p.escape()
	case '*', '+', '?':
		return nil, false, p.errf("nothing to repeat")
	case '{':
		// Annex B: a '{' that is not a quantifier is a literal, but one
		// that is a well-formed quantifier here has nothing to repeat.
		save := p.pos
		if _, _, _, ok, _ := p.quantifier(); ok {
			p.pos = save
			return nil, false, p.errf("nothing to repeat")
		}
		p.pos = save + 1
		n, err = p.node(&Node{Op: OpSet, Set: single(c)})
		return n, true, err
	}
	p.pos++
	n, err = p.node(&Node{Op: OpSet, Set: single(c)})
	return n, true, err
}

func (p *parser) group() (*Node, bool, error) {
	p.pos++ // (
	g := &Node{Op: OpGroup}
	switch {
	case p.lookingAt("?:"):
		p.pos += 2
	case p.lookingAt("?="), p.lookingAt("?!"):
		g.Op, g.Negate = OpLookahead, p.src[p.pos+1] == '!'
		p.pos += 2
		p.needBT = true
	case p.lookingAt("?<="), p.lookingAt("?<!"):
		g.Op, g.Negate = OpLookbehind, p.src[p.pos+2] == '!'
		p.pos += 3
		p.needBT = true
	case p.lookingAt("?<"):
		p.pos += 2
		name, err := p.groupName()
		if err != nil {
			return nil, false, err
		}
		if p.names[name] {
			return nil, false, p.errf("duplicate group name %q", name)
		}
		p.names[name] = true
		g.Capture, g.Name = true, name
	case p.lookingAt("?"):
		return nil, false, p.errf("invalid group")
	default:
		g.Capture = true
	}
	sub, err := p.disjunction()
	if err != nil {
		return nil, false, err
	}
	if !p.more() || p.peek() != ')' {
		return nil, false, p.errf("unterminated group")
	}
	p.pos++
	g.Subs = []*Node{sub}
	n, err := p.node(g)
	// Annex B lets lookaheads be quantified; look-behinds may not be.
	return n, g.Op != OpLookbehind, err
}

func (p *parser) groupName() (string, error) {
	start := p.pos
	for p.more() && p.peek() != '>' {
		c := p.peek()
		if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && p.pos > start || c >= 0x80) {
			return "", p.errf("invalid group name")
		}
		p.pos++
	}
	if !p.more() || p.pos == start {
		return "", p.errf("invalid group name")
	}
	name := string(utf16ToRunes(p.src[start:p.pos]))
	p.pos++
	return name, nil
}
