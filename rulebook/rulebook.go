// Package rulebook holds the published prompt-injection rulebook (v1,
// embedded byte for byte), loads custom rulebooks of the same schema,
// and validates them with errors that name the offending rule. Patterns are
// ECMAScript regular expressions, parsed by package jsregex.
package rulebook

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/promptwall/promptwall/rulebook/jsregex"
)

// Severity is how bad a match of a rule is.
type Severity string

// The two severities of the published schema.
const (
	Suspicious Severity = "suspicious"
	Malicious  Severity = "malicious"
)

// Rank orders severities: malicious > suspicious > anything else.
func (s Severity) Rank() int {
	switch s {
	case Malicious:
		return 2
	case Suspicious:
		return 1
	}
	return 0
}

// Rule is one published rule.
type Rule struct {
	ID          string   `json:"id"`
	Category    string   `json:"category"`
	Severity    Severity `json:"severity"`
	Description string   `json:"description"`
	Pattern     string   `json:"pattern"`
	Flags       string   `json:"flags"`
}

// Category is a named category with its description, in document order.
type Category struct {
	Name        string
	Description string
}

// Rulebook is a parsed and validated rulebook document.
type Rulebook struct {
	// ID is the document's rules_id, e.g. "prompt-injection-rules/v1".
	ID string
	// Version is the document's version string.
	Version string
	// Categories in the order the document defines them.
	Categories []Category
	// Rules in document order; a rule's index is its rulebook position.
	// Parse also parses their patterns, which Translation uses: a
	// Rulebook comes from Parse or Load, and its Rules stay as they are.
	Rules []Rule
	// Raw is the document exactly as loaded (served by GET /rules).
	Raw []byte

	patterns    []*jsregex.Pattern // per rule; only Translation uses them
	translate   sync.Once
	translation *jsregex.Translation
}

//go:embed prompt-injection-rules-v1.json
var v1 []byte

var (
	defaultOnce sync.Once
	defaultRB   *Rulebook
)

// Default returns the embedded published v1 rulebook. It is parsed once.
func Default() *Rulebook {
	defaultOnce.Do(func() {
		rb, err := Parse(v1)
		if err != nil {
			panic("embedded rulebook is invalid: " + err.Error())
		}
		defaultRB = rb
	})
	return defaultRB
}

// Load reads and validates a rulebook file.
func Load(path string) (*Rulebook, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading rulebook %s: %w", path, err)
	}
	rb, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("loading rulebook %s: %w", path, err)
	}
	return rb, nil
}

// document is the subset of the published schema the engine needs. The
// categories object is decoded separately to keep its order.
type document struct {
	RulesID    string          `json:"rules_id"`
	Version    string          `json:"version"`
	Categories json.RawMessage `json:"categories"`
	Rules      []Rule          `json:"rules"`
}

// Parse decodes and validates a rulebook document. Every pattern must
// compile; errors name the rule they concern.
func Parse(data []byte) (*Rulebook, error) {
	var doc document
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decoding rulebook: %w", err)
	}
	if dec.More() {
		return nil, errors.New("decoding rulebook: trailing data after the document")
	}
	if doc.RulesID == "" {
		return nil, errors.New("rulebook has no rules_id")
	}
	cats, err := orderedCategories(doc.Categories)
	if err != nil {
		return nil, err
	}
	if len(doc.Rules) == 0 {
		return nil, errors.New("rulebook has no rules")
	}
	known := make(map[string]bool, len(cats))
	for _, c := range cats {
		known[c.Name] = true
	}
	seen := make(map[string]int, len(doc.Rules))
	pats := make([]*jsregex.Pattern, len(doc.Rules))
	for i, r := range doc.Rules {
		if r.ID == "" {
			return nil, fmt.Errorf("rule #%d: missing id", i+1)
		}
		if j, dup := seen[r.ID]; dup {
			return nil, fmt.Errorf("rule %s: duplicate id (rules #%d and #%d)", r.ID, j+1, i+1)
		}
		seen[r.ID] = i
		if r.Severity != Malicious && r.Severity != Suspicious {
			return nil, fmt.Errorf("rule %s: unknown severity %q (want malicious or suspicious)", r.ID, r.Severity)
		}
		if !known[r.Category] {
			return nil, fmt.Errorf("rule %s: category %q is not defined in categories", r.ID, r.Category)
		}
		if r.Pattern == "" {
			return nil, fmt.Errorf("rule %s: empty pattern", r.ID)
		}
		if pats[i], err = parsePattern(r); err != nil {
			return nil, err
		}
	}
	rb := &Rulebook{
		ID:         doc.RulesID,
		Version:    doc.Version,
		Categories: cats,
		Rules:      doc.Rules,
		Raw:        append([]byte(nil), data...),
		patterns:   pats,
	}
	return rb, nil
}

// orderedCategories decodes the categories object keeping document order.
func orderedCategories(raw json.RawMessage) ([]Category, error) {
	if len(raw) == 0 {
		return nil, errors.New("rulebook has no categories")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("rulebook categories must be an object")
	}
	var cats []Category
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("decoding categories: %w", err)
		}
		name := tok.(string)
		var desc string
		if err := dec.Decode(&desc); err != nil {
			return nil, fmt.Errorf("category %q: description must be a string", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("category %q defined twice", name)
		}
		seen[name] = true
		cats = append(cats, Category{Name: name, Description: desc})
	}
	if len(cats) == 0 {
		return nil, errors.New("rulebook has no categories")
	}
	return cats, nil
}
