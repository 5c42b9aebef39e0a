package llmreq

import (
	"net/http"
	"testing"
)

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
		{"/api/embeddings", `{"model":"m","prompt":"x"}`, OllamaEmbed},
		{"/api/embed", `{"model":"m","input":["x"]}`, OllamaEmbed},
		{"/v1/complete", `{"model":"claude-2.1","prompt":"\n\nHuman: hi\n\nAssistant:"}`, AnthropicComplete},
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
		AnthropicComplete: "anthropic", OllamaEmbed: "ollama", Generic: "json", API("other"): "json",
	} {
		if got := api.Family(); got != fam {
			t.Errorf("%q.Family() = %q, want %q", api, got, fam)
		}
	}
}

// TestAPITable: every API has one description, every path of the table names its own API, and
// the family of a request that did not parse follows the table.
func TestAPITable(t *testing.T) {
	seen := map[API]bool{}
	for _, info := range APIs {
		if seen[info.API] {
			t.Errorf("%s described twice", info.API)
		}
		seen[info.API] = true
		switch info.Family {
		case FamilyOpenAI, FamilyAnthropic, FamilyGemini, FamilyOllama:
		default:
			t.Errorf("%s: family %q", info.API, info.Family)
		}
		if info.rules == 0 || len(info.Members) == 0 || info.mask == 0 {
			t.Errorf("%s: no walker or no members", info.API)
		}
		if info.API.Info() != info || info.API.Family() != info.Family {
			t.Errorf("%s: Info or Family disagrees with the table", info.API)
		}
		for _, p := range info.Paths {
			if got := InfoOfPath("/prefix" + p + "/"); got != info {
				t.Errorf("path %s names %v, want %s", p, got.API, info.API)
			}
		}
		for _, v := range info.Verbs {
			if got := InfoOfPath("/v1beta/models/m:" + v); got != info {
				t.Errorf("verb %s names %v, want %s", v, got.API, info.API)
			}
		}
	}
	for _, a := range []API{OpenAIChat, OpenAIResponses, OpenAICompletions, OpenAIEmbeddings, AnthropicMessages,
		AnthropicComplete, Gemini, OllamaChat, OllamaGenerate, OllamaEmbed} {
		if !seen[a] {
			t.Errorf("%s is not in the table", a)
		}
	}
	if Generic.Info() != nil || InfoOfPath("/v1/whatever") != nil {
		t.Error("Generic or an unknown path has a description")
	}
}

func TestCommonInertNames(t *testing.T) {
	for _, s := range commonInert {
		if !commonInertName(s) {
			t.Errorf("%s is in commonInert but not in commonInertName", s)
		}
	}
	n := 0
	for _, s := range []string{"model", "stream", "stream_options", "temperature", "top_p", "top_k", "n",
		"max_tokens", "seed", "user", "metadata", "service_tier", "store", "logprobs", "top_logprobs",
		"presence_penalty", "frequency_penalty", "stop", "logit_bias", "parallel_tool_calls",
		"tool_choice", "safety_identifier", "prompt_cache_key", "messages", "Model", "documents"} {
		if commonInertName(s) {
			n++
		}
	}
	if n != len(commonInert) {
		t.Errorf("commonInertName knows %d names, commonInert has %d", n, len(commonInert))
	}
}

func TestFamilyOf(t *testing.T) {
	anthropic := http.Header{"Anthropic-Version": {"2023-06-01"}}
	for _, c := range []struct {
		path   string
		header http.Header
		want   string
	}{
		{"/v1/chat/completions", nil, FamilyOpenAI},
		{"/openai/deployments/d/chat/completions", nil, FamilyOpenAI},
		{"/v1/responses", nil, FamilyOpenAI},
		{"/v1/embeddings", nil, FamilyOpenAI},
		{"/v1/whatever", nil, FamilyOpenAI},
		{"/", nil, FamilyOpenAI},
		{"", nil, FamilyOpenAI},
		{"/v1/messages", nil, FamilyAnthropic},
		{"/anthropic/v1/messages/count_tokens", nil, FamilyAnthropic},
		{"/v1/complete", nil, FamilyAnthropic},
		{"/v1/threads/thread_1/messages", nil, FamilyOpenAI},
		{"/v1/chat/completions", anthropic, FamilyAnthropic},
		{"/model/anthropic.claude/invoke", anthropic, FamilyAnthropic},
		{"/v1/projects/p/locations/l/publishers/anthropic/models/claude-sonnet-4:rawPredict", nil, FamilyAnthropic},
		{"/model/anthropic.claude-3-5-sonnet-20240620-v1:0/invoke", nil, FamilyAnthropic},
		{"/v1beta/models/gemini-2.0-flash:generateContent", nil, FamilyGemini},
		{"/v1/projects/p/locations/l/publishers/google/models/gemini:streamGenerateContent", nil, FamilyGemini},
		{"/v1beta/models/gemini:embedContent", nil, FamilyGemini},
		{"/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent", nil, FamilyGemini},
		{"/api/chat", nil, FamilyOllama},
		{"/ollama/api/generate/", nil, FamilyOllama},
		{"/api/embed", nil, FamilyOllama},
		{"/api/embeddings", nil, FamilyOllama},
		{"/api/pull", nil, FamilyOllama},
		{"/api/blobs/sha256:abc", nil, FamilyOllama},
		{"/api/v1/chat/completions", nil, FamilyOpenAI}, // OpenRouter: /api/ but OpenAI's path
		{"/api/other", nil, FamilyOpenAI},
	} {
		if got := FamilyOf(c.path, c.header); got != c.want {
			t.Errorf("FamilyOf(%q, %v) = %q, want %q", c.path, c.header, got, c.want)
		}
		if c.header == nil && FamilyOfPath(c.path) != c.want {
			t.Errorf("FamilyOfPath(%q) = %q, want %q", c.path, FamilyOfPath(c.path), c.want)
		}
	}
}
