package llmreq

import "strings"

// detect picks the API from the URL path first (the endpoint is what the upstream will apply)
// and checks that the body has that API's shape; a body that does not fit is Generic, so its
// every string is scanned. A path that names no known endpoint (a gateway's own route, Bedrock's
// /invoke, Vertex's :rawPredict) leaves the choice to the body's shape.
func detect(urlPath string, w *walker) API {
	root := 0
	if w.kind(root) != kindObject {
		return Generic
	}
	p := strings.TrimRight(urlPath, "/")
	if api, ok := apiOfPath(p); ok {
		if fits(api, w, root) {
			return api
		}
		return Generic
	}
	return apiOfShape(w, root)
}

// apiOfPath maps an endpoint path (any prefix) to its API.
func apiOfPath(p string) (API, bool) {
	last := p[strings.LastIndexByte(p, '/')+1:]
	if c := strings.LastIndexByte(last, ':'); c >= 0 {
		switch last[c+1:] {
		case "generateContent", "streamGenerateContent", "countTokens":
			return Gemini, true
		}
	}
	switch {
	case strings.HasSuffix(p, "/chat/completions"):
		return OpenAIChat, true
	case strings.HasSuffix(p, "/responses"):
		return OpenAIResponses, true
	case strings.HasSuffix(p, "/completions"):
		return OpenAICompletions, true
	case strings.HasSuffix(p, "/embeddings"):
		return OpenAIEmbeddings, true
	case strings.HasSuffix(p, "/messages"), strings.HasSuffix(p, "/messages/count_tokens"):
		return AnthropicMessages, true
	case strings.HasSuffix(p, "/api/chat"):
		return OllamaChat, true
	case strings.HasSuffix(p, "/api/generate"):
		return OllamaGenerate, true
	}
	return "", false
}

// fits reports whether object root has the members that carry the texts of api.
func fits(api API, w *walker, root int) bool {
	switch api {
	case OpenAIChat, AnthropicMessages, OllamaChat:
		return w.has(root, "messages")
	case OpenAIResponses:
		return w.has(root, "input") || w.has(root, "instructions")
	case OpenAICompletions:
		return w.has(root, "prompt")
	case OpenAIEmbeddings:
		return w.has(root, "input")
	case Gemini:
		return w.has(root, "contents")
	case OllamaGenerate:
		return w.has(root, "prompt") || w.has(root, "system") || w.has(root, "suffix") || w.has(root, "template")
	}
	return false
}

// apiOfShape guesses the API of a body from its members alone. A body that carries the text
// members of two APIs (messages and contents, say) is ambiguous: whichever the upstream follows,
// the texts of the other would go unscanned under one API's rules, so it is Generic.
func apiOfShape(w *walker, root int) API {
	shapes := 0
	for _, m := range [...]string{"contents", "messages", "input"} {
		if w.has(root, m) {
			shapes++
		}
	}
	// A legacy prompt is a string or an array; Responses' stored prompt is an object.
	if p := w.member(root, "prompt"); p >= 0 && w.kind(p) != kindObject {
		shapes++
	}
	if shapes > 1 {
		return Generic
	}
	switch {
	case w.has(root, "contents"):
		return Gemini
	case w.has(root, "messages"):
		if looksAnthropic(w, root) {
			return AnthropicMessages
		}
		return OpenAIChat
	case w.has(root, "input"):
		if w.has(root, "encoding_format") || w.has(root, "dimensions") {
			return OpenAIEmbeddings
		}
		in := w.member(root, "input")
		if w.has(root, "instructions") || w.kind(in) == kindString || hasObjectElement(w, in) {
			return OpenAIResponses
		}
		return OpenAIEmbeddings
	case w.has(root, "prompt"):
		// Ollama's generate carries its own system prompt and template beside the prompt.
		if w.has(root, "system") || w.has(root, "template") {
			return OllamaGenerate
		}
		return OpenAICompletions
	}
	return Generic
}

func hasObjectElement(w *walker, arr int) bool {
	found := false
	if w.kind(arr) == kindArray {
		w.eachElement(arr, func(_, e int) { found = found || w.kind(e) == kindObject })
	}
	return found
}

// looksAnthropic tells an Anthropic Messages body from an OpenAI-shaped one: a top-level system,
// an anthropic_version (Bedrock, Vertex), or a content block only Anthropic has.
func looksAnthropic(w *walker, root int) bool {
	if w.has(root, "system") || w.has(root, "anthropic_version") {
		return true
	}
	msgs := w.member(root, "messages")
	if w.kind(msgs) != kindArray {
		return false
	}
	found := false
	w.eachElement(msgs, func(_, m int) {
		c := w.member(m, "content")
		if found || c < 0 || w.kind(c) != kindArray {
			return
		}
		w.eachElement(c, func(_, b int) {
			switch typ, _ := w.uniqueString(b, "type"); typ {
			case "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking", "search_result":
				found = true
			}
		})
	})
	return found
}

// extract runs the rules of api over the body.
func (w *walker) extract(api API) {
	switch api {
	case OpenAIChat:
		w.openaiChat(0)
	case OpenAIResponses:
		w.openaiResponses(0)
	case OpenAICompletions:
		w.openaiCompletions(0)
	case OpenAIEmbeddings:
		w.openaiEmbeddings(0)
	case AnthropicMessages:
		w.anthropicMessages(0)
	case Gemini:
		w.gemini(0)
	case OllamaChat:
		w.ollamaChat(0)
	case OllamaGenerate:
		w.ollamaGenerate(0)
	default:
		w.all(0, RoleUnknown)
	}
}

// chatRole maps a message's role member to a Role constant. A missing role, a role of another
// spelling, or duplicate roles that disagree give RoleUnknown, which the handler always scans:
// the scanner must never believe a message is less exposed than the model will.
func (w *walker) chatRole(msg int) string {
	r, ok := w.uniqueString(msg, "role")
	if !ok {
		return RoleUnknown
	}
	switch r {
	case RoleUser, RoleSystem, RoleDeveloper, RoleAssistant, RoleTool, RoleFunction:
		return r
	}
	return RoleUnknown
}
