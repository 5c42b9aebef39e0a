package rulebook

import (
	"fmt"

	"github.com/promptwall/promptwall/rulebook/jsregex"
)

// checkPattern reports whether a rule's pattern is an ECMAScript regular
// expression the engine can run: it parses, and it compiles at least for the
// backtracking engine (the engine prefers a linear one when it can).
func checkPattern(r Rule) error {
	flags, err := jsregex.ParseFlags(r.Flags)
	if err != nil {
		return fmt.Errorf("rule %s: flags %q: %w", r.ID, r.Flags, err)
	}
	flags.IgnoreCase = true
	p, err := jsregex.Parse(r.Pattern, flags)
	if err != nil {
		return fmt.Errorf("rule %s: pattern does not compile: %w", r.ID, err)
	}
	if _, err := jsregex.Backtracking(p, 0); err != nil {
		return fmt.Errorf("rule %s: pattern does not compile: %w", r.ID, err)
	}
	return nil
}
