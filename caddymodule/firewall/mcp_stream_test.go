package firewall

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// The server's answers, each with malicious text in one place a model reads.
var mcpPlaces = []struct{ name, answer string }{
	{"tool description", rpcResult(1, `{"tools":[{"name":"t","description":`+js(malText)+`,"inputSchema":{"type":"object"}}]}`)},
	{"inputSchema key", rpcResult(1, `{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{`+js(malText)+`:{"type":"string"}}}}]}`)},
	{"tool result text", rpcResult(1, `{"content":[{"type":"text","text":`+js(malText)+`}]}`)},
	{"structuredContent", rpcResult(1, `{"content":[],"structuredContent":{"report":{"note":`+js(malText)+`}}}`)},
	{"embedded resource", rpcResult(1, `{"content":[{"type":"resource","resource":{"uri":"file:///a","text":`+js(malText)+`}}]}`)},
	{"resources/read", rpcResult(1, `{"contents":[{"uri":"file:///a","mimeType":"text/plain","text":`+js(malText)+`}]}`)},
	{"prompts/get", rpcResult(1, `{"messages":[{"role":"user","content":{"type":"text","text":`+js(malText)+`}}]}`)},
	{"resource blob", rpcResult(1, `{"contents":[{"uri":"file:///a","mimeType":"text/plain","blob":"`+base64.StdEncoding.EncodeToString([]byte(malText))+`"}]}`)},
	{"resource link", rpcResult(1, `{"content":[{"type":"resource_link","uri":"file:///a","name":"a","description":`+js(malText)+`}]}`)},
	{"error message", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":` + js(malText) + `}}`},
}

func TestMCPServerAnswerBlocked(t *testing.T) {
	fx := mcpFixture(t, &Firewall{})
	for _, p := range mcpPlaces {
		for _, ctype := range []string{"application/json", "text/event-stream"} {
			t.Run(p.name+" "+ctype, func(t *testing.T) {
				fx.logs.Reset()
				chunk := p.answer
				if ctype == "text/event-stream" {
					chunk = sse(p.answer)
				}
				rec := mcpDo(t, fx, http.MethodPost, toolsCall, &mcpServer{ctype: ctype, chunks: []string{chunk}})
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				body := rec.Body.String()
				if ctype == "text/event-stream" {
					if !strings.Contains(body, "id: ev1\n") {
						t.Errorf("the event lost its id: %q", body)
					}
					d := sseData(body)
					if len(d) != 1 {
						t.Fatalf("events %q", body)
					}
					body = d[0]
				} else if rec.Header().Get("Content-Length") != strconv.Itoa(len(body)) {
					t.Errorf("Content-Length %q for %d bytes", rec.Header().Get("Content-Length"), len(body))
				}
				e := decodeErr(t, body)
				if string(e.ID) != "1" || e.Error.Code != mcpErrBlocked || e.Error.Data.Code != CodeMCPBlocked || len(e.Error.Data.Rules) == 0 {
					t.Errorf("answer %s", body)
				}
				logs := fx.logs.String()
				if !strings.Contains(logs, `"phase":"response"`) || !strings.Contains(logs, `"api":"mcp"`) || !strings.Contains(logs, `"method":"tools/call"`) {
					t.Errorf("log %s", logs)
				}
				if strings.Contains(logs, "previous") || strings.Contains(body, "previous") {
					t.Errorf("the text leaked: %s %s", logs, body)
				}
			})
		}
	}
}

func TestMCPServerAnswerSanitized(t *testing.T) {
	fx := mcpFixture(t, &Firewall{})
	answer := rpcResult(1, `{"content":[{"type":"text","text":`+js(suspText)+`}],"n":1.50}`)
	want := rpcResult(1, `{"content":[{"type":"text","text":`+js(suspSan)+`}],"n":1.50}`)
	rec := mcpDo(t, fx, http.MethodPost, toolsCall, &mcpServer{ctype: "application/json", chunks: []string{answer}})
	if rec.Body.String() != want {
		t.Errorf("JSON: got %s\nwant %s", rec.Body, want)
	}
	rec = mcpDo(t, fx, http.MethodPost, toolsCall, &mcpServer{ctype: "text/event-stream", chunks: []string{sse(answer)}})
	if rec.Body.String() != sse(want) {
		t.Errorf("SSE: got %q\nwant %q", rec.Body, sse(want))
	}
	// In a key, a sanitize blocks: a rewritten key changes what a schema means.
	answer = rpcResult(1, `{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{`+js(suspText)+`:{"type":"string"}}}}]}`)
	rec = mcpDo(t, fx, http.MethodPost, toolsCall, &mcpServer{ctype: "application/json", chunks: []string{answer}})
	if e := decodeErr(t, rec.Body.String()); e.Error.Code != mcpErrBlocked {
		t.Errorf("key: %s", rec.Body)
	}
}

// The server's own requests and notifications on a stream: a blocked
// request is not delivered and is answered to the server; a notification
// is dropped; the stream goes on.
func TestMCPServerRequests(t *testing.T) {
	fx := mcpFixture(t, &Firewall{})
	sampling := `{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":` + js(malText) + `}}],"systemPrompt":"x","maxTokens":10}}`
	elicit := `{"jsonrpc":"2.0","id":"s2","method":"elicitation/create","params":{"message":"Fill in.","requestedSchema":{"type":"object","properties":{` + js(malText) + `:{"type":"string"}}}}}`
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":` + js(malText) + `}}`
	clean := rpcResult(1, `{"content":[{"type":"text","text":"done"}]}`)
	srv := &mcpServer{ctype: "text/event-stream", chunks: []string{sse(sampling), sse(elicit), sse(note), sse(clean)}}
	rec := mcpDo(t, fx, http.MethodPost, toolsCall, srv, "Mcp-Session-Id", "sess-1", "Mcp-Protocol-Version", "2025-06-18")
	d := sseData(rec.Body.String())
	if len(d) != 1 || d[0] != clean {
		t.Fatalf("delivered %q", rec.Body)
	}
	if strings.Count(rec.Body.String(), "id: ev1\n") != 4 {
		t.Errorf("the events' ids: %q", rec.Body)
	}
	if len(srv.got) != 3 {
		t.Fatalf("the server got %q", srv.got)
	}
	for i, id := range []string{`"s1"`, `"s2"`} {
		if e := decodeErr(t, srv.got[i+1]); string(e.ID) != id || e.Error.Code != mcpErrBlocked {
			t.Errorf("answer to the server: %s", srv.got[i+1])
		}
	}
	if srv.header.Get("Mcp-Session-Id") != "sess-1" || srv.header.Get("Mcp-Protocol-Version") != "2025-06-18" {
		t.Errorf("the answer's headers: %v", srv.header)
	}
	if !strings.Contains(fx.logs.String(), `"method":"sampling/createMessage"`) || strings.Contains(fx.logs.String(), "previous") {
		t.Errorf("log %s", fx.logs)
	}
}

// The GET stream is scanned too.
func TestMCPGetStream(t *testing.T) {
	fx := mcpFixture(t, &Firewall{})
	note := `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":` + js(malText) + `}}`
	ok := `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	srv := &mcpServer{ctype: "text/event-stream", chunks: []string{sse(ok), sse(note), sse(ok)}}
	rec := mcpDo(t, fx, http.MethodGet, "", srv)
	if d := sseData(rec.Body.String()); len(d) != 2 || d[0] != ok || d[1] != ok {
		t.Errorf("got %q", rec.Body)
	}
}

func TestMCPFailClosed(t *testing.T) {
	fx := mcpFixture(t, &Firewall{MaxBody: 4096})
	for _, tc := range []struct {
		name, ctype string
		chunks      []string
		streamed    bool
	}{
		{"not JSON", "application/json", []string{"hello"}, false},
		{"not JSON-RPC", "application/json", []string{`{"result":1}`}, false},
		{"other type", "text/plain", []string{"hello"}, false},
		{"bad event", "text/event-stream", []string{sse(`{"jsonrpc":"2.0"`), sse(rpcResult(1, "{}"))}, true},
		{"bad event later", "text/event-stream", []string{sse(`{"jsonrpc":"2.0","method":"notifications/progress"}`), sse("nope"), sse(rpcResult(1, "{}"))}, true},
		{"event too large", "text/event-stream", []string{"data: " + strings.Repeat("x", 5000), sse(rpcResult(1, "{}"))}, true},
		{"invalid UTF-8", "application/json", []string{"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xff\"}"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &mcpServer{ctype: tc.ctype, chunks: tc.chunks}
			rec := mcpDo(t, fx, http.MethodPost, toolsCall, srv)
			body := rec.Body.String()
			if tc.streamed {
				if srv.writeErr == nil {
					t.Error("the refused stream did not end")
				}
				d := sseData(body)
				if rec.Code != http.StatusOK || len(d) == 0 || strings.Contains(body, `"result"`) {
					t.Fatalf("%d %q", rec.Code, body)
				}
				body = d[len(d)-1]
			} else if rec.Code != http.StatusBadGateway {
				t.Fatalf("status %d %q", rec.Code, body)
			}
			if e := decodeErr(t, body); string(e.ID) != "1" || e.Error.Code != mcpErrNotScanned || e.Error.Data.Code != CodeMCPNotScanned {
				t.Errorf("answer %s", body)
			}
		})
	}
	// A compressed answer is decoded and scanned.
	var gz strings.Builder
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(rpcResult(1, `{"content":[{"type":"text","text":`+js(malText)+`}]}`)))
	zw.Close()
	srv := &mcpServer{ctype: "application/json", chunks: []string{gz.String()}}
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		if r.Header.Get("Accept-Encoding") != "identity" {
			t.Errorf("Accept-Encoding %q", r.Header.Get("Accept-Encoding"))
		}
		w.Header().Set("Content-Encoding", "gzip")
		return srv.ServeHTTP(w, r)
	})
	req := withVars(httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(toolsCall)))
	rec := httptest.NewRecorder()
	if err := fx.fw.ServeHTTP(rec, req, next); err != nil {
		t.Fatal(err)
	}
	if e := decodeErr(t, rec.Body.String()); e.Error.Code != mcpErrBlocked || rec.Header().Get("Content-Encoding") != "" {
		t.Errorf("gzip: %s", rec.Body)
	}
}

// Image data is not read as text: a real image passes unscanned and
// unchanged; text declared as an image is scanned.
func TestMCPMedia(t *testing.T) {
	fx := mcpFixture(t, &Firewall{})
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0, 1, 2, 0xff, 0x80, 0x7f}, 1<<16)...)
	img := rpcResult(1, `{"content":[{"type":"image","mimeType":"image/png","data":"`+base64.StdEncoding.EncodeToString(png)+`"}]}`)
	rec := mcpDo(t, fx, http.MethodPost, toolsCall, &mcpServer{ctype: "application/json", chunks: []string{img}})
	if rec.Body.String() != img || fx.logs.Len() != 0 {
		t.Errorf("image: %.200s %s", rec.Body, fx.logs)
	}
	fake := rpcResult(1, `{"content":[{"type":"image","mimeType":"image/png","data":"`+base64.StdEncoding.EncodeToString([]byte(malText+" "+malText))+`"}]}`)
	rec = mcpDo(t, fx, http.MethodPost, toolsCall, &mcpServer{ctype: "application/json", chunks: []string{fake}})
	if e := decodeErr(t, rec.Body.String()); e.Error.Code != mcpErrBlocked {
		t.Errorf("text as an image: %s", rec.Body)
	}
}

// A server's batch answer is blocked whole: an error for each id.
func TestMCPServerBatch(t *testing.T) {
	fx := mcpFixture(t, &Firewall{})
	req := `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"prompts/list"}]`
	answer := `[` + rpcResult(1, `{"tools":[]}`) + `,` + rpcResult(2, `{"prompts":[{"name":"p","description":`+js(malText)+`}]}`) + `]`
	rec := mcpDo(t, fx, http.MethodPost, req, &mcpServer{ctype: "application/json", chunks: []string{answer}})
	var errs []rpcErr
	if err := json.Unmarshal(rec.Body.Bytes(), &errs); err != nil || len(errs) != 2 || string(errs[0].ID) != "1" || errs[1].Error.Code != mcpErrBlocked {
		t.Errorf("%s %v", rec.Body, err)
	}
	if !strings.Contains(fx.logs.String(), `"method":"tools/list,prompts/list"`) {
		t.Errorf("log %s", fx.logs)
	}
}

// An event stream's headers go at once: a GET stream may wait long for its
// first event, and the client's fetch waits for the headers.
func TestMCPStreamHeadersAtOnce(t *testing.T) {
	fx := mcpFixture(t, &Firewall{})
	rec := httptest.NewRecorder()
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if !rec.Flushed || rec.Code != http.StatusOK {
			t.Errorf("headers held: flushed %v, code %d", rec.Flushed, rec.Code)
		}
		_, err := w.Write([]byte(sse(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)))
		return err
	})
	req := withVars(httptest.NewRequest(http.MethodGet, "/mcp", nil))
	if err := fx.fw.ServeHTTP(rec, req, next); err != nil {
		t.Fatal(err)
	}
	if len(sseData(rec.Body.String())) != 1 {
		t.Errorf("body %q", rec.Body)
	}
}
