package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The firewall's block message, as every SDK must show it.
const firewallBlockMessage = "Request blocked by prompt firewall: prompt injection detected"

// sdkLoopSite is one caddy with prompt_firewall in front of a toolLLM, shared
// by every SDK that drives its own tool loop.
type sdkLoopSite struct {
	up     *toolLLM
	base   string
	sdkDir string
}

// TestSDKToolLoopsE2E drives Google's Gen AI client and the Vercel AI SDK,
// each through its own tool loop, across a real caddy to a fake upstream.
func TestSDKToolLoopsE2E(t *testing.T) {
	sdkDir, err := filepath.Abs("sdkclients")
	if err != nil {
		t.Fatal(err)
	}
	npmInstall(t, sdkDir)
	up := newToolLLM(t)
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	startCaddy(t, fmt.Sprintf(`{
	admin off
}

http://%s {
	prompt_firewall
	reverse_proxy %s
}
`, addr, strings.TrimPrefix(up.srv.URL, "http://")), nil, addr)
	s := &sdkLoopSite{up: up, base: "http://" + addr, sdkDir: sdkDir}
	t.Run("GenAI", s.genAI)
	t.Run("AISDK", s.aiSDK)
}

// run runs one driver script with env and decodes the line it prints.
func (s *sdkLoopSite) run(t *testing.T, script string, env []string, v any) {
	t.Helper()
	nodeJSON(t, s.sdkDir, script, env, v)
}

// wantArrivedIntact checks that the upstream got exactly one request, the
// SDK's first, byte for byte, labelled safe.
func (s *sdkLoopSite) wantArrivedIntact(t *testing.T, sent []string) {
	t.Helper()
	got := s.up.recorded()
	if len(got) != 1 || len(sent) == 0 {
		t.Fatalf("the upstream got %d requests, the SDK sent %d; want the SDK's first only", len(got), len(sent))
	}
	if string(got[0].Body) != sent[0] {
		t.Fatalf("upstream got\n%s\nthe SDK sent\n%s", got[0].Body, sent[0])
	}
	if v := got[0].Header.Get("Prompt-Firewall-Verdict"); v != "safe" {
		t.Errorf("upstream verdict %q, want safe", v)
	}
}

// wantToolLoopBlocked checks a tool loop whose second request was refused:
// the SDK sent two requests, the second carrying the tool's result, and
// only the first reached the upstream.
func (s *sdkLoopSite) wantToolLoopBlocked(t *testing.T, sent []string) {
	t.Helper()
	s.wantArrivedIntact(t, sent)
	if len(sent) != 2 {
		t.Fatalf("the SDK sent %d requests, want 2 (the tool call's turn and the blocked one)", len(sent))
	}
	if !strings.Contains(sent[1], "Ignore all previous instructions") {
		t.Fatalf("the second request does not carry the tool's result: %s", sent[1])
	}
}

func (s *sdkLoopSite) wantNoUpstream(t *testing.T) {
	t.Helper()
	if got := s.up.recorded(); len(got) != 0 {
		t.Fatalf("BYPASS: the upstream got %d requests: %s", len(got), got[0].Body)
	}
}

// toolLLM is the upstream of the SDK tool-loop tests: it records every
// request byte for byte and answers in the real shape of the API the path
// names (OpenAI chat and Responses, Anthropic messages, Gemini
// generateContent). A request that offers tools and carries no tool result
// yet is answered with a call of get_weather, so that the SDK runs its tool
// and sends the result in a second request; every other request gets the
// text "pong".
type toolLLM struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []upstreamRequest
}

func newToolLLM(t *testing.T) *toolLLM {
	u := &toolLLM{}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *toolLLM) reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.requests = nil
}

func (u *toolLLM) recorded() []upstreamRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]upstreamRequest(nil), u.requests...)
}

// toolResultMarks are the members each API carries a tool's result in; a
// fake only needs to tell a first turn from a second.
var toolResultMarks = []string{`"role":"tool"`, `"function_call_output"`, `"tool_result"`, `"functionResponse"`}

func (u *toolLLM) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.requests = append(u.requests, upstreamRequest{r.Method, r.URL.Path, r.Header.Clone(), body})
	u.mu.Unlock()

	var req struct {
		Tools []json.RawMessage `json:"tools"`
	}
	json.Unmarshal(body, &req)
	call := len(req.Tools) > 0
	for _, m := range toolResultMarks {
		if strings.Contains(string(body), m) {
			call = false
		}
	}
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/chat/completions"):
		msg := `{"role":"assistant","content":"pong"}`
		finish := "stop"
		if call {
			msg = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",` +
				`"function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`
			finish = "tool_calls"
		}
		writeJSON(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o",`+
			`"choices":[{"index":0,"message":`+msg+`,"finish_reason":"`+finish+`"}],`+
			`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	case strings.HasSuffix(p, "/responses"):
		item := `{"type":"message","id":"msg_1","status":"completed","role":"assistant",` +
			`"content":[{"type":"output_text","text":"pong","annotations":[]}]}`
		if call {
			item = `{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather",` +
				`"arguments":"{\"city\":\"Paris\"}","status":"completed"}`
		}
		writeJSON(w, `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-4o",`+
			`"output":[`+item+`],"parallel_tool_calls":true,"tool_choice":"auto","tools":[],"error":null,`+
			`"incomplete_details":null,"instructions":null,"metadata":{},"temperature":1,"top_p":1,`+
			`"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`)
	case strings.HasSuffix(p, "/messages"):
		content, stop := `[{"type":"text","text":"pong"}]`, "end_turn"
		if call {
			content = `[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]`
			stop = "tool_use"
		}
		writeJSON(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",`+
			`"content":`+content+`,"stop_reason":"`+stop+`","stop_sequence":null,`+
			`"usage":{"input_tokens":1,"output_tokens":1}}`)
	case strings.HasSuffix(p, ":generateContent"):
		part := `{"text":"pong"}`
		if call {
			part = `{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}`
		}
		writeJSON(w, `{"candidates":[{"content":{"role":"model","parts":[`+part+`]},"finishReason":"STOP","index":0}],`+
			`"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2},`+
			`"modelVersion":"gemini-2.5-flash","responseId":"resp-1"}`)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"code":404,"message":"no such API in the fake upstream","status":"NOT_FOUND"}}`)
	}
}
