package engine

import (
	"math/rand/v2"
	"reflect"
	"regexp"
	"regexp/syntax"
	"slices"
	"testing"
)

// TestDFAMatchesRegexp: for every rule's anchored forms, the DFA reports
// the end FindIndex reports, at the word starts of every conformance
// vector's text and of mutated copies, with a roomy cache and with one
// that must start over every few states. ASCII texts are also read as
// they are and through the leetspeak folding (viewASCII, viewLeet).
func TestDFAMatchesRegexp(t *testing.T) {
	c := Default().c
	type viewText struct {
		src, enc []byte
		kind     viewKind
	}
	var texts []viewText
	rng := rand.New(rand.NewPCG(7, 9))
	for _, v := range loadVectors(t) {
		var tx text
		decodeText(v.input(t), &tx)
		enc := make([]byte, tx.len())
		for i := range enc {
			enc[i] = c.byteOf(tx.at(i))
		}
		texts = append(texts, viewText{enc, enc, viewEncoded})
		// A copy with a few units swapped for random alphabet bytes,
		// which makes near misses.
		mut := append([]byte(nil), enc...)
		for range len(mut)/16 + 1 {
			if len(mut) > 0 {
				mut[rng.IntN(len(mut))] = c.ascii[rng.IntN(128)]
			}
		}
		texts = append(texts, viewText{mut, mut, viewEncoded})
		if tx.ascii {
			for _, kind := range []viewKind{viewASCII, viewLeet} {
				enc := make([]byte, len(tx.raw))
				mapBytes(enc, tx.raw, c.viewTabs[kind])
				texts = append(texts, viewText{tx.raw, enc, kind})
			}
		}
	}
	matches := 0
	for ri := range c.rules {
		r := &c.rules[ri]
		if r.scan0 == nil {
			continue // on the backtracking path
		}
		d0, dN := r.anchored(&c.viewTabs)
		for form, expr := range []string{`\A(?:` + r.src + `)`, `\A(?s:.)(?:` + r.src + `)`} {
			re := regexp.MustCompile(expr)
			d := d0
			if form == 1 {
				d = dN
			}
			roomy, tiny := newDFACache(d), newDFACache(d)
			tiny.maxStates = 4
			for _, tx := range texts {
				enc := tx.enc
				for p := 0; p < len(enc); p++ {
					if p > 0 && isWordByte(enc[p-1]) == isWordByte(enc[p]) && rng.IntN(8) != 0 {
						continue
					}
					want := -1
					if loc := re.FindIndex(enc[p:]); loc != nil {
						want = loc[1]
						matches++
					}
					if got := roomy.end(tx.src[p:], tx.kind); got != want {
						t.Fatalf("rule %s form %d at %d of %q (view %d): DFA end %d, regexp %d", r.id, form, p, tx.src, tx.kind, got, want)
					}
					if got := tiny.end(tx.src[p:], tx.kind); got != want {
						t.Fatalf("rule %s form %d at %d of %q (view %d): DFA (tiny cache) end %d, regexp %d", r.id, form, p, tx.src, tx.kind, got, want)
					}
					if len(tiny.prev) > tiny.maxStates || len(roomy.prev) > roomy.maxStates || len(roomy.pcs) > dfaMaxThreads {
						t.Fatalf("rule %s form %d: caches past their bounds: %d and %d states, %d threads", r.id, form, len(tiny.prev), len(roomy.prev), len(roomy.pcs))
					}
				}
			}
		}
	}
	if matches < 1000 {
		t.Fatalf("only %d matches: the texts do not exercise the patterns", matches)
	}
	t.Logf("%d matches compared", matches)
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// FuzzDFA: on any text, encoded as the engine encodes it, every rule's
// anchored forms end where FindIndex ends, from every start.
func FuzzDFA(f *testing.F) {
	addSeeds(f)
	c := Default().c
	type form struct {
		re    *regexp.Regexp
		cache *dfaCache
	}
	var forms []form
	for ri := range c.rules {
		r := &c.rules[ri]
		if r.scan0 == nil {
			continue
		}
		d0, dN := r.anchored(&c.viewTabs)
		forms = append(forms,
			form{regexp.MustCompile(`\A(?:` + r.src + `)`), newDFACache(d0)},
			form{regexp.MustCompile(`\A(?s:.)(?:` + r.src + `)`), newDFACache(dN)})
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 512 {
			return // every start of every rule: keep each input quick
		}
		var tx text
		decodeText(in, &tx)
		enc := make([]byte, tx.len())
		for i := range enc {
			enc[i] = c.byteOf(tx.at(i))
		}
		for _, fm := range forms {
			for p := range enc {
				want := -1
				if loc := fm.re.FindIndex(enc[p:]); loc != nil {
					want = loc[1]
				}
				if got := fm.cache.end(enc[p:], viewEncoded); got != want {
					t.Fatalf("%s at %d of %q: DFA end %d, regexp %d", fm.re, p, in, got, want)
				}
			}
		}
	})
}

// TestCandidatesOfRawViews: an ASCII text read as it is or through the
// leetspeak folding gets the candidates its encoded bytes get, by memchr
// (one rule active at a time: few prefixes) and by the automaton (all).
func TestCandidatesOfRawViews(t *testing.T) {
	c := Default().c
	m := c.newMatcher()
	sets := prefixRuleSets(c)
	candidatesOf := func(v view, rules []int) [][]int32 { return c.candidatesWith(m, v, rules) }
	checked := 0
	for _, vec := range loadVectors(t) {
		raw := vec.input(t)
		var tx text
		if decodeText(raw, &tx); !tx.ascii {
			continue
		}
		for _, kind := range []viewKind{viewASCII, viewLeet} {
			enc := make([]byte, len(raw))
			mapBytes(enc, raw, c.viewTabs[kind])
			for _, rules := range sets {
				var buf []byte
				got := candidatesOf(view{src: raw, kind: kind, buf: &buf}, rules)
				want := candidatesOf(view{src: enc}, rules)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%q, view %d, rules %v: candidates %v, encoded %v", raw, kind, rules, got, want)
				}
				for _, cs := range want {
					checked += len(cs)
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d candidates compared", checked)
	}
}

// byteOf is a unit's alphabet byte.
func (c *compiled) byteOf(u uint16) byte { return c.alphabet.Byte[u] }

// TestRuneOpBytes: the byte set of each rune instruction, from its ranges
// or its op, is the set MatchRune gives byte by byte; for every rule's
// anchored forms and for expressions with the other rune ops.
func TestRuneOpBytes(t *testing.T) {
	var progs []*syntax.Prog
	c := Default().c
	for i := range c.rules {
		if r := &c.rules[i]; r.fast {
			d0, dN := r.anchored(&c.viewTabs)
			progs = append(progs, d0.prog, dN.prog)
		}
	}
	for _, expr := range []string{`a.b`, `(?s:.)x`, `[^\n]y`, `(?i)k[a-c]`, `[\x00-\xff]`, `\xff`, `[a-cx-z0]`} {
		progs = append(progs, mustCompileDFA(expr, &c.viewTabs).prog)
	}
	ops := map[syntax.InstOp]bool{}
	for _, prog := range progs {
		for i := range prog.Inst {
			if in := &prog.Inst[i]; isRuneOp(in.Op) {
				ops[in.Op] = true
				if got, want := runeOpBytes(in), byteSetOf(in.MatchRune); got != want {
					t.Fatalf("%v: bytes %x, MatchRune %x", in, got, want)
				}
			}
		}
	}
	if len(ops) != 4 {
		t.Fatalf("rune ops seen: %v", ops)
	}
}

// prefixRuleSets lists each rule that has prefixes alone (few prefixes:
// findCandidates searches them by memchr) and all of them together (the
// automaton).
func prefixRuleSets(c *compiled) [][]int {
	var sets [][]int
	var all []int
	for i := range c.rules {
		if c.rules[i].hasPrefix {
			sets = append(sets, []int{i})
			all = append(all, i)
		}
	}
	return append(sets, all)
}

// candidatesWith runs findCandidates over v with exactly rules active and
// returns a copy of their candidates.
func (c *compiled) candidatesWith(m *matcher, v view, rules []int) [][]int32 {
	clear(m.active)
	for _, i := range rules {
		m.active[i] = true
	}
	c.findCandidates(&v, m)
	out := make([][]int32, len(c.rules))
	for _, i := range rules {
		out[i] = slices.Clone(m.cands[i])
	}
	return out
}

// TestWindows checks matcher.windows against its definition, window by
// window: for each candidate in order, the end is one past where the
// (maxOther+1)th byte outside the rule's runs is, and the windows' total
// decides the budget. Texts of run bytes and others in random mixes, with
// candidates dense and sparse.
func TestWindows(t *testing.T) {
	c := Default().c
	rng := rand.New(rand.NewPCG(7, 11))
	m := c.newMatcher()
	tab := c.viewTabs[viewASCII]
	for i := range c.rules {
		r := &c.rules[i]
		if !r.fast || !r.runBounded {
			continue
		}
		var run, other []byte
		for b := byte(0); b < 128; b++ {
			if r.runBytes[tab[b]&127] {
				run = append(run, b)
			} else {
				other = append(other, b)
			}
		}
		if len(run) == 0 || len(other) == 0 {
			t.Fatalf("rule %s: no run bytes or no others", r.id)
		}
		for k := 0; k < 300; k++ {
			n := rng.IntN(400)
			src := make([]byte, n)
			odds := rng.IntN(10) + 1
			for j := range src {
				if rng.IntN(odds) == 0 {
					src[j] = other[rng.IntN(len(other))]
				} else {
					src[j] = run[rng.IntN(len(run))]
				}
			}
			var cands []int32
			step := rng.IntN(30) + 1
			for j := 0; j < n; j += 1 + rng.IntN(step) {
				cands = append(cands, int32(j))
			}
			var want []int32
			total := 0
			for _, cd := range cands {
				q, o := int(cd), 0
				for q < n && o <= r.maxOther {
					if !r.runBytes[tab[src[q]]&127] {
						o++
					}
					q++
				}
				total += q - int(cd)
				want = append(want, int32(min(n, q+1)))
			}
			budget := rng.IntN(4*n + 64)
			ok := m.windows(r, src, &r.outside[viewASCII], cands, budget)
			if ok != (total <= budget) {
				t.Fatalf("rule %s, %d candidates over %d bytes: within budget %d reported %v, windows add up to %d", r.id, len(cands), n, budget, ok, total)
			}
			if ok && !slices.Equal(m.ends, want) {
				t.Fatalf("rule %s over %q from %v: ends %v, want %v", r.id, src, cands, m.ends, want)
			}
		}
	}
}
