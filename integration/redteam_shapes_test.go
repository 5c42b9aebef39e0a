package integration

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
)

// Request builders for the red-team cases. Bodies are marshalled without
// HTML escaping so that a case's bytes are what its comment says.

type obj = map[string]any

func rtJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func rtBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func rtUser(content any) obj { return obj{"role": "user", "content": content} }

func chatBody(msgs ...any) []byte {
	return rtJSON(obj{"model": "gpt-4o", "messages": msgs})
}

func responsesBody(items ...any) []byte {
	return rtJSON(obj{"model": "gpt-4o", "input": items})
}

func anthropicBody(msgs ...any) []byte {
	return rtJSON(obj{"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": msgs})
}

func geminiBody(parts ...any) []byte {
	return rtJSON(obj{"contents": []any{obj{"role": "user", "parts": parts}}})
}

const (
	chatPath      = "/v1/chat/completions"
	responsesPath = "/v1/responses"
	anthropicPath = "/v1/messages"
	geminiPath    = "/v1beta/models/gemini-2.5-flash:generateContent"
)

// rtShapeCases: the Caddyfile shapes, and request members that a walker
// of the known APIs drops.
func rtShapeCases() []rtCase {
	P := rtPayload
	chat := chatBody(rtUser(P))
	askWeather := rtUser("What's the weather in Paris?")
	toolUse := obj{"role": "assistant", "content": []any{obj{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": obj{"city": "Paris"}}}}
	return []rtCase{
		// Caddyfile order: the firewall at site level must run before
		// whichever subroute proxies.
		{name: "CaddyfileOrder/handle", site: "handle", path: chatPath, body: chat},
		{name: "CaddyfileOrder/handle_path", site: "handle_path", path: "/openai" + chatPath, body: chat},
		{name: "CaddyfileOrder/route", site: "route", path: chatPath, body: chat},
		{name: "CaddyfileOrder/inside_handle", site: "inside_handle", path: chatPath, body: chat},

		// Root members and part or item types a walker does not know.
		{name: "UnknownMember/chat_documents", path: chatPath, body: rtJSON(obj{"model": "m",
			"messages": []any{rtUser("Summarize the documents.")}, "documents": []any{obj{"title": "notes", "text": P}}})},
		{name: "UnknownMember/chat_template_kwargs", path: chatPath, body: rtJSON(obj{"model": "m",
			"messages": []any{rtUser("Hello")}, "chat_template_kwargs": obj{"system_note": P}})},
		{name: "UnknownType/chat_part", path: chatPath, body: chatBody(rtUser([]any{obj{"type": "document_text", "text": P}}))},
		{name: "UnknownType/responses_item", path: responsesPath, body: responsesBody(
			obj{"type": "retrieved_context", "id": "rc_1", "text": P}, rtUser("Go on."))},
		{name: "UnknownType/responses_custom_tool_call_output", path: responsesPath, body: responsesBody(
			obj{"type": "custom_tool_call", "call_id": "c1", "name": "grep", "input": "x"},
			obj{"type": "custom_tool_call_output", "call_id": "c1", "output": P})},
		{name: "UnknownType/anthropic_block", path: anthropicPath, body: anthropicBody(rtUser([]any{obj{"type": "search_result",
			"source": "https://example.com", "title": "notes", "content": []any{obj{"type": "text", "text": P}}}}))},

		{name: "UnknownMember/anthropic_document_context", path: anthropicPath, body: anthropicBody(rtUser([]any{
			obj{"type": "document", "source": obj{"type": "text", "media_type": "text/plain", "data": "Rivers of France."},
				"title": "notes", "context": P}, obj{"type": "text", "text": "Summarize."}}))},
		{name: "UnknownMember/completions_suffix", path: "/v1/completions", body: rtJSON(obj{"model": "m", "prompt": "def f():", "suffix": P})},
		{name: "UnknownMember/ollama_suffix", path: "/api/generate", body: rtJSON(obj{"model": "codellama", "prompt": "def f():", "suffix": P})},

		// Object keys: a tool result the model reads whole, keys too.
		{name: "ObjectKey/gemini_functionResponse", path: geminiPath, body: rtJSON(obj{"contents": []any{
			obj{"role": "user", "parts": []any{obj{"text": "Look it up."}}},
			obj{"role": "model", "parts": []any{obj{"functionCall": obj{"name": "lookup", "args": obj{}}}}},
			obj{"role": "user", "parts": []any{obj{"functionResponse": obj{"name": "lookup", "response": obj{P: "ok"}}}}}}})},
		{name: "ObjectKey/bedrock_toolResult_json", path: "/model/anthropic.claude-sonnet-4-5/converse", body: rtJSON(obj{"messages": []any{
			obj{"role": "user", "content": []any{obj{"text": "Look it up."}}},
			obj{"role": "user", "content": []any{obj{"toolResult": obj{"toolUseId": "t1", "content": []any{obj{"json": obj{P: true}}}}}}}}})},
		{name: "ObjectKey/bedrock_toolResult_json_value", path: "/model/anthropic.claude-sonnet-4-5/converse", body: rtJSON(obj{"messages": []any{
			obj{"role": "user", "content": []any{obj{"toolResult": obj{"toolUseId": "t1", "content": []any{obj{"json": obj{"note": P}}}}}}}}})},

		// Tool output inside call items and server-tool results.
		{name: "ToolOutput/responses_file_search_call", path: responsesPath, body: responsesBody(rtUser("Search my files."),
			obj{"type": "file_search_call", "id": "fs_1", "status": "completed", "queries": []any{"notes"},
				"results": []any{obj{"file_id": "file_1", "filename": "notes.txt", "score": 0.9, "text": P}}})},
		{name: "ToolOutput/responses_code_interpreter_call", path: responsesPath, body: responsesBody(rtUser("Run it."),
			obj{"type": "code_interpreter_call", "id": "ci_1", "status": "completed", "code": "print(open('a').read())",
				"container_id": "cntr_1", "outputs": []any{obj{"type": "logs", "logs": P}}})},
		{name: "ToolOutput/responses_mcp_call_output", path: responsesPath, body: responsesBody(rtUser("Fetch it."),
			obj{"type": "mcp_call", "id": "mcp_1", "server_label": "web", "name": "fetch", "arguments": "{}", "output": P})},
		{name: "ToolOutput/responses_mcp_call_error", path: responsesPath, body: responsesBody(rtUser("Fetch it."),
			obj{"type": "mcp_call", "id": "mcp_1", "server_label": "web", "name": "fetch", "arguments": "{}", "error": P})},
		{name: "ToolOutput/responses_web_search_call", path: responsesPath, body: responsesBody(rtUser("Search."),
			obj{"type": "web_search_call", "id": "ws_1", "status": "completed",
				"action": obj{"type": "search", "query": P, "sources": []any{obj{"type": "url", "url": "https://example.com"}}}})},
		{name: "ToolOutput/gemini_functionResponse_parts", path: geminiPath, body: rtJSON(obj{"contents": []any{
			obj{"role": "user", "parts": []any{obj{"functionResponse": obj{"name": "lookup", "response": obj{"ok": true},
				"parts": []any{obj{"text": P}}}}}}}})},
		{name: "ToolOutput/anthropic_web_fetch_tool_result", path: anthropicPath, body: anthropicBody(rtUser("Fetch example.com."),
			obj{"role": "assistant", "content": []any{
				obj{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_fetch", "input": obj{"url": "https://example.com"}},
				obj{"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_1", "content": obj{"type": "web_fetch_result",
					"url": "https://example.com", "content": obj{"type": "document",
						"source": obj{"type": "text", "media_type": "text/plain", "data": P}}}}}})},
		{name: "ToolOutput/anthropic_code_execution_tool_result", path: anthropicPath, body: anthropicBody(rtUser("Run it."),
			obj{"role": "assistant", "content": []any{
				obj{"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution", "input": obj{"code": "cat a"}},
				obj{"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_1",
					"content": obj{"type": "code_execution_result", "stdout": P, "stderr": "", "return_code": 0}}}})},
		{name: "ToolOutput/anthropic_mcp_tool_result", path: anthropicPath, body: anthropicBody(rtUser("Fetch it."),
			obj{"role": "assistant", "content": []any{
				obj{"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "fetch", "server_name": "web", "input": obj{}},
				obj{"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "is_error": false,
					"content": []any{obj{"type": "text", "text": P}}}}})},
		{name: "ToolOutput/anthropic_tool_result_then_text", path: anthropicPath, body: anthropicBody(askWeather, toolUse,
			rtUser([]any{obj{"type": "tool_result", "tool_use_id": "toolu_1", "content": []any{obj{"type": "text", "text": P}}}}))},

		// A path that names one API, a body that also carries another's.
		{name: "MixedAPI/completions_with_messages", path: "/v1/completions", body: rtJSON(obj{"model": "m",
			"prompt": "Hello", "messages": []any{rtUser(P)}})},
		{name: "MixedAPI/chat_with_prompt", path: chatPath, body: rtJSON(obj{"model": "m",
			"messages": []any{rtUser("Hello")}, "prompt": P})},

		// Tool definitions: poisoned descriptions, scanned by default.
		{name: "ToolDefinition/chat_description", path: chatPath, body: rtJSON(obj{"model": "gpt-4o", "messages": []any{rtUser("Weather?")},
			"tools": []any{obj{"type": "function", "function": obj{"name": "get_weather", "description": P,
				"parameters": obj{"type": "object", "properties": obj{"city": obj{"type": "string"}}}}}}})},
		{name: "ToolDefinition/chat_parameter_description", path: chatPath, body: rtJSON(obj{"model": "gpt-4o", "messages": []any{rtUser("Weather?")},
			"tools": []any{obj{"type": "function", "function": obj{"name": "get_weather", "description": "Weather.",
				"parameters": obj{"type": "object", "properties": obj{"city": obj{"type": "string", "description": P}}}}}}})},
		{name: "ToolDefinition/responses_description", path: responsesPath, body: rtJSON(obj{"model": "gpt-4o", "input": "Weather?",
			"tools": []any{obj{"type": "function", "name": "get_weather", "description": P, "parameters": obj{"type": "object"}}}})},
		{name: "ToolDefinition/anthropic_description", path: anthropicPath, body: rtJSON(obj{"model": "claude-sonnet-4-5", "max_tokens": 64,
			"messages": []any{rtUser("Weather?")}, "tools": []any{obj{"name": "get_weather", "description": P,
				"input_schema": obj{"type": "object"}}}})},
		{name: "ToolDefinition/ollama_tools", path: "/api/chat", body: rtJSON(obj{"model": "llama3", "messages": []any{rtUser("Weather?")},
			"tools": []any{obj{"type": "function", "function": obj{"name": "get_weather", "description": P}}}})},
		{name: "ToolDefinition/gemini_functionDeclarations", path: geminiPath, body: rtJSON(obj{
			"contents": []any{obj{"role": "user", "parts": []any{obj{"text": "Weather?"}}}},
			"tools":    []any{obj{"functionDeclarations": []any{obj{"name": "get_weather", "description": P}}}}})},

		// One message's text parts are read joined.
		{name: "SplitParts/openai_content_parts", path: chatPath, payload: rtSplitA + rtSplitB, body: chatBody(rtUser([]any{
			obj{"type": "text", "text": rtSplitA}, obj{"type": "text", "text": rtSplitB}}))},
		{name: "SplitParts/anthropic_text_blocks", path: anthropicPath, payload: rtSplitA + rtSplitB, body: anthropicBody(rtUser([]any{
			obj{"type": "text", "text": rtSplitA}, obj{"type": "text", "text": rtSplitB}}))},
		{name: "SplitParts/gemini_parts", path: geminiPath, payload: rtSplitA + rtSplitB, body: geminiBody(
			obj{"text": rtSplitA}, obj{"text": rtSplitB})},
		{name: "SplitParts/responses_input_text", path: responsesPath, payload: rtSplitA + rtSplitB, body: responsesBody(rtUser([]any{
			obj{"type": "input_text", "text": rtSplitA}, obj{"type": "input_text", "text": rtSplitB}}))},
		{name: "SplitParts/sanitize_openai_content_parts", site: "sanitize", path: chatPath, payload: rtSplitA + rtSplitB,
			body: chatBody(rtUser([]any{obj{"type": "text", "text": rtSplitA}, obj{"type": "text", "text": rtSplitB}}))},
	}
}
