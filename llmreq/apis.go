package llmreq

import (
	"net/http"
	"slices"
	"strings"
)

// Error families, as APIInfo.Family and FamilyOf name them: the error shape a client of the
// family expects.
const (
	FamilyOpenAI    = "openai"
	FamilyAnthropic = "anthropic"
	FamilyGemini    = "gemini"
	FamilyOllama    = "ollama"
	FamilyJSON      = "json" // no known API: the caller picks a shape (FamilyOf)
)

// APIInfo describes one API: the endpoints that name it, the root members that carry its texts,
// the root members known to carry nothing the model reads, and its error family. Parse and the
// firewall both work from this one table, APIs.
type APIInfo struct {
	API    API
	Family string

	// Paths are the endpoint suffixes that name the API, after any prefix (a trailing slash is
	// ignored); Verbs are custom methods (Gemini's "/models/m:generateContent" has the verb
	// "generateContent"). The first entry of APIs that matches wins.
	Paths []string
	Verbs []string

	// Members are the root members that carry the API's texts: a body fits the API when it has
	// one of them (Gemini compares names without underscores, so system_instruction counts).
	Members []string

	// Inert are root members known to carry nothing the model reads (settings, identifiers,
	// sampling parameters, metadata kept for the caller). Any other root member the walker does
	// not know is scanned whole, keys and values, as RoleUnknown. Names match exactly.
	Inert []string

	rules rules // the walker; APIs of one rules read a body alike, and one of them runs
	// Beside another API's walker, this one runs only when the body has one of alsoMembers
	// (default: Members), and as also says.
	alsoMembers []string
	also        also
	inert       map[string]bool
	mask        uint16 // Members as rootMask bits
	alsoMask    uint16
}

// also says when an API's walker runs beside another API's.
type also uint8

const (
	alsoWithMembers also = iota // when the body has one of alsoMembers
	alsoNever                   // other walkers read what it reads
	alsoByParts                 // when the other walker met parts or blocks of this API's (see run)
	alsoLegacy                  // when the prompt is a legacy one, not Responses' stored prompt
)

// rules names the walkers. They are called through a switch (walker.walk), not through function
// values in the table, which would make the walker escape to the heap.
type rules uint8

const (
	rulesChat rules = iota + 1
	rulesResponses
	rulesCompletions
	rulesEmbeddings
	rulesAnthropic
	rulesGemini
	rulesGenerate
)

// walk runs the walker of r over the body.
func (w *walker) walk(r rules) {
	switch r {
	case rulesChat:
		w.openaiChat(0)
	case rulesResponses:
		w.openaiResponses(0)
	case rulesCompletions:
		w.openaiCompletions(0)
	case rulesEmbeddings:
		w.openaiEmbeddings(0)
	case rulesAnthropic:
		w.anthropicMessages(0)
	case rulesGemini:
		w.gemini(0)
	case rulesGenerate:
		w.ollamaGenerate(0)
	}
}

// Root members every API may carry that the model does not read: sampling and length settings,
// stop sequences (matched against the output), identifiers and user ids, caching and storage
// switches, metadata kept for the caller, tool_choice (it names a tool, whose definition is
// scanned). Numbers and booleans carry no text whatever their name.
var commonInert = []string{"model", "stream", "stream_options", "temperature", "top_p", "top_k", "n",
	"max_tokens", "seed", "user", "metadata", "service_tier", "store", "logprobs", "top_logprobs",
	"presence_penalty", "frequency_penalty", "stop", "logit_bias", "parallel_tool_calls",
	"tool_choice", "safety_identifier", "prompt_cache_key"}

// APIs is the table of the APIs Parse knows, in path-matching order (Ollama's /api/embeddings
// before OpenAI's /embeddings). Callers read it; changing it is not supported.
var APIs = []*APIInfo{
	{API: OllamaChat, Family: FamilyOllama, Paths: []string{"/api/chat"},
		Members: []string{"messages"}, rules: rulesChat, also: alsoByParts,
		Inert: []string{"options", "keep_alive", "think"}},
	{API: OllamaGenerate, Family: FamilyOllama, Paths: []string{"/api/generate"},
		Members: []string{"prompt", "system", "suffix", "template", "context"}, rules: rulesGenerate,
		alsoMembers: []string{"template", "context"}, // the completions walker reads prompt and suffix
		Inert:       []string{"options", "keep_alive", "think", "raw", "images"}},
	{API: OllamaEmbed, Family: FamilyOllama, Paths: []string{"/api/embed", "/api/embeddings"},
		Members: []string{"input", "prompt"}, rules: rulesEmbeddings,
		also:  alsoNever, // the Responses and completions walkers read input and prompt
		Inert: []string{"options", "keep_alive", "truncate", "dimensions"}},
	{API: OpenAIChat, Family: FamilyOpenAI, Paths: []string{"/chat/completions"},
		Members: []string{"messages"}, rules: rulesChat, also: alsoByParts,
		Inert: []string{"max_completion_tokens", "reasoning_effort", "modalities", "verbosity", "audio",
			"function_call", "options", "keep_alive", "think", "images"}},
	{API: OpenAIResponses, Family: FamilyOpenAI, Paths: []string{"/responses"},
		Members: []string{"input", "instructions"}, rules: rulesResponses,
		Inert: []string{"max_output_tokens", "max_tool_calls", "previous_response_id", "conversation",
			"background", "truncation", "include", "reasoning", "prompt_cache_retention"}},
	{API: AnthropicComplete, Family: FamilyAnthropic, Paths: []string{"/v1/complete"},
		Members: []string{"prompt"}, rules: rulesCompletions, also: alsoLegacy,
		Inert: []string{"max_tokens_to_sample", "stop_sequences"}},
	{API: OpenAICompletions, Family: FamilyOpenAI, Paths: []string{"/completions"},
		Members: []string{"prompt"}, rules: rulesCompletions, also: alsoLegacy,
		Inert: []string{"echo", "best_of"}},
	{API: OpenAIEmbeddings, Family: FamilyOpenAI, Paths: []string{"/embeddings"},
		Members: []string{"input"}, rules: rulesEmbeddings, also: alsoNever, // Responses' walker reads input too
		Inert: []string{"encoding_format", "dimensions", "input_type", "truncate", "embedding_types"}},
	{API: AnthropicMessages, Family: FamilyAnthropic, Paths: []string{"/messages", "/messages/count_tokens"},
		Members: []string{"messages"}, rules: rulesAnthropic, also: alsoByParts,
		Inert: []string{"max_tokens", "stop_sequences", "thinking", "anthropic_version", "anthropic_beta", "container"}},
	{API: Gemini, Family: FamilyGemini, Verbs: []string{"generateContent", "streamGenerateContent", "countTokens"},
		Members: []string{"contents", "systemInstruction"}, rules: rulesGemini,
		// Normalized: lower case, no underscores (geminiInert).
		Inert: []string{"safetysettings", "toolconfig", "cachedcontent", "labels"}},
}

// legacyPrompt: a prompt that is not Responses' stored prompt (an object).
func legacyPrompt(w *walker, root int) bool {
	p := w.member(root, "prompt")
	return p >= 0 && w.kind(p) != kindObject
}

func init() {
	for _, info := range APIs {
		for _, s := range info.Paths {
			last := s[strings.LastIndexByte(s, '/')+1:]
			if !slices.Contains(byLastSegment[last], info) {
				byLastSegment[last] = append(byLastSegment[last], info)
			}
		}
		for _, v := range info.Verbs {
			byLastSegment[":"+v] = append(byLastSegment[":"+v], info)
		}
		info.mask = maskOf(info.Members...)
		info.alsoMask = info.mask
		if info.alsoMembers != nil {
			info.alsoMask = maskOf(info.alsoMembers...)
		}
		info.inert = make(map[string]bool, len(commonInert)+len(info.Inert))
		for _, s := range append(append([]string{}, commonInert...), info.Inert...) {
			if info.API == Gemini {
				s = geminiNorm(s)
			}
			info.inert[s] = true
		}
	}
}

// Info returns the description of api, or nil for Generic and unknown APIs.
func (a API) Info() *APIInfo { return infoOf(a) }

func infoOf(a API) *APIInfo {
	for _, info := range APIs {
		if info.API == a {
			return info
		}
	}
	return nil
}

// byLastSegment indexes APIs by the last segment of their paths and by their verbs.
var byLastSegment = map[string][]*APIInfo{}

// InfoOfPath returns the API whose endpoint urlPath names, or nil.
func InfoOfPath(urlPath string) *APIInfo {
	p := strings.TrimRight(urlPath, "/")
	last := p[strings.LastIndexByte(p, '/')+1:]
	if c := strings.LastIndexByte(last, ':'); c >= 0 {
		if infos := byLastSegment[":"+last[c+1:]]; len(infos) > 0 {
			return infos[0]
		}
	}
	for _, info := range byLastSegment[last] {
		for _, s := range info.Paths {
			if strings.HasSuffix(p, s) {
				return info
			}
		}
	}
	return nil
}

// ollamaEndpoints are the endpoints of Ollama's native API, after /api/.
var ollamaEndpoints = []string{"chat", "generate", "embed", "embeddings", "create", "tags", "show",
	"copy", "delete", "pull", "push", "ps", "version", "blobs"}

// FamilyOf picks the error family of a request from its path and headers alone, for a request
// refused before its body could be parsed: Anthropic when an anthropic-version header is present
// or the path is an Anthropic endpoint (Claude's on Vertex and Bedrock included); Gemini for a
// /models/...:verb path; Ollama for its /api/ endpoints; OpenAI otherwise. header may be nil.
func FamilyOf(urlPath string, header http.Header) string {
	if header.Get("Anthropic-Version") != "" {
		return FamilyAnthropic
	}
	return FamilyOfPath(urlPath)
}

// FamilyOfPath is FamilyOf without headers.
func FamilyOfPath(urlPath string) string {
	p := strings.TrimRight(urlPath, "/")
	if info := InfoOfPath(p); info != nil {
		if info.Family == FamilyAnthropic && strings.Contains(p, "/threads/") {
			return FamilyOpenAI // OpenAI Assistants' /threads/{id}/messages
		}
		return info.Family
	}
	if strings.Contains(p, "/publishers/anthropic/") || strings.Contains(p, "/model/anthropic.") {
		return FamilyAnthropic // Claude on Vertex (:rawPredict) and on Bedrock (/invoke)
	}
	last := p[strings.LastIndexByte(p, '/')+1:]
	if strings.Contains(p, "/models/") && strings.Contains(last, ":") ||
		strings.Contains(last, "google.ai.generativelanguage.") {
		return FamilyGemini // generateContent and the like; Gemini Live's WebSocket
	}
	if i := strings.LastIndex(p, "/api/"); i >= 0 {
		ep := p[i+len("/api/"):]
		if j := strings.IndexByte(ep, '/'); j >= 0 {
			ep = ep[:j]
		}
		for _, e := range ollamaEndpoints {
			if ep == e {
				return FamilyOllama
			}
		}
	}
	return FamilyOpenAI
}
