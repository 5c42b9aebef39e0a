package integration

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// ollamaResult is what integration/sdkclients/ollama.mjs prints.
type ollamaResult struct {
	Sent   []string `json:"sent"`
	Result *struct {
		Content *string `json:"content"`
	} `json:"result"`
	Error *struct {
		Class   string `json:"class"`
		Status  *int   `json:"status"`
		Message string `json:"message"`
	} `json:"error"`
}

// ollamaClient drives the official `ollama` JavaScript client through the
// plain site: a blocked request must surface as a readable message (the
// client shows Ollama's {"error": "<message>"} string and nothing else),
// and a benign one must arrive as the client sent it.
func (rt *redTeam) ollamaClient(t *testing.T) {
	dir, err := filepath.Abs("sdkclients")
	if err != nil {
		t.Fatal(err)
	}
	npmInstall(t, dir)
	call := func(t *testing.T, call string, params any) ollamaResult {
		t.Helper()
		env := []string{"CALL=" + call, "BASE_URL=" + rt.sites[""], "PARAMS=" + string(rtJSON(params))}
		out, err := node(t, dir, env, "ollama.mjs")
		if err != nil {
			t.Fatal(err)
		}
		var r ollamaResult
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("ollama.mjs printed %q: %v", out, err)
		}
		return r
	}
	toolLoop := []any{rtUser("What's the weather in Paris?"),
		obj{"role": "assistant", "content": "", "tool_calls": []any{obj{"function": obj{"name": "get_weather", "arguments": obj{"city": "Paris"}}}}},
		obj{"role": "tool", "tool_name": "get_weather", "content": "Sunny, 21C. " + rtPayload}}

	for _, tc := range []struct {
		name, call string
		params     any
	}{
		{"chat_blocked", "chat", obj{"model": "llama3", "messages": []any{rtUser(rtPayload)}}},
		{"tool_result_blocked", "chat", obj{"model": "llama3", "messages": toolLoop}},
		{"generate_blocked", "generate", obj{"model": "llama3", "prompt": rtPayload}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt.up.reset()
			r := call(t, tc.call, tc.params)
			if n := len(rt.up.recorded()); n != 0 {
				t.Fatalf("BYPASS: the upstream got %d requests", n)
			}
			if r.Error == nil {
				t.Fatalf("the call succeeded: %+v", r.Result)
			}
			if r.Error.Status == nil || *r.Error.Status != 400 {
				t.Errorf("status %v, want 400", r.Error.Status)
			}
			if !strings.Contains(r.Error.Message, "prompt injection detected") || strings.Contains(r.Error.Message, "[object Object]") {
				t.Errorf("the client shows %q, want the firewall's message", r.Error.Message)
			}
		})
	}

	t.Run("chat_benign_arrives_intact", func(t *testing.T) {
		rt.up.reset()
		r := call(t, "chat", obj{"model": "llama3", "messages": []any{rtUser("What is the capital of France?")}})
		if r.Error != nil || r.Result == nil || r.Result.Content == nil || *r.Result.Content != "pong" {
			t.Fatalf("call failed: %+v", r.Error)
		}
		got := rt.up.recorded()
		if len(got) != 1 || len(r.Sent) != 1 || string(got[0].Body) != r.Sent[0] {
			t.Fatalf("upstream got %d requests; want the client's bytes %v", len(got), r.Sent)
		}
	})
}
