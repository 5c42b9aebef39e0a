package engine

import (
	"math/rand/v2"
	"reflect"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
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
					if got, _ := roomy.end(tx.src[p:], tx.kind); got != want {
						t.Fatalf("rule %s form %d at %d of %q (view %d): DFA end %d, regexp %d", r.id, form, p, tx.src, tx.kind, got, want)
					}
					// Cut short, a try whose threads all died before the
					// cut has the whole text's answer (matchAnchored's
					// budget relies on it).
					cut := rng.IntN(len(enc) - p + 1)
					if got, read := roomy.end(tx.src[p:p+cut], tx.kind); read > cut || read < cut && got != want {
						t.Fatalf("rule %s form %d at %d of %q (view %d), cut after %d: DFA end %d having read %d, regexp %d", r.id, form, p, tx.src, tx.kind, cut, got, read, want)
					}
					if got, _ := tiny.end(tx.src[p:], tx.kind); got != want {
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
				if got, _ := fm.cache.end(enc[p:], viewEncoded); got != want {
					t.Fatalf("%s at %d of %q: DFA end %d, regexp %d", fm.re, p, in, got, want)
				}
				for cut := p; cut < len(enc); cut += 1 + (len(enc)-p)/4 {
					if got, read := fm.cache.end(enc[p:cut], viewEncoded); read > cut-p || read < cut-p && got != want {
						t.Fatalf("%s at %d of %q, cut at %d: DFA end %d having read %d, regexp %d", fm.re, p, in, cut, got, read, want)
					}
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

// TestMatchAnchoredBudget: whatever the budget, the anchored tries and the
// linear search they hand over to find what one linear search finds. The
// texts are conformance vectors' joined by runs of white space and
// newlines (where RH-2's tries read far), with every position a
// candidate, and the budgets range from nothing to more than the tries
// need.
func TestMatchAnchoredBudget(t *testing.T) {
	c := Default().c
	rng := rand.New(rand.NewPCG(3, 5))
	vs := loadVectors(t)
	gaps := []string{"\n", "\n\n", " \n  \n\t", "\n" + strings.Repeat(" \n", 40), strings.Repeat(" ", 70) + "\n"}
	cut, scanned, tried := 0, 0, 0
	for k := 0; k < 60; k++ {
		_, enc, cands := joinVectors(t, c, rng, vs, gaps)
		for i := range c.rules {
			r := &c.rules[i]
			if r.scan0 == nil || !r.hasPrefix {
				continue
			}
			type span struct{ s, e int }
			var want, got []span
			matchScan(r, enc, 0, func(s, e int) { want = append(want, span{s, e}) })
			d0, dN := r.anchored(&c.viewTabs)
			budget := rng.IntN(anchoredBudget(len(enc)) + 1)
			if k%4 == 0 {
				budget = rng.IntN(64)
			}
			rest := matchAnchored(r, newDFACache(d0), newDFACache(dN), enc, viewEncoded, cands, budget, tryLog{}, func(s, e int) { got = append(got, span{s, e}) })
			if rest >= 0 {
				cut++
				matchScan(r, enc, rest, func(s, e int) { got = append(got, span{s, e}) })
			} else {
				tried++
			}
			scanned += len(want)
			if !slices.Equal(got, want) {
				t.Fatalf("rule %s, budget %d (handed over at %d) over %q: matches %v, the linear search's %v", r.id, budget, rest, enc, got, want)
			}
		}
	}
	if cut < 100 || tried < 100 || scanned < 100 {
		t.Fatalf("%d handed over, %d tried to the end, %d matches: the cases do not exercise both ways", cut, tried, scanned)
	}
}

// TestMatchAnchoredKnownTries: tries recorded over one text and taken
// where they read none of the changed positions give, over a copy changed
// at those positions, what one linear search of the copy finds. The
// copies differ from the texts as the leetspeak view differs from the
// original, at a few places (or many: each byte with odds from 1 in 2 to
// 1 in 200).
func TestMatchAnchoredKnownTries(t *testing.T) {
	c := Default().c
	rng := rand.New(rand.NewPCG(4, 6))
	vs := loadVectors(t)
	taken, tried := 0, 0
	for k := 0; k < 160; k++ {
		tx, enc, cands := joinVectors(t, c, rng, vs, []string{"\n", "\n\n", " \n\t", "\n  ", ". "})
		for i := range c.rules {
			r := &c.rules[i]
			if r.scan0 == nil || !r.hasPrefix {
				continue
			}
			d0, dN := r.anchored(&c.viewTabs)
			a0, aN := newDFACache(d0), newDFACache(dN)
			var tries []anchoredTry
			budget := anchoredBudget(len(enc))
			if k%3 == 0 {
				budget = rng.IntN(budget) // some tries cut short, not recorded
			}
			matchAnchored(r, a0, aN, enc, viewEncoded, cands, budget, tryLog{record: &tries}, func(s, e int) {})
			// Half the copies are the leetspeak view itself: matches
			// appear where a try of the original died. The others change
			// random places, and the byte before a try's candidate (which
			// decides \b there) or the last one it read.
			changed := slices.Clone(enc)
			at := tx.leet
			if k%2 == 0 {
				for _, i := range at {
					changed[i] = c.asciiLeet[tx.at(int(i))]
				}
			} else {
				at = nil
				odds := 2 + rng.IntN(200)
				for i := range changed {
					if rng.IntN(odds) == 0 {
						at = append(at, int32(i))
					}
				}
				for _, tr := range tries {
					switch rng.IntN(8) {
					case 0:
						at = append(at, max(tr.at-1, 0))
					case 1:
						at = append(at, tr.reach-1)
					}
				}
				slices.Sort(at)
				at = slices.Compact(at)
				for _, i := range at {
					changed[i] = c.ascii[rng.IntN(128)]
				}
			}
			type span struct{ s, e int }
			var want, got []span
			matchScan(r, changed, 0, func(s, e int) { want = append(want, span{s, e}) })
			rest := matchAnchored(r, a0, aN, changed, viewEncoded, cands, anchoredBudget(len(enc)), tryLog{known: tries, leet: at}, func(s, e int) { got = append(got, span{s, e}) })
			if rest >= 0 {
				matchScan(r, changed, rest, func(s, e int) { got = append(got, span{s, e}) })
			}
			if !slices.Equal(got, want) {
				t.Fatalf("rule %s over %q changed at %v: matches %v, the linear search's %v", r.id, enc, at, got, want)
			}
			for _, tr := range tries {
				if j, _ := slices.BinarySearch(at, max(tr.at-1, 0)); j < len(at) && at[j] < tr.reach {
					tried++
				} else {
					taken++
				}
			}
		}
	}
	if taken < 1000 || tried < 1000 {
		t.Fatalf("%d tries taken, %d tried again: the cases do not exercise both", taken, tried)
	}
}

// joinVectors joins one to six conformance vectors' texts, each after one
// of gaps, and returns the text, its alphabet bytes, and every position
// as a candidate.
func joinVectors(t *testing.T, c *compiled, rng *rand.Rand, vs []vector, gaps []string) (tx text, enc []byte, cands []int32) {
	var b strings.Builder
	for range 1 + rng.IntN(6) {
		b.WriteString(gaps[rng.IntN(len(gaps))])
		b.Write(vs[rng.IntN(len(vs))].input(t))
	}
	decodeText([]byte(b.String()), &tx)
	enc = make([]byte, tx.len())
	for i := range enc {
		enc[i] = c.byteOf(tx.at(i))
	}
	cands = make([]int32, len(enc))
	for i := range cands {
		cands[i] = int32(i)
	}
	return tx, enc, cands
}
