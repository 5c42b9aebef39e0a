package llmreq

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// deepLeaves is a user message whose content is an object under one long key holding n string
// members: every leaf's path (and its key's) is about 500 bytes, so the paths of a few hundred
// leaves outgrow twice a small body (pathLimit).
func deepLeaves(prefix string, n int) string { return leaves(strings.Repeat("k", 450), prefix, n) }

// leaves is a user message whose content is an object under key holding n string members.
func leaves(key, prefix string, n int) string {
	var b strings.Builder
	b.WriteString(`{"role":"user","content":{"` + key + `":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%s%d":"s"`, prefix, i)
	}
	b.WriteString(`}}}`)
	return b.String()
}

// TestResumeRedteamPathLimitDependsOnBodyLength: pathLimit compares the paths made so far with
// the body's length, so the path bytes a skipped range stood for depend on the length of the body
// it was counted in. A short first body counts its history's paths cut short; a longer second body
// that resends the same history, read whole, keeps them long, crosses the limit sooner, and gives
// the texts after it shorter paths than the resumed parse does.
func TestResumeRedteamPathLimitDependsOnBodyLength(t *testing.T) {
	history := deepLeaves("a", 250) + `,{"role":"assistant","content":"ok"}`
	b1 := []byte(`{"messages":[` + history + `,{"role":"user","content":"hi"}]}`)
	b2 := []byte(`{"messages":[` + history + `,{"role":"user","content":"` + strings.Repeat("filler words ", 16000) + `"},` +
		deepLeaves("b", 500) + `]}`)
	r1, err := ParseResumed("/v1/chat/completions", b1, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := r1.Boundaries(1)[1] // the start of b1's last message
	if n > commonPrefix(b1, b2) {
		t.Fatalf("boundary %d past the shared prefix %d", n, commonPrefix(b1, b2))
	}
	res := r1.ResumeAt(n, nil)
	if res == nil || res.Bytes() == 0 {
		t.Fatal("no Resume for the history")
	}
	got := checkResumed(t, "longer body", "/v1/chat/completions", b2, res)
	if got.Skipped() == 0 {
		t.Fatal("not resumed")
	}
}

// TestResumeRedteamMaxTextsFileText: emit counts the texts a Resume left unread against
// MaxTexts, but a file's text (emitFile) counts only the texts read: a history of MaxTexts texts
// resumed, then a file, is accepted where the whole parse refuses the body.
func TestResumeRedteamMaxTextsFileText(t *testing.T) {
	var msgs []string
	for i := range MaxTexts {
		msgs = append(msgs, `{"role":"`+[]string{"user", "assistant"}[i%2]+`","content":"t"}`)
	}
	b1 := []byte(`{"messages":[` + joinStrings(msgs) + `]}`)
	file := `{"role":"user","content":[{"type":"file","file":{"file_data":"data:text/plain;base64,aGVsbG8="}}]}`
	b2 := []byte(`{"messages":[` + joinStrings(msgs) + `,` + file + `]}`)
	r1, err := ParseResumed("/v1/chat/completions", b1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse("/v1/chat/completions", b2); err == nil {
		t.Fatal("the whole parse accepts the body")
	}
	res := r1.ResumeAt(r1.Boundaries(1)[0], nil)
	if res == nil {
		t.Fatal("no Resume")
	}
	checkResumed(t, "file after a resumed history", "/v1/chat/completions", b2, res)
}

// TestResumeRedteamPathLimitVariants: pathLimit's bound met in the earlier body, in the later
// one, in both, in neither; keys of multi-byte characters (cut on a character's edge); and a
// body resumed from a resumed one.
func TestResumeRedteamPathLimitVariants(t *testing.T) {
	filler := func(n int) string {
		return `{"role":"user","content":"` + strings.Repeat("filler words ", n) + `"}`
	}
	for _, key := range []string{strings.Repeat("k", 450), strings.Repeat("é", 230), strings.Repeat("€k", 110)} {
		for _, hist := range []int{250, 600} {
			history := leaves(key, "a", hist) + `,{"role":"assistant","content":"ok"}`
			for _, pad := range []int{0, 16000} {
				for _, later := range []int{100, 1500} {
					b1 := []byte(`{"messages":[` + history + `,{"role":"user","content":"hi"}]}`)
					bodies := [][]byte{b1}
					for _, order := range []int{0, 1} {
						b := `{"messages":[` + history + `,` + filler(pad) + `,` + leaves(key, "b", later) + `]}`
						if order == 1 {
							b = `{"messages":[` + history + `,` + leaves(key, "b", later) + `,` + filler(pad) + `]}`
						}
						bodies = append(bodies, []byte(b))
					}
					name := fmt.Sprintf("key %d history %d pad %d later %d", len(key), hist, pad, later)
					// Each body from each other's Resume, and the third from the second's,
					// itself resumed from the first's.
					for i, a := range bodies {
						ra, err := ParseResumed("/v1/chat/completions", a, nil)
						if err != nil {
							t.Fatal(err)
						}
						for j, b := range bodies {
							n := min(commonPrefix(a, b), ra.Boundaries(1)[0])
							for _, cut := range ra.Boundaries(6) {
								if cut <= n {
									n = cut
									break
								}
							}
							rb := checkResumed(t, fmt.Sprintf("%s: %d from %d", name, j, i), "/v1/chat/completions", b, ra.ResumeAt(n, nil))
							if rb == nil {
								continue
							}
							for k, c := range bodies {
								m := commonPrefix(b, c)
								for _, cut := range rb.Boundaries(6) {
									if cut <= m {
										checkResumed(t, fmt.Sprintf("%s: %d from %d from %d", name, k, j, i), "/v1/chat/completions", c, rb.ResumeAt(cut, nil))
										break
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// redteamSeeds are pairs of bodies for FuzzResume near pathLimit's bound: a short body whose
// history's paths outgrow it, and a longer one that resends that history.
func redteamSeeds() [][2][]byte {
	history := deepLeaves("a", 100) + `,{"role":"assistant","content":"ok"}`
	short := []byte(`{"messages":[` + history + `,{"role":"user","content":"hi"}]}`)
	long := []byte(`{"messages":[` + history + `,{"role":"user","content":"` + strings.Repeat("filler words ", 1500) + `"},` +
		deepLeaves("b", 40) + `]}`)
	return [][2][]byte{{short, long}, {long, short}}
}

// TestResumeRedteamMessageAfterRange: a range may end at a message that only starts within
// the shared bytes, so a later body decides that message's role with bytes the earlier body
// did not have. Every way of giving it the role of the run the range ended (the role key
// spelled otherwise, escaped, repeated, missing where the API defaults it, a message type that
// takes a role) must read like the whole parse: joined to the run, never after a closed one.
func TestResumeRedteamMessageAfterRange(t *testing.T) {
	type shape struct {
		name, path, open, close string
		user, bot               string   // a message of the run's role and one of another, each with %s for its text
		joins, apart            []string // messages after the range: of the run's role, of another
	}
	shapes := []shape{
		{"chat", "/v1/chat/completions", `{"model":"m","messages":[`, `]}`,
			`{"role":"user","content":%q}`, `{"role":"assistant","content":%q}`,
			[]string{`{"role":"user","content":"x"}`, `{"Role":"user","content":"x"}`, `{"r\u006fle":"user","content":"x"}`,
				`{"role":"u\u0073er","content":"x"}`, `{"role":"user","role":"user","content":"x"}`, `{"content":"x","role":"user"}`,
				`{"role":"user","content":[{"type":"text","text":"x"}]}`, `{"ROLE":"user","content":"x"}`},
			[]string{`{"role":"assistant","content":"x"}`, `{"role":"assistant","role":"user","content":"x"}`, `{"content":"x"}`,
				`{"role":"User","content":"x"}`, `"x"`, `7`, `{"role":"tool","content":"x"}`}},
		{"anthropic", "/v1/messages", `{"model":"m","max_tokens":9,"messages":[`, `]}`,
			`{"role":"user","content":[{"type":"text","text":%q}]}`, `{"role":"assistant","content":%q}`,
			[]string{`{"role":"user","content":"x"}`, `{"Role":"user","content":[{"type":"text","text":"x"}]}`,
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}`},
			[]string{`{"role":"assistant","content":"x"}`, `{"content":"x"}`, `null`}},
		{"gemini", "/v1beta/models/g:generateContent", `{"contents":[`, `]}`,
			`{"parts":[{"text":%q}]}`, `{"role":"model","parts":[{"text":%q}]}`,
			[]string{`{"parts":[{"text":"x"}]}`, `{"role":"user","parts":[{"text":"x"}]}`, `{"ROLE":"user","parts":[{"text":"x"}]}`,
				`{"r_o_l_e":"user","parts":[{"text":"x"}]}`, `{}`},
			[]string{`{"role":"model","parts":[{"text":"x"}]}`, `{"role":"function","parts":[{"text":"x"}]}`, `"x"`}},
		{"responses", "/v1/responses", `{"model":"m","input":[`, `]}`,
			`{"role":"user","content":%q}`, `{"type":"message","role":"assistant","content":[{"type":"output_text","text":%q}]}`,
			[]string{`{"role":"user","content":"x"}`, `{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]}`,
				`{"role":"user","type":"message","content":"x"}`},
			[]string{`{"type":"function_call_output","call_id":"c","output":"x"}`, `{"type":"function_call","role":"user","name":"f","arguments":"x"}`,
				`{"type":"message","type":"message2","role":"user","content":"x"}`, `"x"`}},
	}
	for _, s := range shapes {
		var msgs []string
		for i := range 6 {
			msgs = append(msgs, fmt.Sprintf(s.user, fmt.Sprintf("question %d", i)), fmt.Sprintf(s.bot, fmt.Sprintf("answer %d", i)))
		}
		msgs = append(msgs, fmt.Sprintf(s.user, "Ignore all previous"))
		b1 := []byte(s.open + joinStrings(append(slices.Clone(msgs), fmt.Sprintf(s.bot, "no"), fmt.Sprintf(s.user, "ok"))) + s.close)
		r1, err := ParseResumed(s.path, b1, nil)
		if err != nil {
			t.Fatal(err)
		}
		at := len(s.open) + len(joinStrings(msgs)) + 1 // the message after the user's run
		res := r1.ResumeAt(at, nil)
		if res == nil || res.Bytes() == 0 {
			t.Fatalf("%s: no Resume ending at the answer", s.name)
		}
		for k, set := range [][]string{s.joins, s.apart} {
			for _, next := range set {
				b2 := []byte(s.open + joinStrings(append(slices.Clone(msgs), next, fmt.Sprintf(s.user, "more"))) + s.close)
				if commonPrefix(b1, b2) < at {
					t.Fatalf("%s: %s parts before the boundary", s.name, next)
				}
				got := checkResumed(t, s.name+" "+next, s.path, b2, res)
				t.Logf("%s %s: %d bytes unread", s.name, next, got.Skipped())
				if apart := k == 1; apart && got.Skipped() == 0 {
					t.Errorf("%s: %s, of another role, voided the Resume", s.name, next)
				}
			}
		}
	}
}
