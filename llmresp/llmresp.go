// Package llmresp frames and rewrites the responses of LLM APIs: the counterpart of llmreq for
// what comes back. It scans nothing: it cuts a response into events, says what the model wrote
// in each (Pieces, with a channel key per stream of text), rewrites one piece's string keeping
// every other byte, and writes the error each API's SDK raises.
//
// Framing (Framer): SSE (text/event-stream), NDJSON (Ollama's streams), a streamed JSON array
// (Gemini's streamGenerateContent without alt=sse) and a whole JSON body. A framer is fed bytes
// in any chunking and emits whole events; the concatenation of the events' Raw is exactly the
// input, so forwarding an unchanged event's Raw is byte-identical. An event over MaxEvent bytes
// is ErrEventTooLarge: memory stays bounded, and the firewall refuses.
//
// Pieces and their channels, by API (i: the choice's or candidate's index member, else its
// position; o, c: output_index and content_index; b: the content block's index; j: the tool
// call's index member, else its position). Tool arguments are JSON text; Rewrite of a JSON
// piece takes JSON.
//
//   - OpenAI Chat (chunks and whole): choices[i].delta or .message: content (a string, or parts'
//     text) → choices[i].content; refusal → choices[i].refusal; reasoning_content and
//     reasoning → choices[i].reasoning; audio.transcript → choices[i].audio;
//     tool_calls[j].function (or .custom) name and arguments (input) →
//     choices[i].tool_calls[j].name, .arguments; function_call → choices[i].function_call.*.
//     data: [DONE] is Info.Done. Legacy completions: choices[i].text → choices[i].text.
//   - OpenAI Responses: response.output_text.delta, .refusal.delta, .reasoning_text.delta →
//     output[o].content[c]; .reasoning_summary_text.delta → output[o].summary[s];
//     .function_call_arguments.delta, .mcp_call_arguments.delta, .custom_tool_call_input.delta,
//     .code_interpreter_call_code.delta → output[o].arguments; .audio.transcript.delta →
//     audio.transcript. Whole (Piece.Whole): their .done events, content_part and
//     reasoning_summary_part events, output_item.added and .done (message content, function
//     and MCP calls' name and arguments, custom tool input, code interpreter code, reasoning
//     summary and content), the response of response.created ... response.completed, and a
//     non-streamed response's output[] (same channels by position).
//   - Anthropic Messages: content_block_start text and thinking → content[b], tool_use input
//     → content[b].start (the SDK drops it for the deltas' JSON), tool name → content[b].name;
//     content_block_delta text_delta.text,
//     thinking_delta.thinking, input_json_delta.partial_json → content[b]; message_start's
//     and a whole message's content[] by position. signature and citations are not the
//     model's text. Legacy /v1/complete: completion.
//   - Gemini (SSE chunks, array elements, whole): candidates[i].content.parts[]: text →
//     candidates[i].text (thought parts: candidates[i].thought), functionCall name and args
//     (an object) → candidates[i].functionCall.name, .args, executableCode.code →
//     candidates[i].code. Parts have no index in the channel: a candidate's parts are one text
//     across chunks.
//   - Ollama: /api/chat message.content, message.thinking, message.tool_calls[j].function name
//     and arguments (an object) → message.content, message.thinking,
//     message.tool_calls[j].name, .arguments; /api/generate response, thinking.
//   - Embeddings: no pieces.
//
// Refused (an error the firewall turns into the API's error): the generic API and content
// types other than SSE, NDJSON and JSON (Detect: ErrCannotParse); an event over MaxEvent
// (ErrEventTooLarge); a streamed array out of its grammar or not closed (ErrBadFrame); event
// data that is not valid JSON, OpenAI's [DONE] aside (ErrBadEvent), or JSON that is not an
// object (ErrShape). Responses and Anthropic events of types no walker knows are not refused:
// every string in them but ids and opaque payloads is a piece on channel "event.<type>"
// (Anthropic delta types: content[b].<type>), Info.Unknown set.
//
// Pure: the standard library and jsonstr only. API names are llmreq's (a test keeps them equal).
package llmresp

import (
	"errors"
	"mime"
	"strings"
)

// API is a request API as llmreq names it (llmreq.API's string).
type API string

const (
	OpenAIChat        API = "openai.chat"
	OpenAIResponses   API = "openai.responses"
	OpenAICompletions API = "openai.completions"
	OpenAIEmbeddings  API = "openai.embeddings"
	AnthropicMessages API = "anthropic.messages"
	AnthropicComplete API = "anthropic.complete"
	Gemini            API = "gemini"
	OllamaChat        API = "ollama.chat"
	OllamaGenerate    API = "ollama.generate"
	OllamaEmbed       API = "ollama.embed"
	Generic           API = "json"
)

// Format is how a response body is framed.
type Format uint8

const (
	FormatJSON      Format = iota + 1 // one JSON value (application/json)
	FormatSSE                         // text/event-stream
	FormatNDJSON                      // application/x-ndjson: one JSON value a line
	FormatJSONArray                   // application/json streamed as an array of values (Gemini)
)

func (f Format) String() string {
	switch f {
	case FormatJSON:
		return "json"
	case FormatSSE:
		return "sse"
	case FormatNDJSON:
		return "ndjson"
	case FormatJSONArray:
		return "json-array"
	}
	return "none"
}

// Errors. A firewall turns every one of them into a refusal.
var (
	ErrCannotParse   = errors.New("llmresp: response cannot be parsed")           // Detect: unknown API or content type
	ErrEventTooLarge = errors.New("llmresp: response event too large")            // over MaxEvent
	ErrBadFrame      = errors.New("llmresp: response framing is invalid")         // a JSON array stream out of shape
	ErrBadEvent      = errors.New("llmresp: response event is not valid JSON")    // Pieces
	ErrShape         = errors.New("llmresp: response event has an unknown shape") // Pieces: not an object
	ErrRewrite       = errors.New("llmresp: rewrite not possible")                // Rewrite
)

// DefaultMaxEvent bounds one event when a framer's MaxEvent is 0. Gemini image output and
// long non-streamed answers come as one event of a few MiB.
const DefaultMaxEvent = 16 << 20

// streamable are the APIs whose responses carry model text; embeddings carry none, and the
// generic API has no known response shape.
func known(api API) bool {
	switch api {
	case OpenAIChat, OpenAIResponses, OpenAICompletions, AnthropicMessages, AnthropicComplete,
		Gemini, OllamaChat, OllamaGenerate, OpenAIEmbeddings, OllamaEmbed:
		return true
	}
	return false
}

// Detect picks the framing of a response from the request's API and the response's Content-Type.
// application/json is FormatJSON; for Gemini it is FormatJSON too, and the framer streams an
// array body element by element (see NewFramer). Anything else, and the generic API, is
// ErrCannotParse: the firewall cannot say what the model wrote, so it must refuse.
func Detect(api API, contentType string) (Format, error) {
	if !known(api) {
		return 0, ErrCannotParse
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return 0, ErrCannotParse
	}
	switch strings.ToLower(mt) {
	case "text/event-stream":
		return FormatSSE, nil
	case "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines":
		return FormatNDJSON, nil
	case "application/json":
		return FormatJSON, nil
	}
	return 0, ErrCannotParse
}

// Event is one framed event. Its slices are valid only during the emit call that passes it.
type Event struct {
	// Raw is the event's bytes exactly as they came: for SSE its lines through the blank line
	// that ends it (a BOM at the stream's start included); for NDJSON the line and its "\n";
	// for a JSON array the separators before the element and the element.
	Raw []byte
	// Name is the SSE event field ("" without one).
	Name string
	// Data is the payload a client parses: SSE data lines joined by "\n", the NDJSON line or
	// array element trimmed of white space, the whole JSON body. nil: nothing a client
	// dispatches (a comment, a blank line, a separator, an SSE block without data).
	Data []byte
	// Partial: the stream ended inside the event (no blank line, no newline). Clients that
	// follow the SSE standard drop such an event, but it is scanned all the same.
	Partial bool

	segs    []seg // SSE: where each data line's value sits in Raw
	dataOff int   // other formats: Data is Raw[dataOff:dataOff+len(Data)]
}

// seg: a data line's value, Raw[raw:raw+n], is Data[data:data+n].
type seg struct{ raw, data, n int }

// rawOffset maps an offset of Data to one of Raw: the byte at d for a start, the byte before d
// for an exclusive end (a piece never starts or ends at the "\n" that joins two data lines).
func (e *Event) rawOffset(d int, end bool) int {
	if e.segs == nil {
		return e.dataOff + d
	}
	for _, s := range e.segs {
		if !end && d >= s.data && d < s.data+s.n || end && d > s.data && d <= s.data+s.n {
			return s.raw + d - s.data
		}
	}
	return -1
}

// Clone returns a copy of e that stays valid after the emit call: a firewall that holds an
// event back (until the text in it is final) keeps the copy, and its pieces' offsets, which
// point into Data, hold for the copy too.
func (e *Event) Clone() *Event {
	c := *e
	c.Raw = append([]byte(nil), e.Raw...)
	if e.Data != nil {
		c.Data = append([]byte{}, e.Data...)
	}
	c.segs = append([]seg(nil), e.segs...)
	return &c
}
