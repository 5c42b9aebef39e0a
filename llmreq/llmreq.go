// Package llmreq finds the texts of LLM API request bodies and rewrites chosen texts while keeping
// every other byte of the body as it was.
//
// Parse validates the body exactly as encoding/json does (it accepts what json.Valid accepts,
// nesting beyond MaxDepth aside) in one pass that records where each JSON value sits, then walks
// that index with the rules of the detected API. No map[string]any tree is built.
//
// The rules extract a superset of what the provider reads. Every API is described once, in
// APIs: the paths that name it, the root members that carry its texts, the root members known to
// be inert (settings, identifiers, numbers), its error family and its walker. A root member that
// is neither known nor inert is scanned whole, keys included (RoleUnknown), and so is a member,
// part, block or item of a shape a walker does not know (with the role of its message): an
// unexpected shape costs precision, never coverage. A body that carries the text members of
// other APIs besides its own (a /completions body with both prompt and messages, a chat body
// with contents) is walked by every API it fits; a literal two walkers give different roles is
// RoleUnknown, which the handler always scans.
//
// What is a text, by API (paths as in Text.Path; role in parentheses, "msg" = the message's):
//
//   - OpenAI Chat: messages[i].content (string, or parts text/refusal: grouped), every other
//     message member but role, tool_call_id and Ollama's images (msg: name, refusal, thinking,
//     reasoning_content, audio.transcript...), tool_calls[j].function.arguments,
//     tool_calls[j].custom.input, function_call.arguments (msg); file parts' filename and text
//     file data (msg); tools and functions (tool_definition); response_format (system).
//   - OpenAI Responses: instructions (system), input string (user), input items: messages'
//     content (msg, grouped; input_file as in Chat), function_call/custom_tool_call arguments
//     and input (assistant), reasoning summary and content (assistant), every *_output item's
//     output (tool), hosted tools' *_call items whole, keys included: what the tool was asked
//     and what it returned (tool), but image_generation_call's image;
//     mcp_list_tools tools (tool_definition); prompt.variables (user); tools (tool_definition);
//     text, the output format (system).
//   - Legacy completions and Anthropic's /v1/complete: prompt, suffix (user). Embeddings and
//     Ollama's /api/embed and /api/embeddings: input, prompt (user).
//   - Anthropic Messages: system (system, grouped); messages[i].content string and text blocks
//     (msg, grouped); document and image sources (text and base64 text files), title, context
//     (msg); tool_use input (msg); tool_result, mcp_tool_result and server tool results, any
//     inner shape (tool); thinking (msg); search_result title, source, content (msg); tools and
//     mcp_servers (tool_definition); output_format (system).
//   - Gemini: contents[i].parts[j].text (user, model = assistant; grouped), inlineData text
//     files, executableCode, functionCall.args (msg), everything under functionResponse (its
//     parts as parts) and codeExecutionResult.output (tool), systemInstruction (system),
//     generationConfig's response schemas (system), tools (tool_definition); camelCase and
//     snake_case names alike.
//   - Ollama: /api/chat messages as OpenAI Chat (tool_calls arguments are objects), tools
//     (tool_definition); /api/generate prompt and suffix (user), system, template and format
//     (system).
//   - Anything else: every string value and every key (RoleUnknown).
//
// Keys: where the model reads a JSON object whole (tool call arguments and tool results that are
// objects, Gemini functionCall.args and functionResponse.response, every generic fallback and
// unknown member), the object's keys are texts too, with Key set; in tool definitions and
// output schemas, every key that is not JSON-schema or tool vocabulary (property names above
// all). A key's Path is its member's path followed by "#key": args.city#key is the key of
// member args.city. Rewrite replaces a key like any other text.
//
// Groups: the text parts of one content list (OpenAI and Responses content parts, Anthropic text
// blocks of one message, of system or of one tool result, Gemini text parts of one content) are
// read by the model as one text. So are the content texts of a run of consecutive messages of one
// role (Chat and Ollama messages, Responses message items, Anthropic messages, Gemini contents),
// which providers and chat templates merge into one turn; a string content is one part. Tool
// call arguments, ids and keys are in no group, and a content list nested in a message (a tool
// result's) is a group of its own. When a group has two or more texts, they share a Group id
// (1, 2, ... per request; 0: no group), and Texts holds them in order, so that a caller can also
// scan their concatenation and map a match back to the parts.
//
// Files: inline file data with a text media type (text/*, JSON and +json, XML and +xml, CSV,
// Markdown, HTML, YAML, NDJSON...) is decoded and is a text whose Value is the file's content
// (IsFile; Request.MediaType gives the type): Chat file.file_data and Responses
// input_file.file_data (a data URL, or raw base64 typed by its filename's extension or, with
// neither, by sniffing), Anthropic base64 sources, Gemini inlineData, and, in shapes no rule
// knows, an object with base64 data beside a media type, a format or a filename (Bedrock
// Converse documents: {"format": "txt", "source": {"bytes": ...}}), Mistral's document_url
// part, and any string of such a shape that is a data URL (its literal is then a text too, unless
// the file is a text). ISO-8859-1 and
// windows-1252 are decoded; invalid UTF-8 becomes U+FFFD. Rewrite encodes a replacement the way
// the file came. Other files (PDF, office documents, anything neither text nor image, audio or
// video) and files that cannot be read (invalid base64, another charset, UTF-16) are listed in
// Request.Documents, with their decoded bytes when there are any; so are the documents the
// provider fetches by URL itself (Responses file_url, Anthropic url document sources, Gemini
// fileData that is not media, Mistral document_url), as unreadable. Images, audio and video are
// neither; but a file declared as one is read by its filename when that says text or a document
// (providers type files by name), and as text when its bytes are mostly text
// (filetext.MostlyText: a model reads text behind a few bytes of junk). Files named by id were
// uploaded before, and scanned, if at all, then: they are not listed. Provider-side
// MCP servers (a Responses "mcp" tool with server_url or connector_id, an Anthropic mcp_servers
// entry with a url) are Documents too, unreadable ("remote MCP server: ...") with
// RoleToolDefinition: the provider reads their tool definitions and outputs itself.
//
// Token ids: a completions prompt given as token ids (an array of integers, or of integer
// arrays), vLLM's prompt_embeds and Ollama's /api/generate context are prompts no scanner can
// read; their paths are listed in Request.TokenIDs. So are, in a generic body and in members
// no rule knows, arrays of two or more integers (or of integer arrays) named input_ids,
// token_ids, prompt_token_ids, tokens, prompt or *_ids, *_tokens, but for sampling settings
// (stop_token_ids and the like: tokenids.go). Embeddings input given as token arrays is
// not listed: clients send it by default (LangChain's OpenAIEmbeddings does) and embeddings are
// not instructions.
//
// Keys are matched as encoding/json matches struct fields (case-insensitively), duplicate keys
// are all visited, a message whose role is missing, unknown or given twice differently is
// RoleUnknown, and a discriminator given twice differently makes its object unknown. Inert
// names match exactly: a key that only folds to one is scanned.
package llmreq

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/promptwall/promptwall/jsonstr"
)

// API names the request family, detected from the URL path and the body's shape (see APIs).
type API string

const (
	OpenAIChat        API = "openai.chat"        // /chat/completions, or a body with "messages" in OpenAI shape
	OpenAIResponses   API = "openai.responses"   // /responses
	OpenAICompletions API = "openai.completions" // legacy /completions with "prompt"
	OpenAIEmbeddings  API = "openai.embeddings"  // /embeddings with "input"
	AnthropicMessages API = "anthropic.messages" // /v1/messages (also /messages with anthropic shape)
	AnthropicComplete API = "anthropic.complete" // legacy /v1/complete with "prompt"
	Gemini            API = "gemini"             // ...:generateContent, :streamGenerateContent, body with "contents"
	OllamaChat        API = "ollama.chat"        // /api/chat
	OllamaGenerate    API = "ollama.generate"    // /api/generate
	OllamaEmbed       API = "ollama.embed"       // /api/embed, /api/embeddings
	Generic           API = "json"               // anything else: every string value and key
)

// Family is "openai", "anthropic", "gemini", "ollama" or "json" (see APIInfo.Family).
func (a API) Family() string {
	if info := infoOf(a); info != nil {
		return info.Family
	}
	return FamilyJSON
}

// Roles of texts.
const (
	RoleUser           = "user"
	RoleSystem         = "system"
	RoleDeveloper      = "developer"
	RoleAssistant      = "assistant"
	RoleTool           = "tool"            // tool results: OpenAI tool messages, Anthropic tool_result, Responses *_output and call outputs, Gemini functionResponse
	RoleFunction       = "function"        // OpenAI legacy function messages
	RoleToolDefinition = "tool_definition" // tool names, descriptions and schemas: often loaded from third-party MCP servers
	RoleUnknown        = ""                // fallback strings: the handler always scans these
)

// Text is one text found in a request body.
type Text struct {
	Path  string // JSON path, e.g. messages[2].content[0].text, input[1].output, system[0].text; a key's ends in "#key"
	Role  string // one of the Role constants
	Value string // the decoded string (encoding/json semantics: invalid UTF-8 and lone surrogate escapes become U+FFFD); a file's decoded content

	Group int32 // texts of one message read as one (see the package doc); 0: none
	Key   bool  // the text is an object key

	// enc says how a file text's literal encodes its content (files.go); 0 for other texts.
	// Text stays 64 bytes: a body may hold MaxTexts of them.
	enc fileEnc
	// start and end delimit the JSON string literal in the body, quotes included.
	start, end int32
}

// IsFile reports whether the text is the decoded content of a file (Request.MediaType gives its
// type); its Value is then the content, not the literal.
func (t *Text) IsFile() bool { return t.enc != 0 }

// Document is a file in the body that llmreq does not read as text: a PDF, an office document,
// any type that is neither text nor image, audio or video; or a file it could not read.
type Document struct {
	Path      string // JSON path of the file's data literal
	Role      string
	MediaType string // lower case, without parameters; sniffed from the bytes when none was given
	Data      []byte // the decoded bytes; nil when the base64 is invalid

	// Unreadable says why a file could not be read: "invalid base64", "invalid
	// percent-encoding", "charset utf-7", "charset utf-16 (byte order mark)", "remote: the
	// provider fetches it". It is empty for a decoded file of a type that llmreq does not read
	// (PDF and the like), which a caller may extract itself.
	Unreadable string

	start int
}

// Request is a parsed request body.
type Request struct {
	API   API
	Texts []Text

	// Documents are the files llmreq did not read as text, in body order.
	Documents []Document

	// TokenIDs are the paths of prompts given as token ids or embeddings, which no scanner can
	// read (see the package doc); the first MaxTokenIDs of them.
	TokenIDs []string

	// body is the caller's slice, not a copy: Rewrite copies untouched bytes from it and texts'
	// values may be its bytes, so the caller must not modify it while the Request is in use.
	body      []byte
	fileTypes []fileType     // media types of the file texts
	lits      []litMarks     // the long literals, by start (rewrite.go)
	marks     []jsonstr.Mark // their marks

	// For ResumeAt (resume.go): the elements of the message lists, the walker that read them
	// (-1: several did), and the bytes ParseResumed left unread.
	msgs    []message
	primary int
	skipped int

	// values holds the texts' decoded values when they are long (heldValues): their strings
	// are its bytes, which Release hands back for a later parse.
	values []byte
}

type fileType struct {
	start int32
	mt    string
}

// MediaType returns the media type of text t of r when it is the decoded content of a file
// (lower case, without parameters: "text/markdown"), "" otherwise.
func (r *Request) MediaType(t *Text) string {
	if !t.IsFile() {
		return ""
	}
	i, ok := slices.BinarySearchFunc(r.fileTypes, t.start, func(f fileType, s int32) int { return int(f.start - s) })
	if !ok {
		return ""
	}
	return r.fileTypes[i].mt
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

// MaxTexts bounds the texts of one body. Each text costs a Text and its path, so a hostile body
// of tiny strings (["","",...]) would otherwise turn 16 MiB into hundreds of MiB. Real requests
// hold a few thousand at most (a long agent conversation, a batch of 2,048 embedding inputs).
const MaxTexts = 1 << 16

// MaxTokenIDs bounds Request.TokenIDs: one is enough to refuse a request, and a prompt of a
// million token arrays must not make a million paths.
const MaxTokenIDs = 64

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
	if t.resume != nil && (t.void || t.next != len(t.skips)) {
		return nil, errVoid
	}
	w := walker{t: t, body: body, tooMany: -1, path: t.path[:0], scratch: t.scratch[:0],
		paths: t.paths[:0], values: t.values[:0], spans: t.spans[:0], msgs: t.msgs[:0], lits: t.lits[:0], marks: t.marks[:0]}
	// The string values and keys bound the texts (unless several walkers visit one literal).
	// Up to smallBody of them, the texts are collected in the tape's buffer and copied out at
	// their number (a 4 KiB chat has 21 string values and 10 texts: the bound was most of what a
	// request allocated); past it, in a slice of the bound, so that a body of many strings
	// allocates in proportion once.
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
	api, primary, walkers := detect(urlPath, &w)
	if res := t.resume; res != nil && (api != res.api || primary != res.primary || walkers != 1<<primary) {
		return nil, errVoid
	}
	alone := w.run(primary, walkers)
	if pooled && cap(w.texts) != cap(t.texts) {
		// Several walkers outgrew the pooled buffer: it holds texts all the same.
		clear(t.texts[:cap(t.texts)])
	}
	if t.resume != nil && (w.misread || !alone) {
		clear(w.texts)
		return nil, errVoid
	}
	if w.tooMany >= 0 {
		clear(w.texts)
		return nil, &SyntaxError{Err: ErrTooManyTexts, Offset: w.tooMany,
			Msg: "more than " + strconv.Itoa(MaxTexts) + " texts"}
	}
	if !alone {
		primary = -1 // no Resume: the other walkers' reading of a message is not recorded
	}
	held := w.finish()
	if held != nil {
		w.values = nil // the Request's now: the next parse grows its own (growValues)
	}
	texts := w.texts
	if pooled {
		// Copy the texts out of the tape's buffer, and clear it before it goes back to the
		// pool, so that no text outlives its request there.
		texts = slices.Clone(w.texts)
		clear(w.texts)
	}
	t.path, t.scratch, t.paths, t.values, t.spans, t.msgs = w.path, w.scratch, w.paths, w.values, w.spans, w.msgs
	t.lits, t.marks = w.lits, w.marks
	var msgs []message
	if t.record && primary >= 0 {
		msgs = slices.Clone(w.msgs)
	}
	lits, marks := keptMarks(w.lits, w.marks)
	return &Request{API: api, Texts: inBodyOrder(texts), Documents: docsInBodyOrder(w.docs),
		TokenIDs: w.tokenIDs, body: body, fileTypes: sortedFileTypes(w.fileTypes), lits: lits, marks: marks,
		msgs: msgs, primary: primary, skipped: w.skipped, values: held}, nil
}

// inBodyOrder sorts texts by their literal's place (the walkers visit members in the order of
// their own rules, content before tool_calls, say; the contract is body order) and merges texts
// of one literal, which several walkers of a mixed body may each find: roles that disagree make
// the text RoleUnknown, a file's decoded content wins over its literal, the first group wins.
func inBodyOrder(texts []Text) []Text {
	sorted := true
	for i := 1; i < len(texts); i++ {
		if texts[i].start <= texts[i-1].start {
			sorted = false
			break
		}
	}
	if sorted {
		return texts
	}
	slices.SortStableFunc(texts, func(a, b Text) int { return int(a.start - b.start) })
	out := texts[:0]
	for _, x := range texts {
		n := len(out)
		if n == 0 || out[n-1].start != x.start {
			out = append(out, x)
			continue
		}
		prev := &out[n-1]
		role := prev.Role
		if role != x.Role {
			role = RoleUnknown
		}
		if prev.enc == 0 && x.enc != 0 {
			group := prev.Group
			*prev = x
			prev.Group = group
		}
		prev.Role = role
		if prev.Group == 0 {
			prev.Group = x.Group
		}
	}
	clear(texts[len(out):])
	return out
}

// sortedFileTypes sorts the media types of file texts by their literal, for MediaType's search.
func sortedFileTypes(fts []fileType) []fileType {
	slices.SortStableFunc(fts, func(a, b fileType) int { return int(a.start - b.start) })
	return slices.CompactFunc(fts, func(a, b fileType) bool { return a.start == b.start })
}

func docsInBodyOrder(docs []Document) []Document {
	if len(docs) < 2 {
		return docs
	}
	slices.SortStableFunc(docs, func(a, b Document) int { return a.start - b.start })
	out := docs[:1]
	for _, d := range docs[1:] {
		if p := &out[len(out)-1]; p.start == d.start {
			if p.Role != d.Role {
				p.Role = RoleUnknown
			}
			continue
		}
		out = append(out, d)
	}
	return out
}
