package jsregex

import "strconv"

// Escapes and character classes: the parts of the grammar where Annex B
// and case folding make ECMAScript differ most from other dialects.

func (p *parser) escape() (*Node, bool, error) {
	p.pos++ // backslash
	if !p.more() {
		return nil, false, p.errf("\\ at end of pattern")
	}
	c := p.peek()
	switch c {
	case 'b':
		p.pos++
		n, err := p.node(&Node{Op: OpWordBoundary})
		return n, false, err
	case 'B':
		p.pos++
		n, err := p.node(&Node{Op: OpNoWordBoundary})
		return n, false, err
	case 'k':
		if len(p.names) > 0 || p.hasNamedGroups() {
			p.pos++
			if !p.more() || p.peek() != '<' {
				return nil, false, p.errf("invalid named reference")
			}
			p.pos++
			name, err := p.groupName()
			if err != nil {
				return nil, false, err
			}
			p.needBT = true
			n, err := p.node(&Node{Op: OpBackref, Name: name})
			p.refs = append(p.refs, n)
			return n, true, err
		}
	}
	if c >= '1' && c <= '9' {
		save := p.pos
		num, _ := p.digits()
		if num <= p.groups {
			p.needBT = true
			n, err := p.node(&Node{Op: OpBackref, Ref: num})
			return n, true, err
		}
		p.pos = save // Annex B: an octal escape or an identity escape
	}
	set, err := p.classEscape(false)
	if err != nil {
		return nil, false, err
	}
	n, err := p.node(&Node{Op: OpSet, Set: set})
	return n, true, err
}

func (p *parser) hasNamedGroups() bool {
	for i := 0; i+2 < len(p.src); i++ {
		if p.src[i] == '(' && p.src[i+1] == '?' && p.src[i+2] == '<' && i+3 < len(p.src) && p.src[i+3] != '=' && p.src[i+3] != '!' {
			return true
		}
	}
	return false
}

// classEscape reads the escape after a backslash (already consumed) as a
// set of code units. inClass changes \b (backspace) and \- handling.
func (p *parser) classEscape(inClass bool) (*Set, error) {
	c := p.peek()
	p.pos++
	switch c {
	case 'd':
		return digitSet(), nil
	case 'D':
		return digitSet().Complement(), nil
	case 's':
		return SpaceSet(), nil
	case 'S':
		return SpaceSet().Complement(), nil
	case 'w':
		return WordSet(), nil
	case 'W':
		return WordSet().Complement(), nil
	case 't':
		return SetOf('\t'), nil
	case 'n':
		return SetOf('\n'), nil
	case 'v':
		return SetOf('\v'), nil
	case 'f':
		return SetOf('\f'), nil
	case 'r':
		return SetOf('\r'), nil
	case 'b':
		if inClass {
			return SetOf('\b'), nil
		}
	case 'c':
		if p.more() {
			l := p.peek() | 0x20
			if l >= 'a' && l <= 'z' || inClass && (p.peek() >= '0' && p.peek() <= '9' || p.peek() == '_') {
				p.pos++
				return SetOf(p.src[p.pos-1] % 32), nil
			}
		}
		p.pos-- // Annex B: "\c" is a backslash followed by c
		return SetOf('\\'), nil
	case 'x':
		if v, ok := p.hex(2); ok {
			return SetOf(uint16(v)), nil
		}
		return SetOf('x'), nil
	case 'u':
		if v, ok := p.hex(4); ok {
			return SetOf(uint16(v)), nil
		}
		return SetOf('u'), nil
	case '0', '1', '2', '3', '4', '5', '6', '7':
		// Annex B legacy octal: up to three digits, value at most 0377.
		v := int(c - '0')
		for i := 0; i < 2 && p.more() && p.peek() >= '0' && p.peek() <= '7'; i++ {
			nv := v*8 + int(p.peek()-'0')
			if nv > 0377 {
				break
			}
			v = nv
			p.pos++
		}
		return SetOf(uint16(v)), nil
	}
	return SetOf(c), nil // identity escape
}

func (p *parser) hex(n int) (int, bool) {
	if p.pos+n > len(p.src) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(utf16ToRunes(p.src[p.pos:p.pos+n])), 16, 32)
	if err != nil {
		return 0, false
	}
	p.pos += n
	return int(v), true
}

func (p *parser) class() (*Node, error) {
	p.pos++ // [
	negate := false
	if p.more() && p.peek() == '^' {
		negate = true
		p.pos++
	}
	set := &Set{}
	for {
		if !p.more() {
			return nil, p.errf("unterminated character class")
		}
		if p.peek() == ']' {
			p.pos++
			break
		}
		lo, loSingle, err := p.classAtom()
		if err != nil {
			return nil, err
		}
		if p.more() && p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
			p.pos++
			hi, hiSingle, err := p.classAtom()
			if err != nil {
				return nil, err
			}
			if loSingle >= 0 && hiSingle >= 0 {
				if hiSingle < loSingle {
					return nil, p.errf("range out of order in character class")
				}
				set.AddRange(uint16(loSingle), uint16(hiSingle))
				continue
			}
			// Annex B: a class escape at either end makes '-' a literal.
			set.Union(lo)
			set.Add('-')
			set.Union(hi)
			continue
		}
		set.Union(lo)
	}
	return p.node(&Node{Op: OpSet, Set: set, Inverted: negate})
}

// classAtom reads one class atom; single is its code unit, or -1 when it
// is a class escape such as \d.
func (p *parser) classAtom() (*Set, int, error) {
	c := p.peek()
	if c != '\\' {
		p.pos++
		return SetOf(c), int(c), nil
	}
	p.pos++
	if !p.more() {
		return nil, 0, p.errf("\\ at end of pattern")
	}
	switch p.peek() {
	case 'd', 'D', 's', 'S', 'w', 'W':
		s, err := p.classEscape(true)
		return s, -1, err
	case '-':
		p.pos++
		return SetOf('-'), '-', nil
	}
	s, err := p.classEscape(true)
	if err != nil {
		return nil, 0, err
	}
	return s, s.Single(), nil
}
