package llmreq

import "testing"

func TestDetect(t *testing.T) {
	const (
		chat      = `{"model":"m","messages":[{"role":"user","content":"x"}]}`
		anthropic = `{"model":"m","max_tokens":5,"system":"s","messages":[{"role":"user","content":"x"}]}`
		gemini    = `{"contents":[{"parts":[{"text":"x"}]}]}`
	)
	for _, c := range []struct {
		path, body string
		api        API
	}{
		{"/v1/chat/completions", chat, OpenAIChat},
		{"/openai/v1/chat/completions/", chat, OpenAIChat},
		{"/openai/deployments/gpt4/chat/completions", chat, OpenAIChat},
		{"/v1beta/openai/chat/completions", chat, OpenAIChat},
		{"/v1/chat/completions", gemini, Generic},
		{"/v1/responses", `{"input":"x"}`, OpenAIResponses},
		{"/v1/responses", `{"instructions":"x"}`, OpenAIResponses},
		{"/v1/responses", `{"previous_response_id":"resp_1"}`, Generic},
		{"/v1/completions", `{"prompt":"x"}`, OpenAICompletions},
		{"/v1/completions", chat, Generic},
		{"/v1/embeddings", `{"input":"x"}`, OpenAIEmbeddings},
		{"/api/embeddings", `{"model":"m","prompt":"x"}`, Generic},
		{"/v1/messages", anthropic, AnthropicMessages},
		{"/v1/messages", chat, AnthropicMessages}, // the path decides; the shape only has to fit
		{"/v1/messages/count_tokens", anthropic, AnthropicMessages},
		{"/v1beta/models/gemini-2.0-flash:generateContent", gemini, Gemini},
		{"/v1/projects/p/locations/l/publishers/google/models/gemini-2.0-flash:streamGenerateContent", gemini, Gemini},
		{"/v1beta/models/gemini-2.0-flash:countTokens", gemini, Gemini},
		{"/v1beta/models/gemini-2.0-flash:generateContent", chat, Generic},
		{"/api/chat", chat, OllamaChat},
		{"/api/generate", `{"prompt":"x"}`, OllamaGenerate},
		{"/api/generate", `{"system":"x"}`, OllamaGenerate},
		// By shape, when the path names no endpoint.
		{"/", chat, OpenAIChat},
		{"/", anthropic, AnthropicMessages},
		{"/", `{"anthropic_version":"vertex-2023-10-16","messages":[]}`, AnthropicMessages},
		{"/", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}]}`, AnthropicMessages},
		{"/", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}}]}]}`, OpenAIChat},
		{"/", gemini, Gemini},
		{"/", `{"input":"x"}`, OpenAIResponses},
		{"/", `{"input":[{"role":"user","content":"x"}]}`, OpenAIResponses},
		{"/", `{"input":["x","y"]}`, OpenAIEmbeddings},
		{"/", `{"input":"x","encoding_format":"float"}`, OpenAIEmbeddings},
		{"/", `{"prompt":"x"}`, OpenAICompletions},
		{"/", `{"prompt":"x","system":"y"}`, OllamaGenerate},
		{"/", `{"text":"x"}`, Generic},
		{"/", `{"messages":[],"contents":[]}`, Generic},
		{"/", `{"messages":[],"prompt":"x"}`, Generic},
		{"/", `{"input":"x","prompt":{"id":"pmpt_1"}}`, OpenAIResponses},
		{"/v1/chat/completions", `{"messages":[],"contents":[]}`, OpenAIChat}, // the path decides
		{"/", `"x"`, Generic},
		{"", `[]`, Generic},
	} {
		r, err := Parse(c.path, []byte(c.body))
		if err != nil {
			t.Fatalf("%s %s: %v", c.path, c.body, err)
		}
		if r.API != c.api {
			t.Errorf("%s %s: API %q, want %q", c.path, c.body, r.API, c.api)
		}
	}
}

func TestFamily(t *testing.T) {
	for api, fam := range map[API]string{
		OpenAIChat: "openai", OpenAIResponses: "openai", OpenAICompletions: "openai", OpenAIEmbeddings: "openai",
		AnthropicMessages: "anthropic", Gemini: "gemini", OllamaChat: "ollama", OllamaGenerate: "ollama",
		Generic: "json", API("other"): "json",
	} {
		if got := api.Family(); got != fam {
			t.Errorf("%q.Family() = %q, want %q", api, got, fam)
		}
	}
}
