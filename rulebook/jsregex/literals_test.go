package jsregex

import (
	"slices"
	"testing"
)

// TestGate: the gate is the first part of a sequence that matches only a
// few strings of three bytes or more, after parts that match runs of single
// bytes; its run is every byte those parts can match.
func TestGate(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		lits    []string // as written; compared in the alphabet's bytes
		in, out string   // bytes of the run, and bytes outside it
	}{
		{`(^|\n)\s*(system|assistant|developer)\s*:`, []string{"system", "assistant", "developer"}, "\n \t\u00a0", "sa:x"},
		{`<\s*\/?\s*(system|developer)\s*>|\[\s*(system|developer)\s*\]|<<\s*SYS\s*>>`, []string{"system", "developer", "sys"}, "<[/ \n", "s>]x"},
		// The prefix itself is a gate, which the engine has no use for.
		{`\b(ignore|bypass)\b[^.\n]{0,40}\bprevious`, []string{"ignore", "bypass"}, "", "i \n"},
		{`\n[^.]*secret`, []string{"secret"}, "\nabc <", "."},
		{`\n\s*(sys)?tem`, []string{"system", "tem"}, "\n ", "sx"},
		{`x\bsecret`, []string{"xsecret"}, "", "xs"},
		{`\n(\s|ab)*system`, []string{"system"}, "\n ab", "xs"},
	} {
		p, err := Parse(tc.pattern, Flags{IgnoreCase: true})
		if err != nil {
			t.Fatal(err)
		}
		a, err := NewAlphabet(p.Sets())
		if err != nil {
			t.Fatal(err)
		}
		l := a.Analyze(p)
		if !l.HasGate {
			t.Errorf("%q: no gate", tc.pattern)
			continue
		}
		var want []string
		for _, s := range tc.lits {
			var enc []byte
			for _, u := range s {
				enc = append(enc, a.Byte[u])
			}
			want = append(want, string(enc))
		}
		slices.Sort(want)
		if !slices.Equal(l.GateLits, want) {
			t.Errorf("%q: gate literals %q, want %q", tc.pattern, l.GateLits, want)
		}
		for _, u := range tc.in {
			if !slices.Contains(l.GateRun, a.Byte[u]) {
				t.Errorf("%q: %q not in the run", tc.pattern, u)
			}
		}
		for _, u := range tc.out {
			if slices.Contains(l.GateRun, a.Byte[u]) {
				t.Errorf("%q: %q in the run", tc.pattern, u)
			}
		}
	}
	for _, pattern := range []string{
		`\n\s*(ab|cd)`,    // too short to be worth finding
		`(?<=x)\s*system`, // a look-behind
		`\n\s*(system)?x`, // no literal every match has
		`(\w)\s*\1system`, // a back-reference
		`a|\n\s*system`,   // a branch without one
	} {
		p, err := Parse(pattern, Flags{IgnoreCase: true})
		if err != nil {
			t.Fatal(err)
		}
		a, err := NewAlphabet(p.Sets())
		if err != nil {
			t.Fatal(err)
		}
		if l := a.Analyze(p); l.HasGate {
			t.Errorf("%q: gate %q", pattern, l.GateLits)
		}
	}
}
