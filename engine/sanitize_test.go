package engine

import (
	"bytes"
	"testing"
)

// TestSanitizeMatchesScan: with a result's own matches, Sanitize writes
// the result's sanitized copy, on every conformance vector.
func TestSanitizeMatchesScan(t *testing.T) {
	e := Default()
	n := 0
	for _, v := range loadVectors(t) {
		raw := v.input(t)
		res := e.Scan(raw)
		if got := e.Sanitize(raw, res.Matches); !bytes.Equal(got, res.Sanitized) {
			t.Fatalf("%s: Sanitize %q, Scan %q", v.ID, got, res.Sanitized)
		}
		if len(res.Matches) > 0 {
			n++
		}
	}
	if n < 1000 {
		t.Fatalf("only %d vectors had matches", n)
	}
}

// TestSanitizeSubsets: a subset of the matches replaces only its spans,
// pieces of a match cut at a part's edge are replaced like matches, and
// matches that are not the engine's or not in the text are ignored.
func TestSanitizeSubsets(t *testing.T) {
	e := Default()
	for _, tc := range []struct {
		name, raw string
		ms        []Match
		want      string
	}{
		{"none", "abc", nil, "abc"},
		{"one of two", "aa ignore bb", []Match{{Rule: "IO-1", Start: 3, End: 9}}, "aa [removed: instruction_override] bb"},
		{"touching form one group", "abcdef", []Match{{Rule: "EX-3", Start: 0, End: 3}, {Rule: "IO-1", Start: 3, End: 6}},
			"[removed: instruction_override]"},
		{"piece at the end", "hello world", []Match{{Rule: "IO-1", Start: 6, End: 11}}, "hello [removed: instruction_override]"},
		{"non-ASCII positions are units", "é😀 tail", []Match{{Rule: "IO-1", Start: 1, End: 3}}, "é[removed: instruction_override] tail"},
		{"unknown rule", "abc", []Match{{Rule: "ZZ-9", Start: 0, End: 1}}, "abc"},
		{"outside the text", "abc", []Match{{Rule: "IO-1", Start: 2, End: 9}}, "abc"},
		{"empty span", "abc", []Match{{Rule: "IO-1", Start: 1, End: 1}}, "abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(e.Sanitize([]byte(tc.raw), tc.ms)); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
