package firewall

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/promptwall/promptwall/bench/chatbody"
)

// BenchmarkServeHTTP measures the firewall alone per request (read, parse,
// scan, forward to a next handler that drains the body), on the load
// test's bodies:
// go test -bench ServeHTTP -benchmem ./caddymodule/firewall/
//
// With PROMPTWALL_CORPORA (the folder of the published corpora) it also
// times the load test's 256k-doc body: real messages, which the rules'
// candidates and matches make far dearer than the prose (and sanitize).
func BenchmarkServeHTTP(b *testing.B) {
	sizes := []struct {
		name string
		body []byte
	}{{"4KiB", chatbody.Chat4K()}, {"256KiB", chatbody.LongContext256K()}}
	if dir := os.Getenv("PROMPTWALL_CORPORA"); dir != "" {
		doc, err := chatbody.LongDocument256K(dir)
		if err != nil {
			b.Fatal(err)
		}
		sizes = append(sizes, struct {
			name string
			body []byte
		}{"256KiB-doc", doc})
	}
	for _, size := range sizes {
		b.Run(size.name, func(b *testing.B) {
			fx := newFixture(b, &Firewall{})
			body := size.body
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
