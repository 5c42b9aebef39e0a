package llmreq

import (
	"fmt"
	"strings"
	"testing"
)

// deepLeaves is a user message whose content is an object under one long key holding n string
// members: every leaf's path (and its key's) is about 500 bytes, so the paths of a few hundred
// leaves outgrow twice a small body (pathLimit).
func deepLeaves(prefix string, n int) string {
	var b strings.Builder
	b.WriteString(`{"role":"user","content":{"` + strings.Repeat("k", 450) + `":{`)
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
	leaves := func(key, prefix string, n int) string {
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
