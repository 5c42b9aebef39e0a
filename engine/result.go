package engine

import (
	"github.com/promptwall/promptwall/rulebook"
)

// Verdict is the outcome of a scan (docs/SPEC.md section 5).
type Verdict string

// The three verdicts, from best to worst.
const (
	Safe       Verdict = "safe"
	Suspicious Verdict = "suspicious"
	Malicious  Verdict = "malicious"
)

// Rank orders verdicts: safe 0, suspicious 1, malicious 2.
func (v Verdict) Rank() int {
	switch v {
	case Malicious:
		return 2
	case Suspicious:
		return 1
	}
	return 0
}

// View names, in the order of docs/SPEC.md section 3.
const (
	ViewOriginal = "original"
	ViewLeet     = "leetspeak-folded"
	ViewPercent  = "percent-decoded"
	ViewBase64   = "base64-decoded"
)

// Match is one merged span of one rule (docs/SPEC.md section 4). Start and End are
// UTF-16 code unit positions in the scanned text, End exclusive.
type Match struct {
	Rule     string            `json:"rule"`
	Category string            `json:"category"`
	Severity rulebook.Severity `json:"severity"`
	Start    int               `json:"start"`
	End      int               `json:"end"`
	Views    []string          `json:"views"`
}

// Result is the engine's answer for one text (docs/SPEC.md section 8).
type Result struct {
	Verdict        Verdict        `json:"verdict"`
	Matches        []Match        `json:"matches"`
	CategoryCounts map[string]int `json:"category_counts"`
	// Sanitized is the sanitized copy as raw bytes: it keeps invalid UTF-8
	// of the input. JSON encodes it as a string (invalid bytes become
	// U+FFFD there; AppendJSON can write it as base64 where bytes matter).
	// When nothing was replaced it is the input itself, not a copy (for
	// ScanString, the string's memory): read it, never modify it.
	Sanitized []byte `json:"-"`
}

// MarshalJSON encodes the result in the shape of docs/SPEC.md section 8, with
// matches and category_counts never null.
func (r Result) MarshalJSON() ([]byte, error) {
	return AppendJSON(nil, r, false), nil
}
