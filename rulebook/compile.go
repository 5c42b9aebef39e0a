package rulebook

import (
	"fmt"

	"github.com/promptwall/promptwall/rulebook/jsregex"
)

// parsePattern parses a rule's pattern, as docs/SPEC.md section 2 runs every
// pattern: case-insensitively. Every pattern that parses can run: on Go's
// regexp when it can be translated, otherwise on the backtracking engine.
func parsePattern(r Rule) (*jsregex.Pattern, error) {
	flags, err := jsregex.ParseFlags(r.Flags)
	if err != nil {
		return nil, fmt.Errorf("rule %s: flags %q: %w", r.ID, r.Flags, err)
	}
	flags.IgnoreCase = true
	p, err := jsregex.Parse(r.Pattern, flags)
	if err != nil {
		return nil, fmt.Errorf("rule %s: pattern does not compile: %w", r.ID, err)
	}
	return p, nil
}

// Translation returns the rules' patterns translated for Go's regexp
// (jsregex.Translate), in rule order. It is made on the first call and
// shared: an engine compiled from the rulebook starts from it, and a
// process can make it ahead of time.
func (rb *Rulebook) Translation() *jsregex.Translation {
	rb.translate.Do(func() { rb.translation = jsregex.Translate(rb.patterns) })
	return rb.translation
}
