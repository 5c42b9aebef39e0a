package rulebook

import (
	"fmt"

	"github.com/promptwall/promptwall/rulebook/jsregex"
)

// checkPattern reports whether a rule's pattern is an ECMAScript regular
// expression the engine can run. Every pattern that parses can run: on Go's
// regexp when it can be translated, otherwise on the backtracking engine
// (the engine compiles it either way; this check is only the syntax, so a
// process does not pay for compiling twice).
func checkPattern(r Rule) error {
	flags, err := jsregex.ParseFlags(r.Flags)
	if err != nil {
		return fmt.Errorf("rule %s: flags %q: %w", r.ID, r.Flags, err)
	}
	flags.IgnoreCase = true
	if _, err := jsregex.Parse(r.Pattern, flags); err != nil {
		return fmt.Errorf("rule %s: pattern does not compile: %w", r.ID, err)
	}
	return nil
}
