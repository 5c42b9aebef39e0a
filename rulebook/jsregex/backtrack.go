package jsregex

import (
	"fmt"
	"strings"
	"time"

	"github.com/dlclark/regexp2/v2"
)

// Backtracking compiles p for github.com/dlclark/regexp2/v2, matched over
// runes that are UTF-16 code units (one rune per unit); with the i flag
// the units must first be mapped through Canonicalize. It takes every
// pattern, look-arounds and back-references included, but is not linear:
// timeout bounds each match. The syntax is emitted from the parsed tree
// (sets spelled out and case-folded, \b as explicit look-arounds over
// [A-Za-z0-9_]) and compiled without .NET's IgnoreCase, whose folding
// differs (it maps the Kelvin sign to k), so no .NET semantics leak in.
func Backtracking(p *Pattern, timeout time.Duration) (*regexp2.Regexp, error) {
	p.Sets()
	var b strings.Builder
	e := btEmitter{b: &b, flags: p.Flags}
	e.groupNums = map[string]int{}
	e.number(p.Root, new(int))
	e.emit(p.Root)
	re, err := regexp2.Compile(b.String(), regexp2.RegexOptions(0))
	if err != nil {
		return nil, fmt.Errorf("compiling %q for the backtracking engine: %w", p.Original, err)
	}
	re.MatchTimeout = timeout
	return re, nil
}

type btEmitter struct {
	b         *strings.Builder
	flags     Flags
	groupNums map[string]int
}

// number assigns JavaScript's group numbers (left to right by opening
// parenthesis); named groups are emitted as numbered ones because .NET
// numbers named groups after unnamed ones.
func (e *btEmitter) number(n *Node, next *int) {
	if n.Op == OpGroup && n.Capture {
		*next++
		n.Ref = *next
		if n.Name != "" {
			e.groupNums[n.Name] = *next
		}
	}
	for _, s := range n.Subs {
		e.number(s, next)
	}
}

const btWord = `[A-Za-z0-9_]`

func (e *btEmitter) emit(n *Node) {
	b := e.b
	switch n.Op {
	case OpSet:
		writeUnitClass(b, n.Set)
	case OpConcat:
		for _, s := range n.Subs {
			e.emit(s)
		}
	case OpAlternate:
		b.WriteString("(?:")
		for i, s := range n.Subs {
			if i > 0 {
				b.WriteByte('|')
			}
			e.emit(s)
		}
		b.WriteByte(')')
	case OpGroup:
		if n.Capture {
			b.WriteByte('(')
		} else {
			b.WriteString("(?:")
		}
		e.emit(n.Subs[0])
		b.WriteByte(')')
	case OpRepeat:
		b.WriteString("(?:")
		e.emit(n.Subs[0])
		b.WriteByte(')')
		if n.Max == -1 {
			fmt.Fprintf(b, "{%d,}", n.Min)
		} else {
			fmt.Fprintf(b, "{%d,%d}", n.Min, n.Max)
		}
		if !n.Greedy {
			b.WriteByte('?')
		}
	case OpBegin:
		if e.flags.Multiline {
			b.WriteString(`(?<![^\n\r\u2028\u2029])`)
		} else {
			b.WriteString(`\A`)
		}
	case OpEnd:
		if e.flags.Multiline {
			b.WriteString(`(?![^\n\r\u2028\u2029])`)
		} else {
			b.WriteString(`\z`)
		}
	case OpWordBoundary:
		b.WriteString(`(?:(?<=` + btWord + `)(?!` + btWord + `)|(?<!` + btWord + `)(?=` + btWord + `))`)
	case OpNoWordBoundary:
		b.WriteString(`(?:(?<=` + btWord + `)(?=` + btWord + `)|(?<!` + btWord + `)(?!` + btWord + `))`)
	case OpLookahead, OpLookbehind:
		b.WriteString("(?")
		if n.Op == OpLookbehind {
			b.WriteByte('<')
		}
		if n.Negate {
			b.WriteByte('!')
		} else {
			b.WriteByte('=')
		}
		e.emit(n.Subs[0])
		b.WriteByte(')')
	case OpBackref:
		num := n.Ref
		if n.Name != "" {
			num = e.groupNums[n.Name]
		}
		// (?:) keeps a following digit from extending the number.
		fmt.Fprintf(b, `\%d(?:)`, num)
	case OpEmpty:
		b.WriteString(`(?:)`)
	}
}

// writeUnitClass spells a set as a .NET class of \uXXXX ranges.
func writeUnitClass(b *strings.Builder, s *Set) {
	if s.Len() == 0 {
		b.WriteString(`[^\u0000-\uFFFF]`)
		return
	}
	b.WriteByte('[')
	start := -1
	for u := 0; u <= 1<<16; u++ {
		// Whole words of 64 units that continue the current state are skipped.
		if u&63 == 0 && u < 1<<16 {
			if w := s[u>>6]; w == 0 && start < 0 || w == ^uint64(0) && start >= 0 {
				u += 63
				continue
			}
		}
		in := u < 1<<16 && s.Has(uint16(u))
		switch {
		case in && start < 0:
			start = u
		case !in && start >= 0:
			fmt.Fprintf(b, `\u%04X`, start)
			if u-1 > start {
				fmt.Fprintf(b, `-\u%04X`, u-1)
			}
			start = -1
		}
	}
	b.WriteByte(']')
}
