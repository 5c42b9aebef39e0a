package llmreq

import (
	"strings"
	"unicode/utf8"
)

// Keys are texts too: a body no API fits has every key scanned, and a tool result's object is
// read whole, keys included. A Text's Path spells the keys on its way, so a path may hold text
// the client sent, which must never reach a log. LogPath keeps what is the APIs' vocabulary
// and hides the rest.

// LogPath returns path with every key that is not a member name of the APIs (pathWords, and
// the table's Members and Inert) replaced by "*", and any other character run the path grammar
// does not know as well: messages[2].content[0].text stays as it is, task["ignore all…"].notes
// becomes task[*].*. Indexes, "#key" and the "…" of a shortened path are kept.
func LogPath(path string) string {
	var b strings.Builder
	b.Grow(len(path))
	for i := 0; i < len(path); {
		c := path[i]
		switch {
		case c == '.':
			b.WriteByte('.')
			i++
		case c == '[' && i+1 < len(path) && path[i+1] == '"':
			i = skipQuoted(path, i+2)
			b.WriteString("[*]")
		case c == '[':
			j := i + 1
			for j < len(path) && path[j] >= '0' && path[j] <= '9' {
				j++
			}
			if j > i+1 && j < len(path) && path[j] == ']' {
				b.WriteString(path[i : j+1])
				i = j + 1
				continue
			}
			b.WriteByte('*')
			i = skipToSegment(path, i+1)
		case strings.HasPrefix(path[i:], "#key"):
			b.WriteString("#key")
			i += len("#key")
		case strings.HasPrefix(path[i:], "…"):
			b.WriteString("…")
			i += len("…")
		case identByte(c):
			j := i
			for j < len(path) && identByte(path[j]) {
				j++
			}
			if isPathWord(path[i:j]) {
				b.WriteString(path[i:j])
			} else {
				b.WriteByte('*')
			}
			i = j
		default:
			b.WriteByte('*')
			i = skipToSegment(path, i+1)
		}
	}
	return b.String()
}

// skipQuoted returns the position after the `"]` that ends the JSON string key whose contents
// start at i, or len(path) when the path was cut before it.
func skipQuoted(path string, i int) int {
	for i < len(path) {
		switch path[i] {
		case '\\':
			i += 2
		case '"':
			if i+1 < len(path) && path[i+1] == ']' {
				return i + 2
			}
			i++
		default:
			i++
		}
	}
	return len(path)
}

// skipToSegment returns the next position from i where a segment starts: '.', '[', '#' or
// the ellipsis.
func skipToSegment(path string, i int) int {
	for i < len(path) {
		switch {
		case path[i] == '.' || path[i] == '[' || path[i] == '#':
			return i
		case strings.HasPrefix(path[i:], "…"):
			return i
		}
		_, size := utf8.DecodeRuneInString(path[i:])
		i += size
	}
	return i
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isPathWord reports whether key is a member name of the APIs' vocabulary, compared as Gemini
// names are: case and underscores ignored.
func isPathWord(key string) bool {
	return pathWordSet[foldName(key)]
}

func foldName(s string) string {
	var buf [64]byte
	name, ok := foldKey(buf[:0], []byte(s))
	if !ok {
		return "" // longer than any name of the tables
	}
	return string(name)
}

// pathWords are the member names the walkers read, besides the table's Members and Inert
// (TestPathWordsCoverWalkers holds the list to the walkers' code).
var pathWords = []string{
	"annotations", "anthropic_version", "args", "arguments", "bytes", "cache_control", "call_id",
	"citations", "code", "codeExecutionResult", "connector_id", "content", "contents", "contentType",
	"context", "custom", "data", "description", "detail", "dimensions", "document", "document_name",
	"document_url", "documents",
	"encoding_format", "encrypted_content", "error", "executableCode", "file", "file_data",
	"file_id", "file_url", "fileData", "filename", "fileUri", "format", "function",
	"function_call", "functionCall", "functionDeclarations", "functionResponse", "functions",
	"generationConfig", "id", "image_url", "images", "index", "inlineData", "input",
	"input_audio", "input_schema", "instructions", "is_error", "items", "logprobs", "logs",
	"mcp_servers", "media_type", "mediaResolution", "messages", "mimeType", "name", "outcome",
	"output", "output_format", "outputs", "parameters", "parts", "prompt", "prompt_embeds",
	"properties", "query", "queries", "reasoning_content", "refusal", "response",
	"response_format", "responseJsonSchema", "responseSchema", "result", "results", "role",
	"scheduling", "schema", "server_url", "signature", "source", "sources", "status", "stdout", "stderr",
	"suffix", "summary", "system", "systemInstruction", "template", "text", "thinking",
	"thought", "thoughtSignature", "title", "tool_call_id", "tool_calls", "tool_name",
	"tool_use_id", "toolResult", "tools", "type", "url", "variables", "version",
	"videoMetadata", "willContinue",
}

var pathWordSet = func() map[string]bool {
	set := make(map[string]bool)
	add := func(names []string) {
		for _, n := range names {
			set[foldName(n)] = true
		}
	}
	add(pathWords)
	for _, info := range APIs {
		add(info.Members)
		add(info.Inert)
	}
	return set
}()
