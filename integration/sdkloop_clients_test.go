package integration

import (
	"strings"
	"testing"
)

// genAIResult is what integration/sdkclients/genai.mjs prints.
type genAIResult struct {
	Sent   []string `json:"sent"`
	Result *struct {
		Text       *string `json:"text"`
		AFCHistory int     `json:"afcHistory"`
	} `json:"result"`
	Error *struct {
		Class      string `json:"class"`
		IsAPIError bool   `json:"isApiError"`
		Status     *int   `json:"status"`
		Message    string `json:"message"`
	} `json:"error"`
}

// genAI drives Google's official Gen AI client (@google/genai) against the
// Gemini API's generateContent, its automatic function calling included.
func (s *sdkLoopSite) genAI(t *testing.T) {
	call := func(t *testing.T, params any, toolResult string) genAIResult {
		t.Helper()
		env := []string{"BASE_URL=" + s.base, "PARAMS=" + string(mustJSON(t, params))}
		if toolResult != "" {
			env = append(env, "TOOL_RESULT="+toolResult)
		}
		var r genAIResult
		s.run(t, "genai.mjs", env, &r)
		return r
	}
	// wantBlocked checks the SDK's ApiError: status 400, the firewall's
	// message inside the Gemini error JSON it shows.
	wantBlocked := func(t *testing.T, r genAIResult) {
		t.Helper()
		if r.Error == nil {
			t.Fatalf("the call succeeded: %+v", r.Result)
		}
		if !r.Error.IsAPIError || r.Error.Status == nil || *r.Error.Status != 400 {
			t.Errorf("error %+v, want ApiError with status 400", *r.Error)
		}
		if !strings.Contains(r.Error.Message, firewallBlockMessage) || !strings.Contains(r.Error.Message, `"status":"INVALID_ARGUMENT"`) {
			t.Errorf("the SDK shows %q, want the firewall's message in Gemini's error", r.Error.Message)
		}
	}
	params := func(text string) obj {
		return obj{"model": "gemini-2.5-flash",
			"contents": []any{obj{"role": "user", "parts": []any{obj{"text": text}}}},
			"config":   obj{"systemInstruction": "Answer briefly.", "temperature": 0.2}}
	}

	t.Run("benign_arrives_intact", func(t *testing.T) {
		s.up.reset()
		r := call(t, params("What is the capital of France?"), "")
		if r.Error != nil || r.Result == nil || r.Result.Text == nil || *r.Result.Text != "pong" {
			t.Fatalf("call failed: %+v", r.Error)
		}
		s.wantArrivedIntact(t, r.Sent)
		if p := s.up.recorded()[0].Path; p != "/v1beta/models/gemini-2.5-flash:generateContent" {
			t.Errorf("upstream path %s", p)
		}
	})

	t.Run("user_text_blocked", func(t *testing.T) {
		s.up.reset()
		r := call(t, params(e2eMalicious), "")
		wantBlocked(t, r)
		if len(r.Sent) != 1 {
			t.Errorf("the SDK sent %d requests, want 1", len(r.Sent))
		}
		s.wantNoUpstream(t)
	})

	// The SDK calls the tool itself and sends its functionResponse back.
	t.Run("afc_function_response_blocked", func(t *testing.T) {
		s.up.reset()
		r := call(t, params("What's the weather in Paris?"), e2eToolResult)
		wantBlocked(t, r)
		s.wantToolLoopBlocked(t, r.Sent)
		if !strings.Contains(r.Sent[1], `"functionResponse"`) {
			t.Errorf("the second request has no functionResponse: %s", r.Sent[1])
		}
	})

	// The same loop with a harmless result completes: the block above is
	// the tool result's, not the loop's.
	t.Run("afc_benign_completes", func(t *testing.T) {
		s.up.reset()
		r := call(t, params("What's the weather in Paris?"), "Sunny, 21C.")
		if r.Error != nil || r.Result == nil || r.Result.Text == nil || *r.Result.Text != "pong" {
			t.Fatalf("call failed: %+v", r.Error)
		}
		got := s.up.recorded()
		if len(got) != 2 || len(r.Sent) != 2 || string(got[1].Body) != r.Sent[1] || got[1].Header.Get("Prompt-Firewall-Verdict") != "safe" {
			t.Fatalf("upstream got %d requests, the SDK sent %d; want both, intact and safe", len(got), len(r.Sent))
		}
	})
}

// aiSDKResult is what integration/sdkclients/aisdk.mjs prints.
type aiSDKResult struct {
	Sent   []string `json:"sent"`
	Result *struct {
		Text  string `json:"text"`
		Steps int    `json:"steps"`
	} `json:"result"`
	Error *struct {
		Class          string `json:"class"`
		IsAPICallError bool   `json:"isAPICallError"`
		Status         *int   `json:"status"`
		IsRetryable    *bool  `json:"isRetryable"`
		Message        string `json:"message"`
	} `json:"error"`
}

// aiSDK drives the Vercel AI SDK's generateText through each official
// provider: a benign call, a malicious prompt, and a tool whose execute
// returns a malicious result within a two-step loop.
func (s *sdkLoopSite) aiSDK(t *testing.T) {
	for _, p := range []struct{ provider, model, path string }{
		{"openai-chat", "gpt-4o", "/v1/chat/completions"},
		{"openai-responses", "gpt-4o", "/v1/responses"},
		{"anthropic", "claude-sonnet-4-5", "/v1/messages"},
		{"google", "gemini-2.5-flash", "/v1beta/models/gemini-2.5-flash:generateContent"},
	} {
		call := func(t *testing.T, prompt, toolResult, toolShape string) aiSDKResult {
			t.Helper()
			env := []string{"PROVIDER=" + p.provider, "BASE_URL=" + s.base, "MODEL=" + p.model, "PROMPT=" + prompt}
			if toolResult != "" {
				env = append(env, "TOOL_RESULT="+toolResult, "TOOL_SHAPE="+toolShape)
			}
			var r aiSDKResult
			s.run(t, "aisdk.mjs", env, &r)
			return r
		}
		// wantBlocked checks the SDK's APICallError: status 400, not to be
		// retried, with the firewall's message.
		wantBlocked := func(t *testing.T, r aiSDKResult) {
			t.Helper()
			if r.Error == nil {
				t.Fatalf("the call succeeded: %+v", r.Result)
			}
			if !r.Error.IsAPICallError || r.Error.Status == nil || *r.Error.Status != 400 {
				t.Errorf("error %+v, want APICallError with status 400", *r.Error)
			}
			if r.Error.IsRetryable == nil || *r.Error.IsRetryable {
				t.Errorf("isRetryable %v, want false", r.Error.IsRetryable)
			}
			if !strings.HasPrefix(r.Error.Message, firewallBlockMessage) {
				t.Errorf("the SDK shows %q, want the firewall's message", r.Error.Message)
			}
		}
		t.Run(p.provider, func(t *testing.T) {
			t.Run("benign_arrives_intact", func(t *testing.T) {
				s.up.reset()
				r := call(t, "What is the capital of France?", "", "")
				if r.Error != nil || r.Result == nil || r.Result.Text != "pong" {
					t.Fatalf("call failed: %+v", r.Error)
				}
				s.wantArrivedIntact(t, r.Sent)
				if got := s.up.recorded()[0].Path; got != p.path {
					t.Errorf("upstream path %s, want %s", got, p.path)
				}
			})

			t.Run("prompt_blocked", func(t *testing.T) {
				s.up.reset()
				r := call(t, e2eMalicious, "", "")
				wantBlocked(t, r)
				if len(r.Sent) != 1 {
					t.Errorf("the SDK sent %d requests, want 1", len(r.Sent))
				}
				s.wantNoUpstream(t)
			})

			// execute's result as the text itself, and as an object the
			// provider sends as JSON inside the tool result.
			for _, shape := range []string{"text", "object"} {
				t.Run("tool_result_blocked/"+shape, func(t *testing.T) {
					s.up.reset()
					r := call(t, "What's the weather in Paris?", e2eToolResult, shape)
					wantBlocked(t, r)
					s.wantToolLoopBlocked(t, r.Sent)
				})
			}

			// A harmless result takes both steps: the block above is the
			// tool result's, not the loop's.
			t.Run("tool_loop_benign_completes", func(t *testing.T) {
				s.up.reset()
				r := call(t, "What's the weather in Paris?", "Sunny, 21C.", "object")
				if r.Error != nil || r.Result == nil || r.Result.Text != "pong" || r.Result.Steps != 2 {
					t.Fatalf("call failed: %+v %+v", r.Error, r.Result)
				}
				got := s.up.recorded()
				if len(got) != 2 || len(r.Sent) != 2 || string(got[1].Body) != r.Sent[1] || got[1].Header.Get("Prompt-Firewall-Verdict") != "safe" {
					t.Fatalf("upstream got %d requests, the SDK sent %d; want both, intact and safe", len(got), len(r.Sent))
				}
			})
		})
	}
}
