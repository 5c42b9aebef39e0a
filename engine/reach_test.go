package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// inReachRef is inReach as intervals: each hit of a conjunct's literal
// that ends at e lets a match start in [e-maxLen, e-n], and a candidate is
// kept when every conjunct has an interval holding it.
func inReachRef(c *compiled, r *rule, cands []int32, hits []litHit) []int32 {
	out := slices.Clone(cands)
	for _, conj := range r.reach {
		var kept []int32
		for _, p := range out {
			in := false
			for _, h := range hits {
				if slices.Contains(conj, h.id) && h.end-int32(r.maxLen) <= p && p <= h.end-int32(len(c.literals[h.id])) {
					in = true
					break
				}
			}
			if in {
				kept = append(kept, p)
			}
		}
		out = kept
	}
	return out
}

// TestInReach: inReach keeps what the intervals keep, for the published
// rules it applies to, with random hits of their literals (out of order, as
// walk's chains find them) and random candidates, duplicates included.
func TestInReach(t *testing.T) {
	c := Default().c
	m := c.newMatcher()
	rng := rand.New(rand.NewPCG(41, 42))
	var rules []int
	for i := range c.rules {
		if c.rules[i].reach != nil {
			rules = append(rules, i)
		}
	}
	if len(rules) == 0 {
		t.Fatal("no rule with conjuncts in reach")
	}
	kept, dropped := 0, 0
	for range 20000 {
		i := rules[rng.IntN(len(rules))]
		r := &c.rules[i]
		span := 50 + rng.IntN(2000)
		m.khits = m.khits[:0]
		for range rng.IntN(20) {
			conj := r.reach[rng.IntN(len(r.reach))]
			m.khits = append(m.khits, litHit{int32(conj[rng.IntN(len(conj))]), int32(rng.IntN(span))})
		}
		for range rng.IntN(3) { // a literal of another rule's
			m.khits = append(m.khits, litHit{int32(rng.IntN(len(c.literals))), int32(rng.IntN(span))})
		}
		var cands []int32
		for range rng.IntN(30) {
			cands = append(cands, int32(rng.IntN(span)))
		}
		slices.Sort(cands)
		m.cands[i] = cands
		m.khitsKept, m.grouped = true, false
		want := inReachRef(c, r, cands, m.khits)
		got := c.inReach(m, i)
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("rule %s, candidates %v, hits %v: in reach %v, want %v", r.id, cands, m.khits, got, want)
		}
		kept += len(want)
		dropped += len(cands) - len(want)
	}
	if kept < 1000 || dropped < 1000 {
		t.Errorf("%d candidates kept, %d dropped: the cases do not tell", kept, dropped)
	}
}
