package firewall

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/bench/chatbody"
	"github.com/promptwall/promptwall/llmreq"
)

// differential sends body as client to a firewall that resumes and to one
// without a cache, and fails unless both treat it the same (status, what
// goes upstream, headers, every log entry). It returns whether the
// request was blocked.
func differential(t *testing.T, name string, on, off *fixture, body, client string) (blocked bool) {
	t.Helper()
	var res [2]result
	var entries [2][]map[string]any
	for k, fx := range []*fixture{on, off} {
		mark := fx.logs.Len()
		req := post("/v1/chat/completions", body)
		req.Header.Set("Authorization", "Bearer "+client)
		res[k] = fx.do(t, req)
		entries[k] = logEntries(t, fx, mark)
	}
	a, b := res[0], res[1]
	if a.rec.Code != b.rec.Code || a.up.called != b.up.called || !bytes.Equal(a.up.body, b.up.body) ||
		a.rec.Body.String() != b.rec.Body.String() {
		t.Fatalf("%s: resumed %d %v %q, whole %d %v %q", name, a.rec.Code, a.up.called, a.rec.Body, b.rec.Code, b.up.called, b.rec.Body)
	}
	for _, h := range []string{HeaderVerdict, HeaderRules} {
		if a.up.header.Get(h) != b.up.header.Get(h) {
			t.Fatalf("%s: %s %q resumed, %q whole", name, h, a.up.header.Get(h), b.up.header.Get(h))
		}
	}
	if !reflect.DeepEqual(entries[0], entries[1]) {
		t.Fatalf("%s: logs differ\nresumed %v\nwhole   %v", name, entries[0], entries[1])
	}
	return !a.up.called
}

// TestTrimInHandler slides a real conversation over a window that drops
// its oldest turns after the system message nearly every request, with a
// suspicious question in its history, a malicious one, and a tool result
// in two parts that is malicious only joined, to a firewall that resumes
// and to one without a cache: every request must be treated the same, the
// suspicious text found in every request that holds it, and most of the
// trimmed requests' bytes resumed.
func TestTrimInHandler(t *testing.T) {
	m, err := chatbody.LoadMaterial(chatbody.Corpora())
	if err != nil {
		t.Fatal(err)
	}
	on, off := newFixture(t, &Firewall{}), newFixture(t, &Firewall{SafeCache: -1})
	system := msg("system", chatbody.ChatSystem)
	const window = 24 << 10
	var turns []string // after the system message
	next, trims, quiet := 0, 0, 0
	pending := false // the next request is trimmed
	for turn := range 60 {
		q, ans, last := scriptedTurn(m, &next, turn)
		msgs := append(append([]string{system}, turns...), last...)
		body := chat(msgs...)
		before := resumedBytes(t, on)
		blocked := differential(t, fmt.Sprintf("turn %d", turn), on, off, body, "a")
		if pending {
			pending, trims = false, trims+1
			if resumedBytes(t, on)-before > float64(len(body)/2) {
				quiet++
			}
		}
		if strings.Contains(body, `"`+suspText+`"`) {
			if !strings.Contains(on.logs.String()[max(0, on.logs.Len()-4096):], "instruction_override") {
				t.Fatalf("turn %d: the suspicious question in the history was not found again", turn)
			}
		}
		if blocked != (turn == 12 || turn == 20) {
			t.Fatalf("turn %d: blocked %v", turn, blocked)
		}
		if blocked {
			continue // the client drops the turn
		}
		turns = append(turns, msg("user", q.Content), msg("assistant", ans.Content))
		if len(chat(append([]string{system}, turns...)...)) > window {
			for len(chat(append([]string{system}, turns...)...)) > window*3/4 {
				turns = turns[2:]
			}
			pending = true
		}
	}
	if trims < 10 || quiet < trims*3/4 {
		t.Fatalf("%d of %d trimmed requests resumed over half their bytes", quiet, trims)
	}
}

// TestTrimEveryRequest: a client that trims with every request (a
// sliding window one turn wide) is resumed every time, from what the
// request before was resumed from, and treated as one without a cache
// treats it.
func TestTrimEveryRequest(t *testing.T) {
	m, err := chatbody.LoadMaterial(chatbody.Corpora())
	if err != nil {
		t.Fatal(err)
	}
	on, off := newFixture(t, &Firewall{}), newFixture(t, &Firewall{SafeCache: -1})
	conv := m.Resent(32<<10, 33<<10, 5)
	var body []byte
	trims, quiet := 0, 0
	for i := range 60 {
		before, trimmed := resumedBytes(t, on), conv.Trims()
		body = conv.Next(body)
		trimmed = conv.Trims() - trimmed
		if differential(t, fmt.Sprintf("request %d", i), on, off, string(body), "a") {
			t.Fatalf("request %d was blocked", i)
		}
		if trimmed > 0 {
			trims++
			if resumedBytes(t, on)-before > float64(len(body)/2) {
				quiet++
			}
		}
	}
	if trims < 30 || quiet < trims-1 {
		t.Fatalf("%d of %d trimmed requests resumed over half their bytes", quiet, trims)
	}
}

// TestTrimRedteam: after a clean conversation, a client sends it trimmed
// and altered: a kept message edited, a byte changed within the kept
// messages, two kept messages swapped, the head changed, the dropped
// messages kept but others dropped. No text the resumed parse leaves
// unread may be one the earlier body did not hold, clean, at its offset
// less the shift; and an edit that makes a kept message malicious is
// blocked.
func TestTrimRedteam(t *testing.T) {
	m, err := chatbody.LoadMaterial(chatbody.Corpora())
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	msgs = append(msgs, msg("system", chatbody.ChatSystem))
	for i := range 30 {
		msgs = append(msgs, msg(m.Messages[i].Role, m.Messages[i].Content))
	}
	old := chat(msgs...)
	trimmed := func(edit func(kept []string) []string) string {
		kept := edit(append([]string{}, msgs[5:]...))
		return chat(append([]string{msgs[0]}, kept...)...)
	}
	cases := map[string]string{
		"plain": trimmed(func(k []string) []string { return k }),
		"edited": trimmed(func(k []string) []string {
			k[7] = msg("user", malText)
			return k
		}),
		"byte": trimmed(func(k []string) []string {
			b := []byte(k[9])
			at := strings.Index(k[9], `"content": "`) + 14
			b[at] = map[bool]byte{true: 'Q', false: 'Z'}[b[at] != 'Q']
			k[9] = string(b)
			return k
		}),
		"same length": trimmed(func(k []string) []string {
			// A kept message replaced by a malicious one of its length:
			// every offset after it stays where it was.
			i := 6
			for len(k[i]) < len(msg("user", malText))+8 || !strings.HasPrefix(k[i], `{"role": "user"`) {
				i++
			}
			k[i] = msg("user", malText+strings.Repeat(" ", len(k[i])-len(msg("user", malText))))
			return k
		}),
		"swapped": trimmed(func(k []string) []string {
			k[3], k[4] = k[4], k[3]
			return k
		}),
		"head":   strings.Replace(trimmed(func(k []string) []string { return k }), `"model": "gpt-4o"`, `"model": "gpt-4O"`, 1),
		"system": chat(append([]string{msg("system", chatbody.ChatSystem+" ")}, msgs[5:]...)...),
		"middle": chat(append(append([]string{}, msgs[:10]...), msgs[14:]...)...),
		"tail":   trimmed(func(k []string) []string { return append(k[:len(k)-1], msg("user", malText)) }),
	}
	for name, body := range cases {
		on, off := newFixture(t, &Firewall{}), newFixture(t, &Firewall{SafeCache: -1})
		if differential(t, name+" first", on, off, old, "a") {
			t.Fatal("the clean conversation was blocked")
		}
		oldReq, err := llmreq.Parse("/v1/chat/completions", []byte(old))
		if err != nil {
			t.Fatal(err)
		}
		// What findTrim makes of the body, checked against a whole parse.
		hr := post("/v1/chat/completions", body)
		hr.Header.Set("Authorization", "Bearer a")
		client := on.fw.cache.clientKey(hr)
		b := []byte(body)
		sums := on.fw.resume.prefixes(nil, client, "/v1/chat/completions", b)
		tr := on.fw.resume.findTrim(client, "/v1/chat/completions", sums, b)
		if name == "plain" && tr.res == nil {
			t.Fatal("a plain trim was not resumed")
		}
		whole, err := llmreq.Parse("/v1/chat/completions", b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := llmreq.ParseResumed("/v1/chat/completions", b, tr.res)
		if err != nil {
			t.Fatal(err)
		}
		read := map[string]bool{}
		for _, x := range got.Texts {
			read[x.Path+"\x00"+x.Value] = true
		}
		held := map[string]bool{}
		for _, x := range oldReq.Texts {
			held[x.Value] = true
		}
		for _, x := range whole.Texts {
			if !read[x.Path+"\x00"+x.Value] && !held[x.Value] {
				t.Fatalf("%s: %q at %s left unread, and the earlier body did not hold it", name, x.Value, x.Path)
			}
		}
		blocked := differential(t, name, on, off, body, "a")
		if want := strings.Contains(body, malText); blocked != want {
			t.Fatalf("%s: blocked %v, want %v", name, blocked, want)
		}
	}
}

// TestTrimCarriesHashes: the hashes an entry takes from the entry before
// it are those of its own body's messages, request after request of a
// conversation that grows and is trimmed, and the entry holds no text.
func TestTrimCarriesHashes(t *testing.T) {
	m, err := chatbody.LoadMaterial(chatbody.Corpora())
	if err != nil {
		t.Fatal(err)
	}
	fx := newFixture(t, &Firewall{})
	conv := m.Resent(32<<10, 40<<10, 7)
	var bodies [][]byte
	entries := map[*trimEntry]bool{}
	for i := range 60 {
		body := conv.Next(nil)
		bodies = append(bodies, body)
		req := post("/v1/chat/completions", string(body))
		req.Header.Set("Authorization", "Bearer a")
		client := fx.fw.cache.clientKey(req)
		fx.do(t, req)
		tab := fx.fw.resume
		e := tab.trims.entry(tab.trimKey(client, "/v1/chat/completions"))
		if e == nil {
			t.Fatalf("request %d: no entry", i)
		}
		entries[e] = true
		// The entry is of one of the bodies sent: its hashes are that body's.
		ok := false
		for k := len(bodies) - 1; k >= 0 && !ok; k-- {
			b := bodies[k]
			_, end := e.hist.Message(e.hist.Len() - 1)
			if end > len(b) || !slices.Equal(e.sums, tab.prefixes(nil, client, "/v1/chat/completions", b)) {
				continue
			}
			ok = true
			for j := range e.hist.Len() {
				from, to := e.hist.Message(j)
				want := trimHashes{piece: hashBytes(tab.seed, b[from:to])}
				if from+trimLead <= end {
					want.lead = hashBytes(tab.seed, b[from:from+trimLead])
				}
				if e.msgs[j] != want {
					t.Fatalf("request %d: message %d's hashes %x, its bytes' %x", i, j, e.msgs[j], want)
				}
			}
		}
		if !ok {
			t.Fatalf("request %d: the entry is of no body sent", i)
		}
	}
	if len(entries) < 10 || conv.Trims() < 5 {
		t.Fatalf("%d entries, %d trims", len(entries), conv.Trims())
	}
	holdsNoText(t, reflect.TypeFor[trimTable](), reflect.TypeFor[trimEntry](), reflect.TypeFor[trimHashes](), reflect.TypeFor[llmreq.History]())
}

// TestTrimLongSystem: a system message longer than the hashed blocks
// makes a trimmed body share a prefix with the conversation's first
// request, whose Resume leaves only the system message unread: the trim
// table is asked all the same, and resumes the kept turns.
func TestTrimLongSystem(t *testing.T) {
	m, err := chatbody.LoadMaterial(chatbody.Corpora())
	if err != nil {
		t.Fatal(err)
	}
	on, off := newFixture(t, &Firewall{}), newFixture(t, &Firewall{SafeCache: -1})
	var long strings.Builder
	for i := 0; long.Len() < 3*resumeBlock; i++ {
		long.WriteString(m.Messages[2*i+1].Content)
	}
	system := msg("system", long.String())
	var turns []string
	for i := range 24 {
		turns = append(turns, msg("user", m.Messages[40+2*i].Content))
		if i < 10 {
			if differential(t, fmt.Sprintf("turn %d", i), on, off, chat(append([]string{system}, turns...)...), "a") {
				t.Fatalf("turn %d was blocked", i)
			}
		}
		turns = append(turns, msg("assistant", m.Messages[41+2*i].Content))
	}
	// The client drops its first four turns.
	body := chat(append(append([]string{system}, turns[8:20]...), msg("user", "And one more question?"))...)
	before := resumedBytes(t, on)
	differential(t, "trimmed", on, off, body, "a")
	if got := resumedBytes(t, on) - before; got < float64(len(body)/2) {
		t.Fatalf("%v of %d bytes resumed", got, len(body))
	}
}

// TestTrimShortListsNotRecorded: a long body of two messages (a system
// message and a document) gets no trim entry, which every new document
// would hash again; one of three does.
func TestTrimShortListsNotRecorded(t *testing.T) {
	fx := newFixture(t, &Firewall{})
	doc, err := json.Marshal(chatbody.Prose(20<<10, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		msgs   string
		record bool
	}{
		{`{"role":"system","content":"Be brief."},{"role":"user","content":` + string(doc) + `}`, false},
		{`{"role":"system","content":"Be brief."},{"role":"user","content":` + string(doc) + `},{"role":"assistant","content":"Done."}`, true},
	} {
		req := post("/v1/chat/completions", `{"model":"m","messages":[`+tc.msgs+`]}`)
		req.Header.Set("Authorization", "Bearer short-"+strconv.FormatBool(tc.record))
		client := fx.fw.cache.clientKey(req)
		fx.do(t, req)
		tab := fx.fw.resume
		if got := tab.trims.entry(tab.trimKey(client, "/v1/chat/completions")) != nil; got != tc.record {
			t.Errorf("%d bytes: recorded %v, want %v", len(tc.msgs), got, tc.record)
		}
	}
}
