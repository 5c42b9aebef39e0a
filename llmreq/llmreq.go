// Package llmreq finds the texts of LLM API request bodies and rewrites chosen texts while keeping
// every other byte of the body as it was.
//
// Parse validates the body exactly as encoding/json does (it accepts what json.Valid accepts,
// nesting beyond MaxDepth aside) in one pass that records where each JSON value sits, then walks
// that index with the rules of the detected API. No map[string]any tree is built.
//
// What is a text, by API (paths as in Text.Path; role in parentheses, "msg" = the message's):
//
//   - OpenAI Chat: messages[i].content (string, or parts text/refusal), messages[i].refusal,
//     tool_calls[j].function.arguments, tool_calls[j].custom.input, function_call.arguments (msg);
//     tools and functions definitions (system).
//   - OpenAI Responses: instructions (system), input string (user), input items: messages'
//     content (msg), function_call/custom_tool_call arguments and input (assistant), reasoning
//     summary (assistant), every *_output item's output (tool), other *_call items (assistant);
//     prompt.variables (user); tools (system).
//   - Legacy completions: prompt, suffix (user). Embeddings: input (user). Token arrays are numbers.
//   - Anthropic Messages: system (system); messages[i].content string and text blocks (msg);
//     document text/content sources, title, context (msg); tool_use input (msg); tool_result and
//     server tool results (tool); thinking (msg); tools (system).
//   - Gemini: contents[i].parts[j].text (user, model = assistant), functionCall.args (msg),
//     functionResponse.response and codeExecutionResult.output (tool), systemInstruction (system),
//     tools (system); camelCase and snake_case names alike.
//   - Ollama: /api/chat messages (content, thinking, tool_calls arguments; msg), tools (system);
//     /api/generate prompt and suffix (user), system and template (system).
//   - Anything else: every string value (RoleUnknown).
//
// Media (image_url, input_audio, file data, inline_data, base64 and URL sources) is not text.
// Keys are matched as encoding/json matches struct fields (case-insensitively), duplicate keys
// are all visited, a message whose role is missing, unknown or given twice differently is
// RoleUnknown, and a part or block of a shape the rules do not know has every string scanned:
// an unexpected shape costs precision, never coverage.
package llmreq

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/promptwall/promptwall/jsonstr"
)

// API names the request family, detected from the URL path and the body's shape.
type API string

const (
	OpenAIChat        API = "openai.chat"        // /chat/completions, or a body with "messages" in OpenAI shape
	OpenAIResponses   API = "openai.responses"   // /responses
	OpenAICompletions API = "openai.completions" // legacy /completions with "prompt"
	OpenAIEmbeddings  API = "openai.embeddings"  // /embeddings with "input"
	AnthropicMessages API = "anthropic.messages" // /v1/messages (also /messages with anthropic shape)
	Gemini            API = "gemini"             // ...:generateContent, :streamGenerateContent, body with "contents"
	OllamaChat        API = "ollama.chat"        // /api/chat
	OllamaGenerate    API = "ollama.generate"    // /api/generate
	Generic           API = "json"               // anything else: every string value
)

// Family is "openai", "anthropic", "gemini", "ollama" or "json"; it selects the block error shape
// (Ollama and json get the OpenAI shape from the handler, but report their own family).
func (a API) Family() string {
	switch a {
	case OpenAIChat, OpenAIResponses, OpenAICompletions, OpenAIEmbeddings:
		return "openai"
	case AnthropicMessages:
		return "anthropic"
	case Gemini:
		return "gemini"
	case OllamaChat, OllamaGenerate:
		return "ollama"
	}
	return "json"
}

// Roles of texts.
const (
	RoleUser      = "user"
	RoleSystem    = "system"
	RoleDeveloper = "developer"
	RoleAssistant = "assistant"
	RoleTool      = "tool"     // tool results: OpenAI tool messages, Anthropic tool_result, Responses function_call_output, Gemini functionResponse text
	RoleFunction  = "function" // OpenAI legacy function messages
	RoleUnknown   = ""         // fallback strings: the handler always scans these
)

// Text is one text found in a request body.
type Text struct {
	Path  string // JSON path, e.g. messages[2].content[0].text, input[1].output, system[0].text
	Role  string // one of the Role constants
	Value string // the decoded string (encoding/json semantics: invalid UTF-8 and lone surrogate escapes become U+FFFD)

	// start and end delimit the JSON string literal in the body, quotes included.
	start, end int
}

// Request is a parsed request body.
type Request struct {
	API   API
	Texts []Text

	// body is the caller's slice, not a copy: Rewrite copies untouched bytes from it and texts'
	// values may be its bytes, so the caller must not modify it while the Request is in use.
	body []byte
}

// Errors, to be wrapped with detail (position) and tested with errors.Is.
var (
	ErrInvalidJSON = errors.New("request body is not valid JSON")
	ErrTooDeep     = errors.New("request body is nested too deeply") // over MaxDepth

	// Additions to the first API: limits that keep memory proportional to the body.
	ErrTooManyTexts = errors.New("request body holds too many texts")  // over MaxTexts
	ErrTooLarge     = errors.New("request body is too large to parse") // over 256 MiB
)

// MaxDepth bounds nesting of arrays and objects (so hostile bodies cannot exhaust the stack).
const MaxDepth = 512

// MaxTexts bounds the texts of one body. Each text costs a Text (64 bytes) and its path, so a
// hostile body of tiny strings (["","",...]) would otherwise turn 16 MiB into hundreds of MiB.
// Real requests hold a few thousand at most (a long agent conversation, a batch of 2,048
// embedding inputs).
const MaxTexts = 1 << 16

// MaxPathLen bounds Text.Path in bytes: a longer path keeps its beginning and its end, joined by
// "…". Paths are for people and logs; the bound keeps a body with huge keys or deep nesting from
// multiplying its size by its number of texts.
const MaxPathLen = 512

// SyntaxError is the error Parse returns: Err is ErrInvalidJSON, ErrTooDeep, ErrTooManyTexts or
// ErrTooLarge, Offset the byte offset in the body where the problem was found.
type SyntaxError struct {
	Err    error
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%v: %s at byte offset %d", e.Err, e.Msg, e.Offset)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// Parse finds the texts of body; urlPath is the request's URL path (used with the body's shape to
// detect the API; the path may carry any prefix, e.g. /openai/v1/chat/completions).
// A body that is not a single JSON value (trailing garbage included) is ErrInvalidJSON.
//
// Parse keeps a reference to body (it does not copy it): Rewrite reads from it later, and the
// Value of a text whose literal has no escape and is valid UTF-8 (most texts) is body's own
// bytes. The caller must not modify body while the Request or its texts are in use.
func Parse(urlPath string, body []byte) (*Request, error) {
	t := getTape()
	defer putTape(t)
	return t.parse(urlPath, body)
}

// parse is Parse with the tape (and its buffers) given.
func (t *tape) parse(urlPath string, body []byte) (*Request, error) {
	if err := t.scan(body); err != nil {
		return nil, err
	}
	w := walker{t: t, body: body, tooMany: -1, path: t.path[:0], scratch: t.scratch[:0],
		paths: t.paths[:0], values: t.values[:0], spans: t.spans[:0]}
	// The string values bound the texts. Up to smallBody of them, the texts are collected in
	// the tape's buffer and copied out at their number (a 4 KiB chat has 21 string values and
	// 10 texts: the bound was most of what a request allocated); past it, in a slice of the
	// bound, so that a body of many strings allocates in proportion once.
	const smallBody = 64
	bound := min(t.strVals, MaxTexts)
	pooled := bound <= smallBody
	if pooled {
		if cap(t.texts) < smallBody {
			t.texts = make([]Text, 0, smallBody)
		}
		w.texts = t.texts[:0]
	} else {
		w.texts = make([]Text, 0, bound)
	}
	if cap(w.spans) < cap(w.texts) {
		w.spans = make([]textSpan, 0, cap(w.texts))
	}
	api := detect(urlPath, &w)
	w.extract(api)
	if w.tooMany >= 0 {
		return nil, &SyntaxError{Err: ErrTooManyTexts, Offset: w.tooMany,
			Msg: "more than " + strconv.Itoa(MaxTexts) + " texts"}
	}
	w.finish()
	texts := w.texts
	if pooled {
		// Copy the texts out of the tape's buffer, and clear it before it goes back to the
		// pool, so that no text outlives its request there.
		texts = slices.Clone(w.texts)
		clear(w.texts)
	}
	t.path, t.scratch, t.paths, t.values, t.spans = w.path, w.scratch, w.paths, w.values, w.spans
	// The API walkers visit members in the order of their own rules (content before tool_calls,
	// say); the contract is body order.
	byStart := func(a, b Text) int { return a.start - b.start }
	if !slices.IsSortedFunc(texts, byStart) {
		slices.SortStableFunc(texts, byStart)
	}
	return &Request{API: api, Texts: texts, body: body}, nil
}

// Rewrite returns a new body in which Texts[i] is replaced by repl[i] for every i in repl, encoded
// as a JSON string; every other byte of the original body is kept exactly. With an empty repl it
// returns the original bytes unchanged.
//
// Indexes outside Texts are ignored. A replacement equal to the text's Value keeps the original
// literal (its escapes included), so a caller may pass every text, changed or not, and only the
// changed ones are re-encoded. (A literal holding invalid UTF-8 is re-encoded all the same: the
// upstream then gets the U+FFFD that was scanned, not bytes a lax decoder might read as something
// else, such as an overlong '/'.)
func (r *Request) Rewrite(repl map[int]string) []byte {
	if len(repl) == 0 {
		return r.body
	}
	type splice struct {
		start, end, i int
		s             string
	}
	todo := make([]splice, 0, len(repl))
	size := len(r.body)
	for i, s := range repl {
		if i < 0 || i >= len(r.Texts) {
			continue
		}
		t := &r.Texts[i]
		if t.end-t.start < 2 || t.end > len(r.body) || r.unchanged(t, s) {
			continue // not a text of this body (a caller-made Text), or nothing to do
		}
		todo = append(todo, splice{t.start, t.end, i, s})
		size += len(s) + 2 - (t.end - t.start)
	}
	// Splice in body order, whatever order the caller left Texts in; of two entries for one
	// literal, the lower index wins.
	slices.SortFunc(todo, func(a, b splice) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return a.i - b.i
	})
	out := make([]byte, 0, max(size+size/16, len(r.body)))
	prev := 0
	for _, sp := range todo {
		if sp.start < prev {
			continue // the same literal again (the caller repeated a Text)
		}
		out = append(out, r.body[prev:sp.start]...)
		out = jsonstr.Append(out, sp.s, false)
		prev = sp.end
	}
	return append(out, r.body[prev:]...)
}

// unchanged reports whether replacement s of text t can keep the original literal.
func (r *Request) unchanged(t *Text, s string) bool {
	return s == t.Value && jsonstr.ValidUTF8(r.body[t.start:t.end])
}
