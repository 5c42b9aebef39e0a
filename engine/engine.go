// Package engine applies a rulebook to texts exactly as docs/SPEC.md defines:
// the four views, matching, merging, the verdict, category counts and the
// sanitized copy, with positions in UTF-16 code units.
//
// # Matching: V8's results in linear time
//
// V8 runs the rulebook's patterns with a backtracking engine, which takes
// quadratic time on some of them (20,000 newlines against RH-2). The engine
// gets V8's matches from Go's regexp package instead, an automaton engine
// that is linear in the text and, for patterns without look-arounds or
// back-references, picks the same leftmost-first match as a backtracking
// engine. What differs between the two is resolved before matching, by
// package jsregex:
//
//   - Each text is encoded one byte per UTF-16 unit, through an alphabet in
//     which two units share a byte only when no pattern tells them apart.
//     Byte offsets are then JavaScript positions, and `{0,40}` counts units
//     as V8 does (an emoji is two).
//   - Case-insensitivity is ECMAScript's (ſ does not match s, K does not
//     match k), `\s` is ECMAScript's set and `.` excludes its four line
//     terminators: all spelled out as sets before the alphabet is built.
//   - `\b` works because word units get word bytes.
//
// Go's regexp alone ran at about 0.05x V8's speed on the corpora; what makes
// the engine fast is running it rarely:
//
//   - One Aho-Corasick pass per view finds which of each pattern's required
//     words occur (for IO-1: one of ignore/disregard/... and one of
//     instruction/prompt/...; words under four letters only when a rule has
//     nothing better). A rule whose words are absent costs nothing; for most
//     texts that is every rule.
//     The pass is a DFA of one table load per byte; a long text is cut in
//     four overlapping quarters stepped together, because one chain of
//     dependent loads leaves the processor waiting on each. From 6 KiB, on
//     a processor with AVX-512 VBMI, a view is cut in 64 parts
//     stepped sixteen to a vector register instead, with gathers for the
//     table loads (wide_amd64.go).
//   - A rule that can match is tried, anchored, only where a match can start
//     (its prefixes: "ignore", "<", a newline). A try reads until no match
//     can go on, mostly a byte or two. When the tries would read more than a
//     few passes over the text, one linear unanchored search takes over
//     from there, so the time stays linear.
//   - The anchored tries run on a DFA built lazily from the program Go's
//     regexp compiles for the same expression, following its Pike VM's
//     thread order so that it ends where FindIndex ends (dfa.go). Go's
//     backtracker, which regexp uses on short inputs, spent tens of
//     nanoseconds a unit in the counted repetitions of IO-1 and WD-1; a
//     cached DFA state costs one table load.
//   - An ASCII text (most texts) is never copied into alphabet bytes: the
//     automata and DFAs read its own bytes through tables composed with
//     the alphabet, as it is or through the leetspeak folding. Only a rule
//     that needs the linear unanchored search gets an encoded copy.
//   - Views that cannot report are not built: the leetspeak view needs a
//     leetspeak character, and since it differs from the original only
//     there, it is searched for words and prefixes only near them (its
//     other candidates are the original view's); the percent view needs a
//     %XX, the base64 view a 16-character run.
//   - The passes every text takes run as vector kernels where the processor
//     has AVX2 (simd_amd64.s): one tells an ASCII text, lists its
//     leetspeak characters and finds a '%'; another finds the first place a
//     base64 run can start (with AVX-512 BW where there is one). With
//     AVX-512 VBMI one kernel does both in one pass (classify_amd64.s), and
//     another widens the ASCII blocks of a text that is not ASCII to its
//     units. Each has a portable loop, which its tests hold it to, as they
//     hold the kernels to loops written from the definitions. The build
//     tag purego leaves every kernel out, as the standard library's does,
//     so that the portable loops can be tested on any processor.
//   - A text that is not ASCII is searched for base64 runs in its bytes (a
//     token is ASCII), and a rule that needs a character the text lacks
//     (OB-1's invisible ones) is not tried.
//
// The benchmarks (README, "Performance") measure the result.
//
// github.com/dlclark/regexp2/v2 (ECMAScript semantics, but backtracking:
// 0.14x V8 and quadratic too) is used only for patterns Go's regexp cannot
// express, such as a custom rule with a look-ahead; a match timeout bounds it.
package engine

import (
	"sync"
	"unsafe"

	"github.com/promptwall/promptwall/rulebook"
)

// Engine scans texts with one compiled rulebook. It is safe for concurrent
// use; everything that depends only on the rulebook is computed by New.
type Engine struct {
	rb   *rulebook.Rulebook
	c    *compiled
	pool sync.Pool // *scanState

	streamOnce sync.Once
	stream     *streamInfo // NewStream's analysis of the rulebook
}

// New compiles a rulebook into an engine.
func New(rb *rulebook.Rulebook) (*Engine, error) {
	c, err := compile(rb, allFilters)
	if err != nil {
		return nil, err
	}
	e := &Engine{rb: rb, c: c}
	e.pool.New = func() any { return &scanState{m: c.newMatcher()} }
	return e, nil
}

var (
	defaultOnce sync.Once
	defaultEng  *Engine
)

// Default returns the engine of the embedded v1 rulebook, compiled once.
func Default() *Engine {
	defaultOnce.Do(func() {
		e, err := New(rulebook.Default())
		if err != nil {
			panic("compiling the embedded rulebook: " + err.Error())
		}
		defaultEng = e
	})
	return defaultEng
}

// Rulebook returns the engine's rulebook.
func (e *Engine) Rulebook() *rulebook.Rulebook { return e.rb }

// Scan scans one text given as bytes (meant to be UTF-8; invalid bytes are
// read as docs/SPEC.md section 1 says and kept in the sanitized copy).
func (e *Engine) Scan(raw []byte) Result {
	st := e.views(raw)
	defer e.release(st)
	return e.finish(st)
}

// views runs every view of raw in pooled working memory; release it.
func (e *Engine) views(raw []byte) *scanState {
	st := e.pool.Get().(*scanState)
	st.spans = st.spans[:0]
	decodeLazy(raw, &st.t)
	e.collect(st)
	return st
}

func (e *Engine) release(st *scanState) {
	st.t.raw = nil // keep no reference to the caller's text
	e.pool.Put(st)
}

// ScanString is Scan for a string, without copying it: Scan only reads
// its input and keeps no reference to it once it returns.
func (e *Engine) ScanString(s string) Result {
	return e.Scan(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// rulesMatching returns the rules with at least one match in raw: all a
// base64 token's inner scan contributes to the outer one.
func (e *Engine) rulesMatching(raw []byte) []int {
	st := e.views(raw)
	defer e.release(st)
	var seen []bool
	var out []int
	for _, s := range st.spans {
		if seen == nil {
			seen = make([]bool, len(e.c.rules))
		}
		if !seen[s.rule] {
			seen[s.rule] = true
			out = append(out, int(s.rule))
		}
	}
	return out
}
