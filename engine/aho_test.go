package engine

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/bench/chatbody"
)

// TestScanASCIIChains checks that the four-chain scan finds exactly the
// literals that one chain over the whole text finds, around the quarters'
// boundaries too, and that a search for each literal finds.
func TestScanASCIIChains(t *testing.T) {
	c := Default().c
	words := strings.Fields("ignore IGNORE all previous instructions system prompt you are now DAN developer mode " +
		"1gn0r3 pr3v10us %69gnore aGVsbG8= the a of < > [ ] { } # $ @ 0 7 \n \t zzz jailbreak act as override")
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 3000; n++ {
		var b strings.Builder
		size := rng.IntN(2000)
		for b.Len() < size {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(" \n"[rng.IntN(2)])
		}
		text := []byte(b.String())
		got := make([]uint64, (len(c.literals)+63)/64)
		want := make([]uint64, len(got))
		c.ac.scan(text, &c.keywordCols[viewASCII], got)
		c.ac.resume(text, 0, 0, &c.keywordCols[viewASCII], func(row uint32, _ int) { c.ac.mark(row, want) })
		if !slices.Equal(got, want) {
			t.Fatalf("%q: four chains %x, one chain %x", text, got, want)
		}
		// And both what a search for each literal finds.
		enc := make([]byte, len(text))
		mapBytes(enc, text, &c.ascii)
		naive := make([]uint64, len(got))
		for id, lit := range c.literals {
			if bytes.Contains(enc, []byte(lit)) {
				naive[id>>6] |= 1 << (id & 63)
			}
		}
		if !slices.Equal(want, naive) {
			t.Fatalf("%q: automaton %x, literal by literal %x", text, want, naive)
		}
	}
	// Every literal at every position of texts of a few lengths, so across
	// every place where one chain's part ends and the next one's begins.
	for _, lit := range c.literals {
		placements(c, lit, ' ', func(text []byte, at int) {
			got := make([]uint64, (len(c.literals)+63)/64)
			want := make([]uint64, len(got))
			c.ac.scan(text, &c.keywordCols[viewASCII], got)
			c.ac.resume(text, 0, 0, &c.keywordCols[viewASCII], func(row uint32, _ int) { c.ac.mark(row, want) })
			if !slices.Equal(got, want) {
				t.Fatalf("%q at %d of %d bytes: four chains %x, one chain %x", text[at:at+len(lit)], at, len(text), got, want)
			}
		})
	}
}

// placements calls f with texts of filler holding word (alphabet bytes,
// written as ASCII units that map to them) at every position at, in texts
// of 200 and 517 bytes: so across every place where one chain's part ends
// and the next one's begins.
func placements(c *compiled, word string, filler byte, f func(text []byte, at int)) {
	var fromByte [128]byte
	for u := 127; u >= 0; u-- {
		fromByte[c.ascii[u]] = byte(u)
	}
	ascii := make([]byte, len(word))
	for i := range word {
		ascii[i] = fromByte[word[i]]
	}
	for _, size := range []int{200, 517} {
		for at := 0; at+len(word) <= size; at++ {
			text := bytes.Repeat([]byte{filler}, size)
			copy(text[at:], ascii)
			f(text, at)
		}
	}
}

// BenchmarkKeywords compares the keyword pass with four chains and with
// one, on benign prose: go test -bench Keywords ./engine/
func BenchmarkKeywords(b *testing.B) {
	c := Default().c
	seen := make([]uint64, (len(c.literals)+63)/64)
	for _, size := range []int{96, 300, 4 << 10, 6 << 10, 16 << 10, 256 << 10} {
		text := []byte(chatbody.Prose(size, 0))
		if haveWide && size >= wideMinLen { // otherwise scanWide declines
			b.Run(strconv.Itoa(size)+"B/wide", func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					if !c.ac.scanWide(text, &c.keywordCols[viewASCII], seen) {
						b.Fatal("scanWide declined")
					}
				}
			})
		}
		b.Run(strconv.Itoa(size)+"B/four", func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				c.ac.scan(text, &c.keywordCols[viewASCII], seen)
			}
		})
		b.Run(strconv.Itoa(size)+"B/one", func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				c.ac.resume(text, 0, 0, &c.keywordCols[viewASCII], func(row uint32, _ int) { c.ac.mark(row, seen) })
			}
		})
	}
}

// TestCandidatesChains checks that the four-chain prefix pass finds each
// candidate start once, exactly the starts one chain finds and in its
// order, for every prefix at every position of texts of a few lengths.
func TestCandidatesChains(t *testing.T) {
	c := Default().c
	ac := c.prefixAC
	active := make([]bool, len(c.rules))
	for i := range active {
		active[i] = true
	}
	encode := func(s []byte) []byte {
		out := make([]byte, len(s))
		for i, b := range s {
			out[i] = c.ascii[b]
		}
		return out
	}
	check := func(enc []byte) {
		t.Helper()
		got := make([][]int32, len(c.rules))
		var later [3][]hitAt
		ac.candidates(enc, 0, &ac.col, active, c.prefixRules, c.prefixLens, got, &later)
		want := make([][]int32, len(c.rules))
		ac.resume(enc, 0, 0, &ac.col, func(row uint32, end int) {
			s := row / uint32(ac.k)
			for _, lit := range ac.outs[ac.outAt[s]:ac.outAt[s+1]] {
				for _, r := range c.prefixRules[lit] {
					want[r] = append(want[r], int32(end)-c.prefixLens[lit])
				}
			}
		})
		for r := range got {
			// In one chain's order, not only the same starts.
			if !slices.Equal(got[r], want[r]) {
				t.Fatalf("rule %s over %d bytes: four chains %v, one chain %v", c.rules[r].id, len(enc), got[r], want[r])
			}
		}
	}
	for i := range c.rules {
		for _, p := range c.rules[i].prefixes {
			placements(c, string(p), 'x', func(text []byte, at int) {
				copy(text[max(0, at-40):], text[at:at+len(p)]) // a second one nearby
				check(encode(text))
			})
		}
	}
}

// TestAutomatonRowsInRange holds the invariant chains4.run reads delta
// without bounds checks on: every transition is the row offset of a state
// (a multiple of k inside the table), and every column a table gives a
// byte is below k; and the states with outputs are exactly those at or
// above out. For the published rulebook and for one with a rule on the
// backtracking engine and a rule that needs many columns.
func TestAutomatonRowsInRange(t *testing.T) {
	custom := engineOf(t, `{"rules_id":"t","version":"1","categories":{"c":"c"},"rules":[
		{"id":"A-1","category":"c","severity":"suspicious","pattern":"(?<=x)secret (key|word)","flags":"i"},
		{"id":"A-2","category":"c","severity":"malicious","pattern":"\\b(q[a-z0-9_!#%&*]{2}z|\\u00e9t\\u00e9|xy\\\\d)","flags":"i"}]}`)
	for _, c := range []*compiled{Default().c, custom.c} {
		checkAutomatonRows(t, c)
	}
}

// checkAutomatonRows is TestAutomatonRowsInRange's check for one compiled
// rulebook.
func checkAutomatonRows(t *testing.T, c *compiled) {
	t.Helper()
	automata := map[string]*ahoCorasick{"keywords": c.ac, "prefixes": c.prefixAC}
	if c.union != nil {
		automata["union"] = c.union.ac
	}
	for name, ac := range automata {
		if ac == nil {
			continue // no alphabet: every rule is on the backtracking engine
		}
		for s := 0; s*ac.k < len(ac.delta); s++ {
			hasOut := ac.outAt[s] != ac.outAt[s+1]
			if row := uint32(s * ac.k); hasOut != (row >= ac.out) {
				t.Fatalf("%s: state %d (row %d) has outputs %v, out %d", name, s, row, hasOut, ac.out)
			}
		}
		for i, next := range ac.delta {
			if int(next)%ac.k != 0 || int(next)+ac.k > len(ac.delta) {
				t.Fatalf("%s: transition %d to row %d: k %d, table %d", name, i, next, ac.k, len(ac.delta))
			}
		}
		tables := map[string]*byteCols{"col": &ac.col}
		switch {
		case ac == c.ac:
			for kind := range c.keywordCols {
				tables["keywordCols"+strconv.Itoa(kind)] = &c.keywordCols[kind]
			}
		case c.union != nil && ac == c.union.ac:
			for kind := range c.union.cols {
				tables["union.cols"+strconv.Itoa(kind)] = &c.union.cols[kind]
			}
		default:
			for kind := range c.prefixCols {
				tables["prefixCols"+strconv.Itoa(kind)] = &c.prefixCols[kind]
			}
		}
		for tname, tab := range tables {
			for b, col := range tab {
				if int(col) >= ac.k {
					t.Fatalf("%s: %s[%d] = %d, k %d", name, tname, b, col, ac.k)
				}
			}
		}
	}
}
