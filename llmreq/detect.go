package llmreq

import "strings"

// detect picks the API from the URL path first (the endpoint is what the upstream will apply)
// and checks that the body has that API's shape; a body that does not fit is Generic, so its
// every string and key is scanned. A path that names no known endpoint (a gateway's own route,
// Bedrock's /invoke, Vertex's :rawPredict) leaves the choice to the body's shape.
//
// It also returns the walkers to run: the API's own, then that of every other API whose text
// members the body carries (a /completions body with messages as well as prompt), since an
// upstream or a gateway in front of it may read those too.
//
// The walkers are returned as bits of their index in APIs; the API's own walker is primary's.
func detect(urlPath string, w *walker) (api API, primary int, walkers uint32) {
	root := 0
	if w.kind(root) != kindObject {
		return Generic, -1, 0
	}
	api = Generic
	var p *APIInfo
	mask := w.rootMask(root)
	if info := InfoOfPath(urlPath); info != nil {
		if mask&info.mask != 0 {
			api, p = info.API, info
		}
	} else {
		api = apiOfShape(w, root)
		p = infoOf(api)
	}
	primary = -1
	var seen uint32 // rules bits
	for i, info := range APIs {
		if info == p {
			primary, walkers, seen = i, walkers|1<<i, 1<<info.rules
		}
	}
	for i, info := range APIs {
		if info == p || mask&info.mask == 0 || seen&(1<<info.rules) != 0 {
			continue
		}
		// Beside the API's own walker, one that reads the same members runs only for what is
		// its own (alsoByParts: see run); with no walker of its own (Generic), every walker that
		// fits runs.
		if p != nil && (mask&info.alsoMask == 0 || info.also == alsoNever ||
			(info.also == alsoByParts && readsMessages(p)) || (info.also == alsoLegacy && !legacyPrompt(w, root))) {
			continue
		}
		seen |= 1 << info.rules
		walkers |= 1 << i
	}
	return api, primary, walkers
}

// readsMessages: the API's walker reads messages, so that another messages walker waits to be
// asked for (alsoByParts).
func readsMessages(info *APIInfo) bool {
	return info.rules == rulesChat || info.rules == rulesAnthropic
}

// run walks the body with the rules of every walker; the API's own also scans the root members
// no rule knows (Generic: all of them).
//
// A walker that meets parts or blocks of another API's (an Anthropic document in a chat body)
// asks for that API's walker (w.want); it runs then, once.
//
// It reports whether the API's own walker ran alone.
func (w *walker) run(primary int, walkers uint32) (alone bool) {
	var ran uint32 // rules bits
	if primary < 0 {
		w.fallback++
		w.all(0, RoleUnknown)
		w.fallback--
	} else {
		w.info = APIs[primary]
		w.walk(w.info.rules)
		ran |= 1 << w.info.rules
	}
	w.secondary = true
	for i, info := range APIs {
		if i != primary && walkers&(1<<i) != 0 && ran&(1<<info.rules) == 0 {
			w.info = info
			w.walk(info.rules)
			ran |= 1 << info.rules
		}
	}
	for more := true; more; {
		more = false
		for _, info := range APIs {
			if bit := uint32(1) << info.rules; w.want&bit != 0 && ran&bit == 0 {
				w.info, ran, more = info, ran|bit, true
				w.walk(info.rules)
			}
		}
	}
	w.info, w.secondary = nil, false
	return primary >= 0 && ran == 1<<APIs[primary].rules
}

// Root members that make a body fit an API, as bits: detect looks at each root key once.
const (
	bitMessages uint16 = 1 << iota
	bitInput
	bitInstructions
	bitPrompt
	bitSystem
	bitSuffix
	bitTemplate
	bitContext
	bitContents
	bitSystemInstruction
)

// memberBit is the bit of a member name in lower case without underscores (geminiNorm), or 0.
func memberBit(s string) uint16 {
	switch s {
	case "messages":
		return bitMessages
	case "input":
		return bitInput
	case "instructions":
		return bitInstructions
	case "prompt":
		return bitPrompt
	case "system":
		return bitSystem
	case "suffix":
		return bitSuffix
	case "template":
		return bitTemplate
	case "context":
		return bitContext
	case "contents":
		return bitContents
	case "systeminstruction":
		return bitSystemInstruction
	}
	return 0
}

var memberNames = []string{"messages", "input", "instructions", "prompt", "system", "suffix",
	"template", "context", "contents", "systeminstruction"}

// maskOf is the bits of names.
func maskOf(names ...string) uint16 {
	var m uint16
	for _, s := range names {
		m |= memberBit(geminiNorm(s))
	}
	return m
}

// rootMask is the bits of the root members of object root. Keys are compared in lower case and
// without underscores (Gemini's snake_case names, encoding/json's case folding): a key that only
// looks like a member makes a walker run for nothing, which costs time, not coverage.
func (w *walker) rootMask(root int) uint16 {
	var m uint16
	w.eachMember(root, func(k, _ int) {
		n := w.t.nodes[k]
		if n.escaped() || !n.ascii() {
			for _, name := range memberNames {
				if w.geminiKeyIs(k, name) {
					m |= memberBit(name)
				}
			}
			return
		}
		var buf [24]byte
		if name, ok := foldKey(buf[:0], w.body[n.start()+1:n.end()-1]); ok {
			m |= memberBit(string(name))
		}
	})
	return m
}

// apiOfShape guesses the API of a body from its members alone. A body that carries the text
// members of two APIs (messages and contents, say) is ambiguous: it is Generic, and the walker of
// every API it fits runs.
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
		if w.has(root, "system") || w.has(root, "anthropic_version") || looksAnthropic(w, root) {
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

// looksAnthropic reports blocks only Anthropic has in the messages.
func looksAnthropic(w *walker, root int) bool {
	return w.blockTypes(root, anthropicOnly, "_tool_result")
}

var (
	anthropicOnly = []string{"image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking",
		"search_result", "server_tool_use", "mcp_tool_use", "mcp_tool_result", "container_upload"}
	openaiOnly = []string{"image_url", "input_audio", "file", "input_text", "input_image", "input_file", "refusal"}
)

// blockTypes reports whether a content block of some message has a type of types (or, for
// Anthropic, a *_tool_result type).
func (w *walker) blockTypes(root int, types []string, suffix string) bool {
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
			typ, _ := w.uniqueString(b, "type")
			for _, t := range types {
				found = found || typ == t
			}
			found = found || (suffix != "" && strings.HasSuffix(typ, suffix))
		})
	})
	return found
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
