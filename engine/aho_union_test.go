package engine

import (
	"cmp"
	"reflect"
	"slices"
	"testing"

	"github.com/promptwall/promptwall/bench/chatbody"
)

// TestUnionMatchesSeparate checks that one pass of the union automaton
// gives what the keyword and prefix automata give: the same keywords, and
// every active rule's candidates, in the order the prefix automaton's four
// chains report them. For every keyword and prefix at every position of
// texts of a few lengths (with a second occurrence nearby), for windows
// that begin inside a text, for every kind of view, and for real
// documents; on the published rulebook and on one with a rule of many
// one-byte prefixes.
func TestUnionMatchesSeparate(t *testing.T) {
	custom := engineOf(t, `{"rules_id":"t","version":"1","categories":{"c":"c"},"rules":[
		{"id":"A-1","category":"c","severity":"suspicious","pattern":"(?<=x)secret (key|word)","flags":"i"},
		{"id":"A-2","category":"c","severity":"malicious","pattern":"\\b(q[a-z0-9_!#%&*]{2}z|\\u00e9t\\u00e9|xy\\\\d)","flags":"i"},
		{"id":"A-3","category":"c","severity":"malicious","pattern":"(?:system|assistant) ?prompt","flags":"i"}]}`)
	for _, c := range []*compiled{Default().c, custom.c} {
		if c.union == nil {
			t.Fatal("no union automaton")
		}
		checkUnion(t, c)
	}
	// Prefixes of one byte (a rule with many keeps them in the prefix
	// automaton) would stop the union's pass at every occurrence: no
	// union.
	c := Default().c
	var col byteCols
	for b := 0; b < 128; b++ {
		col[b] = uint32(c.alphabet.Column(byte(b)))
	}
	if c.newUnionAC(c.literals, []string{"ab", string(c.ascii['a'])}, &col) != nil {
		t.Fatal("a union automaton with a prefix of one byte")
	}
	if c.newUnionAC(c.literals, []string{"ab", "cd"}, &col) == nil {
		t.Fatal("no union automaton with prefixes of two bytes")
	}
}

func checkUnion(t *testing.T, c *compiled) {
	t.Helper()
	u := c.union
	active := make([]bool, len(c.rules))
	for i := range active {
		active[i] = true
	}
	words := (len(c.literals) + 63) / 64
	var later [3][]hitAt
	var sc unionScratch
	check := func(text []byte, lo int) {
		t.Helper()
		for kind := range viewKind(3) {
			text := text
			if kind == viewEncoded {
				enc := make([]byte, len(text))
				mapBytes(enc, text, &c.ascii)
				text = enc
			}
			want, got := make([]uint64, words), make([]uint64, words)
			c.ac.scan(text[lo:], &c.keywordCols[kind], want)
			var hits []hitAt
			u.scan(text[lo:], lo, kind, got, &hits, &sc, keptHits{track: make([]bool, len(c.literals)), hits: new([]litHit)})
			if !slices.Equal(got, want) {
				t.Fatalf("kind %d, %d bytes from %d: union keywords %x, keyword automaton %x", kind, len(text), lo, got, want)
			}
			wantC, gotC := make([][]int32, len(c.rules)), make([][]int32, len(c.rules))
			c.prefixAC.candidates(text[lo:], lo, &c.prefixCols[kind], active, c.prefixRules, c.prefixLens, wantC, &later)
			u.candidates(hits, active, c.prefixRules, c.prefixLens, gotC)
			for r := range wantC {
				if !slices.Equal(gotC[r], wantC[r]) {
					t.Fatalf("rule %s, kind %d, %d bytes from %d: union %v, prefix automaton %v", c.rules[r].id, kind, len(text), lo, gotC[r], wantC[r])
				}
			}
		}
	}
	var words2 []string
	words2 = append(words2, c.literals...)
	for i := range c.rules {
		for _, p := range c.rules[i].prefixes {
			words2 = append(words2, string(p))
		}
	}
	for _, w := range words2 {
		placements(c, w, 'x', func(text []byte, at int) {
			copy(text[max(0, at-40):], text[at:at+len(w)]) // a second one nearby
			check(text, 0)
			check(text, min(at, 7))
		})
	}
	texts, err := chatbody.ReadCorpus(chatbody.Corpora() + "/chat_bodies_benign.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	check([]byte(chatbody.Document(texts, 64<<10, true)), 0)
	for _, text := range texts[:min(50, len(texts))] {
		if isASCII(text) {
			check(text, 0)
		}
	}
}

func isASCII(b []byte) bool {
	for _, x := range b {
		if x >= 128 {
			return false
		}
	}
	return true
}

// withoutUnion returns e with the keyword and prefix automata walked apart.
func withoutUnion(e *Engine) *Engine {
	c := *e.c
	c.union = nil
	sep := &Engine{rb: e.rb, c: &c}
	sep.pool.New = func() any { return &scanState{m: c.newMatcher()} }
	return sep
}

// corpusAndDocuments returns the texts of the published corpora and two
// 256 KiB documents of the chat bodies' messages (the ASCII ones, and all).
func corpusAndDocuments(t *testing.T) [][]byte {
	t.Helper()
	var all [][]byte
	for _, name := range []string{"benign_prompts.jsonl", "chat_bodies_benign.jsonl", "injection_jailbreak.jsonl"} {
		texts, err := chatbody.ReadCorpus(chatbody.Corpora() + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, texts...)
		if name == "chat_bodies_benign.jsonl" {
			all = append(all, []byte(chatbody.Document(texts, 256<<10, true)), []byte(chatbody.Document(texts, 256<<10, false)))
		}
	}
	return all
}

// TestUnionScansAlike scans the published corpora and a long document of
// them with the union automaton and with the two automata apart: the
// results are the same.
func TestUnionScansAlike(t *testing.T) {
	e := Default()
	sep := withoutUnion(e)
	all := corpusAndDocuments(t)
	matched := 0
	for _, text := range all {
		got, want := e.Scan(text), sep.Scan(text)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%.80q: union %+v, apart %+v", text, got.Matches, want.Matches)
		}
		if len(got.Matches) > 0 {
			matched++
		}
	}
	if matched == 0 {
		t.Fatal("no text matched")
	}
}

// FuzzUnion: for any rulebook of two patterns and any text, the union
// automaton's scan is the two automata's.
func FuzzUnion(f *testing.F) {
	f.Add(`\bignore (all )?previous\b`, `<\|?(system|im_start)`, []byte("IGNORE previous <|system x 1gn0re pr3vious"))
	f.Add(`(?:secret|key)\s*[:=]\s*\S{8,}`, `(sys|assis)tant:?`, []byte("key = abcdefgh123 SYSTANT: 4ssistant"))
	f.Add(`ab[cd]e`, `\u00e9t\u00e9|\u017ft|xa`, []byte("\xc3\xa9t\xc3\xa9 \xc5\xbft abde 4bce xa"))
	f.Fuzz(func(t *testing.T, p1, p2 string, text []byte) {
		if len(p1) > 200 || len(p2) > 200 || len(text) > 4000 {
			return
		}
		e, err := twoRuleEngine(t, p1, p2)
		if err != nil || e.c.union == nil {
			return
		}
		if got, want := e.Scan(text), withoutUnion(e).Scan(text); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: union %+v, apart %+v", text, got.Matches, want.Matches)
		}
	})
}

// TestScanWindows checks that the leetspeak windows joined in one pass
// give what each scanned alone gives: the same keywords, the same prefix
// hits in the same order, the same kept keyword hits (in any order). For
// real texts with their digits as the leetspeak positions, and for every
// keyword with a digit or a '@' next to it, in every kind of view.
func TestScanWindows(t *testing.T) {
	c := Default().c
	u := c.union
	for kind := range viewKind(3) {
		if u.sep[kind] < 0 {
			t.Fatalf("kind %d: no separator byte", kind)
		}
	}
	track := make([]bool, len(c.literals))
	for i := range track {
		track[i] = true
	}
	words := (len(c.literals) + 63) / 64
	var w, alone unionScratch
	windowsChecked := 0
	check := func(text []byte) {
		t.Helper()
		var leet []int32
		for i, b := range text {
			if b < 128 && unitFlags[b]&fLeet != 0 {
				leet = append(leet, int32(i))
			}
		}
		for kind := range viewKind(3) {
			text := text
			if kind == viewEncoded {
				enc := make([]byte, len(text))
				mapBytes(enc, text, &c.ascii)
				text = enc
			}
			col := &u.cols[kind]
			want, got := make([]uint64, words), make([]uint64, words)
			var wantHits, gotHits []hitAt
			var wantKw, gotKw []litHit
			var lit [256]bool // as leetWindows reads it, apart from the union's table
			for b := range lit {
				lit[b] = u.ac.lit[col[b]]
			}
			leetWindows(u.ac, text, &lit, leet, func(lo, hi int) {
				windowsChecked++
				u.scan(text[lo:hi], lo, kind, want, &wantHits, &alone, keptHits{track, &wantKw})
			})
			u.scanWindows(text, kind, leet, got, &gotHits, keptHits{track, &gotKw}, &w)
			if !slices.Equal(got, want) {
				t.Fatalf("kind %d, %.60q: joined keywords %x, alone %x", kind, text, got, want)
			}
			if !slices.Equal(gotHits, wantHits) {
				t.Fatalf("kind %d, %.60q: joined prefix hits %v, alone %v", kind, text, gotHits, wantHits)
			}
			byEnd := func(a, b litHit) int { return cmp.Or(cmp.Compare(a.end, b.end), cmp.Compare(a.id, b.id)) }
			slices.SortFunc(gotKw, byEnd)
			slices.SortFunc(wantKw, byEnd)
			if !slices.Equal(gotKw, wantKw) {
				t.Fatalf("kind %d, %.60q: joined keyword hits %v, alone %v", kind, text, gotKw, wantKw)
			}
		}
	}
	texts, err := chatbody.ReadCorpus(chatbody.Corpora() + "/chat_bodies_benign.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	check([]byte(chatbody.Document(texts, 256<<10, true)))
	for _, text := range texts[:min(200, len(texts))] {
		if isASCII(text) {
			check(text)
		}
	}
	var text []byte
	for _, l := range c.literals {
		lit := []byte(l)
		text = append(text, "x 4"...)
		text = append(text, lit...)
		text = append(text, "3 0"...)
		text = append(text, lit[:len(lit)/2]...)
		text = append(text, "7@"...)
		text = append(text, lit[len(lit)/2:]...)
		text = append(text, '\n')
	}
	check(text)
	if windowsChecked < 1000 {
		t.Fatalf("only %d windows", windowsChecked)
	}
}
