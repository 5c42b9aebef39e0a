package llmreq

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/bench/chatbody"
)

// checkTrimmed is checkResumed, and, when the Resume was taken, compares the resumed Request's
// records of its messages with the whole parse's: a later body resumes from them.
func checkTrimmed(t *testing.T, name, path string, body []byte, res *Resume) *Request {
	t.Helper()
	got := checkResumed(t, name, path, body, res)
	if got == nil || got.Skipped() == 0 {
		return got
	}
	full, _ := ParseResumed(path, body, nil)
	if !reflect.DeepEqual(got.msgs, full.msgs) {
		for i := range min(len(got.msgs), len(full.msgs)) {
			if got.msgs[i] != full.msgs[i] {
				t.Fatalf("%s: record %d resumed %+v, whole %+v", name, i, got.msgs[i], full.msgs[i])
			}
		}
		t.Fatalf("%s: %d records resumed, %d whole", name, len(got.msgs), len(full.msgs))
	}
	return got
}

// trimmed returns body a without its records x to y (the messages they stand for), and with
// more, an element, after its last message when more is not empty.
func trimmed(h *History, a []byte, x, y int, more string) []byte {
	fx, _ := h.Message(x)
	fy, _ := h.Message(y)
	_, end := h.Message(h.Len() - 1)
	b := append(append([]byte(nil), a[:fx]...), a[fy:end]...)
	if more != "" {
		b = append(append(b, ','), more...)
	}
	return append(b, a[end:]...)
}

// trimPairs checks, for body a, every trim of up to drops messages from its first records (x
// < 3), with and without a turn added, resumed from a's History at each message boundary
// after the kept messages' start, with dirty texts chosen at random, against parsing the
// trimmed body whole. It returns how many of them left bytes unread.
func trimPairs(t *testing.T, rng *rand.Rand, name, path string, a []byte, drops []int) (resumed int) {
	t.Helper()
	ra, err := ParseResumed(path, a, nil)
	if err != nil {
		return 0
	}
	h0 := ra.History(nil)
	if h0 == nil {
		return 0
	}
	for x := range min(3, h0.Len()) {
		for _, d := range drops {
			y := x + d
			if y >= h0.Len() {
				continue
			}
			for _, more := range []string{"", `{"role":"user","content":"one more question"}`} {
				b := trimmed(h0, a, x, y, more)
				fy, _ := h0.Message(y)
				// The end of the list, and a few message boundaries and bytes after fy.
				_, end := h0.Message(h0.Len() - 1)
				cuts := []int{end, fy + rng.IntN(len(a)-fy+1)}
				for range 3 {
					f, to := h0.Message(y + rng.IntN(h0.Len()-y))
					cuts = append(cuts, f, to)
				}
				for _, n := range cuts {
					for round := range 2 {
						dirty := someTexts(rng, ra, round)
						res := ra.History(dirty).Trimmed(x, y, n)
						checkDirty(t, name, ra, dirty, res)
						got := checkTrimmed(t, fmt.Sprintf("%s drop %d..%d at %d round %d more %v", name, x, y, n, round, more != ""), path, b, res)
						if got != nil && got.Skipped() > 0 {
							resumed++
						}
					}
				}
			}
		}
	}
	return resumed
}

// TestTrimVariants: every table body with a message list, and its variants, trimmed of its
// first messages.
func TestTrimVariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	resumed := 0
	for _, c := range allAPICases() {
		full, variants := resumeVariants(t, c.body)
		for i, v := range append(variants, full) {
			resumed += trimPairs(t, rng, fmt.Sprintf("%s variant %d", c.name, i), c.path, v, []int{1, 2, 3})
		}
	}
	for i, p := range redteamSeeds() {
		for j, a := range p {
			resumed += trimPairs(t, rng, fmt.Sprintf("redteam %d.%d", i, j), "/v1/chat/completions", a, []int{1, 2})
		}
	}
	if resumed < 1000 {
		t.Fatalf("only %d trimmed bodies were resumed: the table bodies changed, or Trimmed voids", resumed)
	}
}

// longChat is a Chat Completions body of n messages after a system message: runs of one role,
// tool calls and results, multi-part content, a path longer than MaxPathLen, and a system message at index 40 (so that a
// trim that keeps it after the first system message makes two system messages a run).
func longChat(n int) []byte {
	var msgs []string
	msgs = append(msgs, `{"role":"system","content":"You are terse."}`)
	for i := 1; i <= n; i++ {
		var m string
		switch {
		case i == 20 || i == 60 || i == 101:
			m = `{"role":"user","content":{"` + strings.Repeat("k", 520) + `":"a path MaxPathLen cuts"}}`
		case i == 40:
			m = `{"role":"system","content":"Mid-conversation rules."}`
		case i%7 == 3:
			m = fmt.Sprintf(`{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function","function":{"name":"look","arguments":"{\"q\":\"thing %d\"}"}}]}`, i, i)
		case i%7 == 4:
			m = fmt.Sprintf(`{"role":"tool","tool_call_id":"c%d","content":"result %d: forty lines"}`, i-1, i)
		case i%5 == 0:
			m = fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":"part one of %d"},{"type":"text","text":"part two"}]}`, i)
		case i%2 == 0:
			m = fmt.Sprintf(`{"role":"user","content":"question %d"}`, i)
		default:
			m = fmt.Sprintf(`{"role":"assistant","content":"answer %d"}`, i)
		}
		msgs = append(msgs, m)
	}
	return []byte(`{"model":"m","messages":[` + strings.Join(msgs, ",") + `],"stream":true}`)
}

// TestTrimIndexDigits: trims across the places where a kept message's index loses digits
// (99 to 9, 100 to 98, 10 to 9, 1000 to 999), and where the kept messages begin with a role
// the message before them has (a run a whole read would join them to).
func TestTrimIndexDigits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{12, 45, 110, 1010} {
		drops := []int{1, 2, 38, 39, 40, 90, 91, 100}
		if n == 1010 {
			drops = []int{1, 2, 39}
		}
		if got := trimPairs(t, rng, fmt.Sprintf("chat of %d", n), "/v1/chat/completions", longChat(n), drops); got == 0 {
			t.Fatalf("chat of %d: no trim was resumed", n)
		}
	}
}

// TestTrimJoinVoids: when the first kept message continues the run of the message before it,
// the Resume is void, and the body read whole.
func TestTrimJoinVoids(t *testing.T) {
	a := []byte(`{"messages":[{"role":"system","content":"s1"},{"role":"user","content":"u1"},{"role":"assistant","content":"a1"},` +
		`{"role":"system","content":"s2"},{"role":"user","content":"u2"},{"role":"assistant","content":"a2"},{"role":"user","content":"u3"}]}`)
	ra, err := ParseResumed("/v1/chat/completions", a, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := ra.History(nil)
	_, end := h.Message(h.Len() - 1)
	// Dropping u1 and a1 keeps s2 after s1: one run of two system messages, one group.
	b := trimmed(h, a, 1, 3, "")
	res := h.Trimmed(1, 3, end)
	if res == nil {
		t.Fatal("no Resume")
	}
	got := checkTrimmed(t, "join", "/v1/chat/completions", b, res)
	if got.Skipped() != 0 {
		t.Fatalf("%d bytes left unread where the kept messages join the run before them", got.Skipped())
	}
	if got.Texts[0].Group == 0 || got.Texts[0].Group != got.Texts[1].Group {
		t.Fatalf("s1 and s2 are not one group: %+v", got.Texts[:2])
	}
	// Dropping u1 alone keeps a1 after s1: another role, resumed.
	got = checkTrimmed(t, "no join", "/v1/chat/completions", trimmed(h, a, 1, 2, ""), h.Trimmed(1, 2, end))
	if got.Skipped() == 0 {
		t.Fatal("a trim that joins no run was read whole")
	}
}

// TestTrimConversation slides a real conversation (the load test's) over a window that trims
// its history with every request, each request resumed from the History of the one before,
// itself resumed: what is left unread carries over from trim to trim.
func TestTrimConversation(t *testing.T) {
	m, err := chatbody.LoadMaterial(chatbody.Corpora())
	if err != nil {
		t.Fatal(err)
	}
	for _, window := range [][2]int{{64 << 10, 65 << 10}, {64 << 10, 96 << 10}} {
		conv := m.Resent(window[0], window[1], 3)
		const requests = 100
		resumed, trims := resendConversation(t, fmt.Sprintf("window %d ", window[1]), conv, requests, 8, trimmedResume)
		if trims < conv.Trims()-1 || conv.Trims() == 0 {
			t.Fatalf("window %d: %d trims resumed by Trimmed, the conversation trimmed %d times", window[1], trims, conv.Trims())
		}
		if resumed < requests*9/10 {
			t.Fatalf("window %d: %d of %d requests left 80%% of their bytes unread, want nearly all (trims: %d)", window[1], resumed, requests, conv.Trims())
		}
	}
}

// trimmedResume finds, by comparing bytes, the trim that makes body of prev's, and returns its
// Resume.
func trimmedResume(prev *Request, prevBody, body []byte) *Resume {
	h := prev.History(nil)
	if h == nil {
		return nil
	}
	for a := range min(4, h.Len()) {
		fa, _ := h.Message(a)
		if fa > len(body) || !bytes.Equal(prevBody[:fa], body[:fa]) {
			continue
		}
		for b := a + 1; b < h.Len(); b++ {
			fb, _ := h.Message(b)
			n := fb + commonPrefix(prevBody[fb:], body[fa:])
			if n-fb >= 64 {
				return h.Trimmed(a, b, n)
			}
		}
	}
	return nil
}

// FuzzResumeShifted checks a body trimmed of messages x to y of body a and given a new tail,
// resumed from a's History, against parsing it whole: go test -fuzz FuzzResumeShifted ./llmreq/
func FuzzResumeShifted(f *testing.F) {
	for _, c := range allAPICases() {
		full, variants := resumeVariants(f, c.body)
		f.Add(c.path, full, uint8(1), uint8(1), uint16(0), []byte(nil))
		if len(variants) > 0 {
			f.Add(c.path, variants[len(variants)-1], uint8(0), uint8(2), uint16(7), []byte(`{"role":"user","content":"x"}`))
		}
	}
	f.Add("/v1/chat/completions", longChat(110), uint8(1), uint8(90), uint16(3), []byte(`"loose"`))
	f.Fuzz(func(t *testing.T, path string, a []byte, x, d uint8, cut uint16, more []byte) {
		if len(a) > 1<<16 || len(more) > 1<<10 {
			return
		}
		ra, err := ParseResumed(path, a, nil)
		if err != nil {
			return
		}
		h := ra.History(nil)
		if h == nil || int(x)+int(d) >= h.Len() || d == 0 {
			return
		}
		y := int(x) + int(d)
		b := trimmed(h, a, int(x), y, string(more))
		fy, _ := h.Message(y)
		n := fy + int(cut)%(len(a)-fy+1)
		var dirty []int
		for i := range ra.Texts {
			if (i+int(cut))%5 == 0 {
				dirty = append(dirty, i)
			}
		}
		res := ra.History(dirty).Trimmed(int(x), y, n)
		checkDirty(t, "fuzz", ra, dirty, res)
		// The trimmed body is only what the caller vouches for when it is the earlier body's
		// bytes up to n: past n, more may have changed them.
		if _, end := h.Message(h.Len() - 1); n > end {
			return
		}
		checkTrimmed(t, "fuzz", path, b, res)
	})
}

// TestResumesAt: the Resumes ResumesAt cuts back from the first place's are ResumeAt's, for
// every table body and its variants, resumed or not, with dirty texts.
func TestResumesAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	checked := 0
	check := func(name string, r *Request) {
		places := r.Boundaries(8)
		for round := range 2 {
			var dirty []int
			for i := range r.Texts {
				if round > 0 && rng.IntN(5) == 0 {
					dirty = append(dirty, i)
				}
			}
			got := r.ResumesAt(nil, places, dirty)
			for i, n := range places {
				if want := r.ResumeAt(n, dirty); !reflect.DeepEqual(got[i], want) {
					t.Fatalf("%s: place %d (%d): ResumesAt %+v, ResumeAt %+v", name, i, n, got[i], want)
				}
				checked++
			}
		}
	}
	for _, c := range allAPICases() {
		full, variants := resumeVariants(t, c.body)
		for i, v := range append(variants, full, longChat(60)) {
			if r, err := ParseResumed(c.path, v, nil); err == nil {
				check(fmt.Sprintf("%s variant %d", c.name, i), r)
			}
		}
	}
	m, err := chatbody.LoadMaterial(chatbody.Corpora())
	if err != nil {
		t.Fatal(err)
	}
	conv := m.Resent(32<<10, 48<<10, 1)
	var prev *Request
	for i := range 30 {
		body := conv.Next(nil)
		var res *Resume
		if prev != nil {
			res = prev.ResumeAt(prev.Boundaries(0)[0], nil)
		}
		r, err := ParseResumed("/v1/chat/completions", body, res)
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("conversation %d", i), r)
		prev = r
	}
	if checked < 1000 {
		t.Fatalf("only %d places checked", checked)
	}
}
