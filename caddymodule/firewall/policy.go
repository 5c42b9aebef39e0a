package firewall

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/rulebook"
)

// ActionOff, for a rule or a category, lets its matches lead to no action:
// they are still reported (verdict header, rules header, log, metrics).
const ActionOff = "off"

// action is an action as a rank: a request takes the strongest action of
// its matches.
type action uint8

const (
	doNothing action = iota // off; also a safe request's
	doLog
	doSanitize
	doBlock
)

func parseAction(s string) (action, bool) {
	switch s {
	case ActionOff:
		return doNothing, true
	case ActionLog:
		return doLog, true
	case ActionSanitize:
		return doSanitize, true
	case ActionBlock:
		return doBlock, true
	}
	return 0, false
}

// policy gives each match its action: its rule's, else its category's,
// else that of its severity (on_malicious, on_suspicious).
type policy struct {
	malicious, suspicious action
	byRule, byCategory    map[string]action
	hold                  bool // of a response policy: holds(), computed once
}

// newPolicy checks the per-rule and per-category actions against the
// rulebook: a name it does not have is a typo that would relax nothing.
func newPolicy(f *Firewall, rb *rulebook.Rulebook) (*policy, error) {
	p := &policy{byRule: map[string]action{}, byCategory: map[string]action{}}
	var ok bool
	if p.malicious, ok = parseAction(f.OnMalicious); !ok || p.malicious == doNothing {
		return nil, fmt.Errorf("on_malicious: unknown action %q (want block, sanitize or log)", f.OnMalicious)
	}
	if p.suspicious, ok = parseAction(f.OnSuspicious); !ok || p.suspicious == doNothing {
		return nil, fmt.Errorf("on_suspicious: unknown action %q (want block, sanitize or log)", f.OnSuspicious)
	}
	rules := make([]string, len(rb.Rules))
	for i, r := range rb.Rules {
		rules[i] = r.ID
	}
	categories := make([]string, len(rb.Categories))
	for i, c := range rb.Categories {
		categories[i] = c.Name
	}
	for _, t := range []struct {
		what  string
		given map[string]string
		names []string
		into  map[string]action
	}{
		{"rule", f.RuleActions, rules, p.byRule},
		{"category", f.CategoryActions, categories, p.byCategory},
	} {
		for name, s := range t.given {
			a, ok := parseAction(s)
			if !ok {
				return nil, fmt.Errorf("%s %s: unknown action %q (want block, sanitize, log or off)", t.what, name, s)
			}
			if !slices.Contains(t.names, name) {
				return nil, fmt.Errorf("%s %q is not in rulebook %s (it has %s)", t.what, name, rb.ID, strings.Join(t.names, ", "))
			}
			t.into[name] = a
		}
	}
	return p, nil
}

// of returns the action of one match.
func (p *policy) of(m *engine.Match) action {
	if a, ok := p.byRule[m.Rule]; ok {
		return a
	}
	if a, ok := p.byCategory[m.Category]; ok {
		return a
	}
	if m.Severity == rulebook.Malicious {
		return p.malicious
	}
	return p.suspicious
}

// strongest returns the strongest action of ms.
func (p *policy) strongest(ms []engine.Match) action {
	a := doNothing
	for i := range ms {
		a = max(a, p.of(&ms[i]))
	}
	return a
}

// sanitized returns the copy of text without the matches of res that act
// (sanitize or block): res's own copy when that is every match.
func (p *policy) sanitized(e *engine.Engine, text string, res *engine.Result) string {
	keep := res.Matches[:0:0]
	all := true
	for i := range res.Matches {
		if p.of(&res.Matches[i]) >= doSanitize {
			keep = append(keep, res.Matches[i])
		} else {
			all = false
		}
	}
	b := res.Sanitized
	if !all || b == nil {
		b = e.Sanitize(unsafe.Slice(unsafe.StringData(text), len(text)), keep)
	}
	// The bytes are the result's (Result.Sanitized is read-only by its
	// contract) or new, and nothing keeps them past the request: a copy
	// would cost as much as the text again.
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// name is the action's Caddyfile and label name.
func (a action) name() string {
	switch a {
	case doLog:
		return ActionLog
	case doSanitize:
		return ActionSanitize
	case doBlock:
		return ActionBlock
	}
	return actionPass
}
