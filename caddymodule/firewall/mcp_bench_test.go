package firewall

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// BenchmarkMCPAnswer is the cost of the guard on a server's answers: a
// tools/list of 50 tools with schemas, and a tool result with a 1 MiB
// image (not scanned: its bytes are media).
func BenchmarkMCPAnswer(b *testing.B) {
	var tools []string
	for i := range 50 {
		tools = append(tools, fmt.Sprintf(`{"name":"tool_%d","description":"Looks up the weather for a city and returns it in metric units, with a short forecast.","inputSchema":{"type":"object","properties":{"city":{"type":"string","description":"The city name"},"days":{"type":"integer","minimum":1}},"required":["city"]}}`, i))
	}
	img := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0, 1, 2, 0xff, 0x80, 0x7f}, 1<<20/6)...)
	for _, bc := range []struct{ name, answer string }{
		{"tools_list_50", rpcResult(1, `{"tools":[`+strings.Join(tools, ",")+`]}`)},
		{"image_1MiB", rpcResult(1, `{"content":[{"type":"image","mimeType":"image/png","data":"`+base64.StdEncoding.EncodeToString(img)+`"}]}`)},
	} {
		for _, ctype := range []string{"application/json", "text/event-stream"} {
			b.Run(bc.name+"/"+ctype[strings.IndexByte(ctype, '/')+1:], func(b *testing.B) {
				fx := mcpFixture(b, &Firewall{})
				chunk := []byte(bc.answer)
				if ctype == "text/event-stream" {
					chunk = []byte(sse(bc.answer))
				}
				next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
					w.Header().Set("Content-Type", ctype)
					_, err := w.Write(chunk)
					return err
				})
				b.SetBytes(int64(len(chunk)))
				b.ReportAllocs()
				for b.Loop() {
					req := withVars(httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(toolsCall)))
					rec := httptest.NewRecorder()
					if err := fx.fw.ServeHTTP(rec, req, next); err != nil || rec.Body.Len() != len(chunk) {
						b.Fatalf("%v %d", err, rec.Body.Len())
					}
				}
			})
		}
	}
}
