package engine

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestGateStarts holds gate.starts to its definition on random texts and
// hits: a start is a prefix byte (or 0, with atStart) from which a run of
// run bytes reaches a hit.
func TestGateStarts(t *testing.T) {
	var g gate
	for _, b := range " \t\n" {
		g.run[b] = true
	}
	g.start['\n'] = true
	rng := rand.New(rand.NewPCG(7, 8))
	for k := range 20000 {
		g.atStart = k%2 == 0
		src := make([]byte, rng.IntN(24))
		for i := range src {
			src[i] = " \n\txs"[rng.IntN(5)]
		}
		var hits []int32
		for p := range src {
			if rng.IntN(4) == 0 {
				hits = append(hits, int32(p))
				if rng.IntN(8) == 0 {
					hits = append(hits, int32(p)) // a repeat
				}
			}
		}
		// A prefix byte comes before its literal; at 0, with atStart, a
		// literal may begin the text.
		var want []int32
		for p := range src {
			for _, h := range hits {
				reaches := int(h) >= p && !strings.ContainsFunc(string(src[p:h]), func(r rune) bool { return !g.run[r] })
				if reaches && (g.start[src[p]] && int(h) > p || p == 0 && g.atStart) {
					want = append(want, int32(p))
					break
				}
			}
		}
		dst := []int32{-1} // starts appends
		got := g.starts(dst, hits, src, &identity)
		if got[0] != -1 || !slices.Equal(got[1:], want) {
			t.Fatalf("%q, hits %v, at start %v: starts %v, want %v", src, hits, g.atStart, got[1:], want)
		}
	}
}

// withFilters returns an engine of e's rulebook that narrows its rules'
// candidates with f's filters only.
func withFilters(t testing.TB, e *Engine, f candidateFilters) *Engine {
	c, err := compile(e.rb, f)
	if err != nil {
		t.Fatal(err)
	}
	sep := &Engine{rb: e.rb, c: c}
	sep.pool.New = func() any { return &scanState{m: c.newMatcher()} }
	return sep
}

// TestFiltersScanAlike scans the published corpora, long documents of
// them, and conformance vectors joined by white space and newlines (with
// some letters turned to leetspeak, so that a literal appears in the
// leetspeak view only) with the candidate filters and with each one left
// out: the results are the same. RH-1, RH-2 and TC-1 have gates, TC-2 and
// EX-2 reach conjuncts, and their rules match often enough to tell.
func TestFiltersScanAlike(t *testing.T) {
	e := Default()
	for _, id := range []string{"RH-1", "RH-2", "TC-1"} {
		if e.c.rules[e.ruleIndex(id)].gate == nil {
			t.Fatalf("%s has no gate", id)
		}
	}
	for _, id := range []string{"TC-2", "EX-2"} {
		if e.c.rules[e.ruleIndex(id)].reach == nil {
			t.Fatalf("%s has no reach conjuncts", id)
		}
	}
	others := map[string]*Engine{
		"without gates": withFilters(t, e, candidateFilters{reach: true}),
		"without reach": withFilters(t, e, candidateFilters{gates: true}),
		"without both":  withFilters(t, e, candidateFilters{}),
	}
	all := corpusAndDocuments(t)
	vs := loadVectors(t)
	rng := rand.New(rand.NewPCG(9, 10))
	gaps := []string{"\n", "\n\n", " \n  \n\t", "\n" + strings.Repeat(" \n", 40), " ", "\t\n", "<", "[ ", "\n\u00a0 ", " use the ", " run it. ", " reveal "}
	for range 3000 {
		var b []byte
		for range 1 + rng.IntN(6) {
			b = append(b, gaps[rng.IntN(len(gaps))]...)
			b = append(b, vs[rng.IntN(len(vs))].input(t)...)
		}
		for i, c := range b {
			if k := strings.IndexByte("oieastasOIEAST", c); k >= 0 && rng.IntN(6) == 0 {
				b[i] = "013457@$013457"[k]
			}
		}
		all = append(all, b)
	}
	matched := map[string]int{}
	for _, text := range all {
		got := e.Scan(text)
		for name, o := range others {
			if want := o.Scan(text); !reflect.DeepEqual(got, want) {
				t.Fatalf("%.120q: with the filters %+v, %s %+v", text, got.Matches, name, want.Matches)
			}
		}
		for _, m := range got.Matches {
			matched[m.Rule]++
		}
	}
	for _, id := range []string{"RH-1", "RH-2", "TC-1", "TC-2", "EX-2"} {
		if matched[id] < 50 {
			t.Errorf("%s matched %d times", id, matched[id])
		}
	}
}

// FuzzFilters: for any rulebook of two patterns and any text, the scan
// with the candidate filters is the scan without them.
func FuzzFilters(f *testing.F) {
	f.Add(`(^|\n)\s*(system|assistant)\s*:`, `<\s*\/?\s*(system|dev)\s*>|<<\s*SYS\s*>>`, []byte("x\n  system:\n\n 5y5tem :<< sys>> < /dev>\nassistant"))
	f.Add(`\n[^.]*secret`, `(^|[<\[])\s*(tool|fn)_?call`, []byte("a\nb secret. \n s3cret [ tool_call <fncall"))
	f.Add(`(^|\n)(\s|ab)*system`, `^\s*(?:x|y)tem`, []byte("\nabab system\n  ytem xtem"))
	f.Add(`\b(use|run)\b[^.\n]{0,30}\b(tool|function)\b`, `\bsend\b.{0,20}(keys?|seed)`, []byte("use the t00l. run a function now; send my k3ys, use it\nwith tool"))
	f.Add(`(ab|cd).{0,5}efgh.{0,5}ijkl`, `xy{1,3}zzzz`, []byte("ab--efgh--ijkl cd efgh ijkl ab ef9h 1jkl xyyyzzzz"))
	f.Fuzz(func(t *testing.T, p1, p2 string, text []byte) {
		if len(p1) > 200 || len(p2) > 200 || len(text) > 4000 {
			return
		}
		e, err := twoRuleEngine(t, p1, p2)
		if err != nil {
			return
		}
		if got, want := e.Scan(text), withFilters(t, e, candidateFilters{}).Scan(text); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: with the filters %+v, without %+v", text, got.Matches, want.Matches)
		}
	})
}
