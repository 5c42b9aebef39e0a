package firewall

import (
	"bytes"
	"hash/maphash"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/promptwall/promptwall/bench/chatbody"
	"github.com/promptwall/promptwall/engine"
)

// BenchmarkServeHTTP measures the firewall alone per request (read, parse,
// scan, forward to a next handler that drains the body), on the load
// test's bodies, each request with a new stamp in its last user message as
// the load test sends them (a new turn: the history is what earlier
// requests sent):
// go test -bench ServeHTTP -benchmem ./caddymodule/firewall/
//
// "nocache" runs turn the safe-text cache off; "repeat" ones send the same
// body every time, all of which the cache then holds.
//
// It also times the load test's 256k-doc body, from the published corpora
// (chatbody.Corpora): real messages, which the rules' candidates and
// matches make far dearer than the prose (and sanitize).
func BenchmarkServeHTTP(b *testing.B) {
	type size struct {
		name string
		body []byte
	}
	doc, err := chatbody.LongDocument256K(chatbody.Corpora())
	if err != nil {
		b.Fatal(err)
	}
	sizes := []size{{"4KiB", chatbody.Chat4K()}, {"256KiB", chatbody.LongContext256K()}, {"256KiB-doc", doc}}
	for _, size := range sizes {
		for _, mode := range []string{"", "-nocache", "-repeat"} {
			// The stamps go on across the runs the benchmark makes with
			// growing b.N: numbered from 0 in each, a run's early requests
			// would repeat the last run's, and the cache find their new
			// message.
			var stamp uint64
			b.Run(size.name+mode, func(b *testing.B) {
				fw := &Firewall{}
				if mode == "-nocache" {
					fw.SafeCache = -1
				}
				fx := newFixture(b, fw)
				body := bytes.Clone(size.body)
				at := chatbody.StampAt(body)
				if at < 0 {
					b.Fatal("no place for a stamp")
				}
				next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
					// As an HTTP transport does: read the body, then close it.
					_, err := io.Copy(io.Discard, r.Body)
					r.Body.Close()
					return err
				})
				b.SetBytes(int64(len(body)))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if mode != "-repeat" {
						stamp++
						chatbody.Stamp(body, at, stamp)
					}
					req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
					req = withVars(req)
					rec := httptest.NewRecorder()
					if err := fx.fw.ServeHTTP(rec, req, next); err != nil || rec.Code != 200 {
						b.Fatalf("%v %d %s", err, rec.Code, rec.Body)
					}
				}
			})
		}
	}
}

// BenchmarkResent measures the firewall per request on real shapes
// (chatbody.Material, without the texts the rulebook calls malicious, as
// the load test sends them): "resent" is a conversation resent with one
// more question and answer each request by one client, the requests of a
// chat client; "slide" the same conversation kept to 200 KiB by dropping
// its oldest turns with every request; "agent" a 256 KiB agent conversation and "4k-chat" a 4 KiB
// conversation, each stamped anew in its last question every request.
// go test -bench Resent -benchmem ./caddymodule/firewall/
func BenchmarkResent(b *testing.B) {
	m, err := chatbody.LoadMaterial(chatbody.Corpora())
	if err != nil {
		b.Fatal(err)
	}
	e := engine.Default()
	m = m.Without(func(s string) bool { return e.ScanString(s).Verdict == engine.Malicious })
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return err
	})
	serve := func(b *testing.B, fx *fixture, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer sk-bench")
		req = withVars(req)
		rec := httptest.NewRecorder()
		if err := fx.fw.ServeHTTP(rec, req, next); err != nil || rec.Code != 200 {
			b.Fatalf("%v %d %s", err, rec.Code, rec.Body)
		}
	}
	resent := func(lo, hi int) func(b *testing.B) {
		return func(b *testing.B) {
			fx := newFixture(b, &Firewall{})
			conv := m.Resent(lo, hi, 0)
			var body []byte
			for range 8 { // past the opening request, into the steady state
				body = conv.Next(body)
				serve(b, fx, body)
			}
			var n int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				body = conv.Next(body)
				n += int64(len(body))
				serve(b, fx, body)
			}
			b.ReportMetric(float64(n)/float64(b.N), "bytes/op")
		}
	}
	b.Run("resent", resent(200<<10, 312<<10))
	// A sliding-window client: its oldest turn dropped with every request.
	b.Run("slide", resent(200<<10, 201<<10))
	stamped := func(body []byte) func(b *testing.B) {
		return func(b *testing.B) {
			fx := newFixture(b, &Firewall{})
			at := chatbody.StampAt(body)
			var stamp uint64
			b.SetBytes(int64(len(body)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				stamp++
				chatbody.Stamp(body, at, stamp)
				serve(b, fx, body)
			}
		}
	}
	b.Run("agent", stamped(m.Agent(256<<10, 1)))
	// A resent history with a suspicious message in it, and one without:
	// the first is scanned, sanitized and logged again with every request
	// (a text with a match is never left unread), as 40% of "resent"'s
	// requests are.
	for _, flagged := range []bool{true, false} {
		name := "clean"
		if flagged {
			name = "flagged"
		}
		b.Run(name, stamped(historyWith(b, m, flagged)))
	}
	// The load test's 4k-chat: the first seed whose chat fills 3.5 KiB.
	chat := m.Chat(4<<10, 0)
	for seed := uint64(1); len(chat) < 3584 && seed < uint64(len(m.Messages)); seed++ {
		chat = m.Chat(4<<10, seed)
	}
	b.Run("4k-chat", stamped(chat))
}

// historyWith returns the opening body of the first Resent conversation of
// 256 KiB that the firewall flags (flagged), or passes as safe.
func historyWith(b *testing.B, m *chatbody.Material, flagged bool) []byte {
	var verdict string
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		verdict = r.Header.Get(HeaderVerdict)
		_, err := io.Copy(io.Discard, r.Body)
		return err
	})
	for seed := uint64(0); seed < uint64(len(m.Messages)); seed += 37 {
		body := m.Resent(256<<10, 300<<10, seed).Next(nil)
		req := withVars(httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body)))
		if err := newFixture(b, &Firewall{}).fw.ServeHTTP(httptest.NewRecorder(), req, next); err != nil {
			b.Fatal(err)
		}
		if (verdict != string(engine.Safe)) == flagged {
			return body
		}
	}
	b.Fatalf("no conversation with flagged=%v", flagged)
	return nil
}

// BenchmarkPrefixes measures the prefix hashes of a 256 KiB real
// conversation (resume.go), and the same chained with maphash of each
// pair instead of chain.
// go test -run '^$' -bench Prefixes ./caddymodule/firewall/
func BenchmarkPrefixes(b *testing.B) {
	m, err := chatbody.LoadMaterial(chatbody.Corpora())
	if err != nil {
		b.Fatal(err)
	}
	body := m.Resent(256<<10, 300<<10, 0).Next(nil)
	tab := newResumeTable(1024)
	sums := make([]uint64, 0, len(body)/resumeBlock)
	b.Run("chain", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			sums = tab.prefixes(sums, 1, "/v1/chat/completions", body)
		}
	})
	// A body seen first, in a table full of other bodies' entries: each
	// block's two slots are probed.
	b.Run("find-unseen", func(b *testing.B) {
		sums = tab.prefixes(sums, 1, "/v1/chat/completions", body)
		for i := range tab.slots {
			key := uint64(i) | (uint64(i)*0x9e3779b97f4a7c15)&^tab.mask
			tab.slots[i] = resumeSlot{}
			tab.keys[i].Store(key)
		}
		for b.Loop() {
			if tab.find(sums, body) != nil {
				b.Fatal("found")
			}
		}
	})
	b.Run("maphash-pair", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			sums = sums[:0]
			h := hashString(tab.seed, "/v1/chat/completions") ^ 1
			for off := resumeBlock; off <= len(body); off += resumeBlock {
				h = maphash.Comparable(tab.seed, [2]uint64{h, hashBytes(tab.seed, body[off-resumeBlock:off])})
				sums = append(sums, h)
			}
		}
	})
}
