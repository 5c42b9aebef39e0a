package firewall

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// benchBody is an OpenAI chat body of about n bytes of benign text: for 4
// KiB a multi-turn chat of ten messages (the shape bench/fwload sends), for
// more one long user message.
func benchBody(n int) []byte {
	const prose = "The quarterly report shows that revenue grew in every region, with the strongest gains " +
		"coming from subscription renewals and new enterprise contracts. Please summarise the main points " +
		"for a non-technical audience and suggest three follow-up questions we could ask the finance team. "
	text := func(n, from int) string {
		return strings.Repeat(prose, (from+n)/len(prose)+1)[from : from+n]
	}
	msgs := []any{map[string]any{"role": "system", "content": "You are terse."}}
	if n <= 8<<10 {
		msgs[0] = map[string]any{"role": "system", "content": text(300, 0)}
		for i := 0; i < 4; i++ {
			msgs = append(msgs, map[string]any{"role": "user", "content": text(560, 10+i*37)},
				map[string]any{"role": "assistant", "content": text(260, 5+i*23)})
		}
		msgs = append(msgs, map[string]any{"role": "user", "content": text(200, 99)})
	} else {
		msgs = append(msgs, map[string]any{"role": "user", "content": text(n, 0)})
	}
	b, _ := json.Marshal(map[string]any{"model": "gpt-4o", "messages": msgs, "temperature": 0.2})
	return b
}

// BenchmarkServeHTTP measures the firewall alone per request (read, parse,
// scan, forward to a next handler that drains the body):
// go test -bench ServeHTTP -benchmem ./caddymodule/firewall/
func BenchmarkServeHTTP(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"4KiB", 4 << 10}, {"256KiB", 256 << 10}} {
		b.Run(size.name, func(b *testing.B) {
			fx := newFixture(b, &Firewall{})
			body := benchBody(size.n)
			next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
				// As an HTTP transport does: read the body, then close it.
				_, err := io.Copy(io.Discard, r.Body)
				r.Body.Close()
				return err
			})
			b.SetBytes(int64(len(body)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
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
