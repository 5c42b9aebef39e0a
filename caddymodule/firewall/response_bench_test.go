package firewall

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/promptwall/promptwall/bench/chatbody"
)

// BenchmarkResponseStream measures the CPU response scanning adds per streamed KiB: an
// OpenAI Chat SSE stream of the chat corpus's assistant messages in token-sized deltas (4
// bytes, on rune boundaries), through the firewall with response actions off (unwrapped:
// the baseline) and on (block and sanitize: every event held until final):
// go test -run XXX -bench ResponseStream ./caddymodule/firewall/
// The difference of the ns/KiB metrics is the added cost.
func BenchmarkResponseStream(b *testing.B) {
	deltas := corpusDeltas(b)
	evs := respAPIs[0].events(deltas)
	size := 0
	for _, e := range evs {
		size += len(e)
	}
	for _, mode := range []struct{ name, mal, susp string }{{"off", "", ""}, {"log", ActionLog, ActionLog}, {"block-sanitize", ActionBlock, ActionSanitize}} {
		b.Run(mode.name, func(b *testing.B) {
			fx := respFixture(b, mode.mal, mode.susp)
			next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(200)
				for _, e := range evs {
					w.Write([]byte(e))
				}
				return nil
			})
			benchRespStream(b, fx, next, size)
		})
	}
}

// corpusDeltas returns the chat corpus's assistant messages (64 KiB of them) in
// token-sized deltas: 4 bytes, on rune boundaries.
func corpusDeltas(tb testing.TB) []string {
	bodies, err := chatbody.ReadCorpus(filepath.Join(chatbody.Corpora(), "chat_bodies_benign.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	var text strings.Builder
	for _, body := range bodies {
		var v struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(body, &v) != nil {
			continue
		}
		for _, m := range v.Messages {
			if s, ok := m.Content.(string); ok && m.Role == "assistant" {
				text.WriteString(s)
				text.WriteString("\n\n")
			}
		}
		if text.Len() > 64<<10 {
			break
		}
	}
	var deltas []string
	for s := text.String(); s != ""; {
		n := min(4, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		deltas = append(deltas, s[:n])
		s = s[n:]
	}
	return deltas
}

// BenchmarkResponseCompressedStream measures the same stream compressed by the upstream
// anyway, each event flushed into its own chunk, decoded as it comes (ns/KiB of the decoded
// stream; compare with BenchmarkResponseStream/block-sanitize):
// go test -run XXX -bench ResponseCompressedStream ./caddymodule/firewall/
func BenchmarkResponseCompressedStream(b *testing.B) {
	evs := respAPIs[0].events(corpusDeltas(b))
	size := 0
	for _, e := range evs {
		size += len(e)
	}
	for _, coding := range []string{"gzip", "zstd", "br"} {
		b.Run(coding, func(b *testing.B) {
			fx := respFixture(b, ActionBlock, ActionSanitize)
			chunks, name := compressedChunks(b, coding, evs)
			next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("Content-Encoding", name)
				w.WriteHeader(200)
				for _, c := range chunks {
					w.Write([]byte(c))
				}
				return nil
			})
			benchRespStream(b, fx, next, size)
		})
	}
}

// benchRespStream serves a chat request b.N times through fx's firewall, next
// streaming the answer of size bytes of text, and reports ns per KiB of it.
func benchRespStream(b *testing.B, fx *fixture, next caddyhttp.Handler, size int) {
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := withVars(post("/v1/chat/completions", chat(msg("user", "hi"))))
		rec := httptest.NewRecorder()
		if err := fx.fw.ServeHTTP(rec, r, next); err != nil {
			b.Fatal(err)
		}
		if rec.Code != 200 || rec.Body.Len() < size*9/10 {
			b.Fatalf("status %d, body %d bytes of %d", rec.Code, rec.Body.Len(), size)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(float64(size)/1024), "ns/KiB")
}
