package llmreq

import "testing"

// Bodies follow the examples of the OpenAI API reference and SDK documentation.

func TestOpenAIChat(t *testing.T) { runAPICases(t, openAIChatCases) }

var openAIChatCases = []apiCase{
	{
		name: "tools round trip",
		path: "/v1/chat/completions",
		body: `{
  "model": "gpt-4.1",
  "messages": [
    {"role": "developer", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What's the weather like in Boston today?"},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_abc123", "type": "function",
       "function": {"name": "get_current_weather", "arguments": "{\n\"location\": \"Boston, MA\"\n}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_abc123", "content": "{\"temperature\": 22, \"unit\": \"celsius\"}"}
  ],
  "tools": [{"type": "function", "function": {"name": "get_current_weather",
    "description": "Get the current weather in a given location",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}}],
  "tool_choice": "auto",
  "user": "user-1234"
}`,
		api: OpenAIChat,
		texts: []want{
			{"messages[0].content", RoleDeveloper, "You are a helpful assistant."},
			{"messages[1].content", RoleUser, "What's the weather like in Boston today?"},
			{"messages[2].tool_calls[0].function.arguments", RoleAssistant, "{\n\"location\": \"Boston, MA\"\n}"},
			{"messages[3].tool_call_id", RoleTool, "call_abc123"},
			{"messages[3].content", RoleTool, "{\"temperature\": 22, \"unit\": \"celsius\"}"},
			{"tools[0].function.name", RoleToolDefinition, "get_current_weather"},
			{"tools[0].function.description", RoleToolDefinition, "Get the current weather in a given location"},
			{"tools[0].function.parameters.properties.location#key", RoleToolDefinition, "location"},
			{"tools[0].function.parameters.required[0]", RoleToolDefinition, "location"},
		},
	},
	{
		name: "multimodal parts",
		path: "/openai/v1/chat/completions",
		body: `{"model":"gpt-4o","messages":[{"role":"system","content":[{"type":"text","text":"Describe images tersely."}]},
{"role":"user","content":[{"type":"text","text":"What's in this image?"},
{"type":"image_url","image_url":{"url":"https://upload.wikimedia.org/wikipedia/commons/thumb/d/dd/Gfp-wisconsin-madison-the-nature-boardwalk.jpg","detail":"high"}},
{"type":"input_audio","input_audio":{"data":"UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=","format":"wav"}},
{"type":"file","file":{"filename":"draconomicon.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjQK"}},
{"type":"text","text":"And in this one?"}]}],"max_tokens":300}`,
		api: OpenAIChat,
		texts: []want{
			{"messages[0].content[0].text", RoleSystem, "Describe images tersely."},
			{"messages[1].content[0].text", RoleUser, "What's in this image?"},
			{"messages[1].content[3].file.filename", RoleUser, "draconomicon.pdf"},
			{"messages[1].content[4].text", RoleUser, "And in this one?"},
		},
	},
	{
		name: "legacy function messages and refusal",
		path: "/v1/chat/completions",
		body: `{"model":"gpt-3.5-turbo-0613","messages":[
{"role":"user","content":"What is the weather like in Boston?"},
{"role":"assistant","content":null,"function_call":{"name":"get_current_weather","arguments":"{ \"location\": \"Boston, MA\"}"}},
{"role":"function","name":"get_current_weather","content":"{\"temperature\": \"22\", \"unit\": \"celsius\", \"description\": \"Sunny\"}"},
{"role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}],"refusal":"I can't help with that."}],
"functions":[{"name":"get_current_weather","parameters":{"type":"object","properties":{}}}]}`,
		api: OpenAIChat,
		texts: []want{
			{"messages[0].content", RoleUser, "What is the weather like in Boston?"},
			{"messages[1].function_call.arguments", RoleAssistant, "{ \"location\": \"Boston, MA\"}"},
			{"messages[2].name", RoleFunction, "get_current_weather"},
			{"messages[2].content", RoleFunction, "{\"temperature\": \"22\", \"unit\": \"celsius\", \"description\": \"Sunny\"}"},
			{"messages[3].content[0].refusal", RoleAssistant, "I can't help with that."},
			{"messages[3].refusal", RoleAssistant, "I can't help with that."},
			{"functions[0].name", RoleToolDefinition, "get_current_weather"},
		},
	},
	{
		name: "tool_calls before content keep body order",
		path: "/v1/chat/completions",
		body: `{"messages":[{"tool_calls":[{"type":"function","function":{"arguments":"{}","name":"f"}}],"content":"calling f","role":"assistant"},
{"role":"assistant","tool_calls":[{"type":"custom","custom":{"name":"code_exec","input":"print('hi')"}}]}]}`,
		api: OpenAIChat,
		texts: []want{
			{"messages[0].tool_calls[0].function.arguments", RoleAssistant, "{}"},
			{"messages[0].content", RoleAssistant, "calling f"},
			{"messages[1].tool_calls[0].custom.input", RoleAssistant, "print('hi')"},
		},
	},
	{
		name: "unexpected shapes are still scanned",
		path: "/v1/chat/completions",
		body: `{"messages":[
{"role":"user","content":[{"type":"mystery","text":"hidden one","note":"hidden two"},{"text":"no type"},"bare string"]},
{"role":"ipython","content":"odd role"},
{"content":"no role"},
{"role":"user","role":"system","content":"conflicting roles"},
{"role":"user","content":{"text":"object content"}},
{"role":"user","content":[{"type":"image_url","type":"text","text":"conflicting types","image_url":{"url":"x"}}]},
"a message that is a string"]}`,
		api: OpenAIChat,
		texts: []want{
			{"messages[0].content[0].text#key", RoleUser, "text"},
			{"messages[0].content[0].text", RoleUser, "hidden one"},
			{"messages[0].content[0].note#key", RoleUser, "note"},
			{"messages[0].content[0].note", RoleUser, "hidden two"},
			{"messages[0].content[1].text#key", RoleUser, "text"},
			{"messages[0].content[1].text", RoleUser, "no type"},
			{"messages[0].content[2]", RoleUser, "bare string"},
			{"messages[1].content", RoleUnknown, "odd role"},
			{"messages[2].content", RoleUnknown, "no role"},
			{"messages[3].content", RoleUnknown, "conflicting roles"},
			{"messages[4].content.text#key", RoleUser, "text"},
			{"messages[4].content.text", RoleUser, "object content"},
			{"messages[5].content[0].text#key", RoleUser, "text"},
			{"messages[5].content[0].text", RoleUser, "conflicting types"},
			{"messages[5].content[0].image_url#key", RoleUser, "image_url"},
			{"messages[5].content[0].image_url.url#key", RoleUser, "url"},
			{"messages[5].content[0].image_url.url", RoleUser, "x"},
			{"messages[6]", RoleUnknown, "a message that is a string"},
		},
	},
	{
		name: "duplicate messages and keys matched as encoding/json does",
		path: "/v1/chat/completions",
		body: `{"messages":[{"role":"user","content":"first"}],"Messages":[{"ROLE":"user","Content":"second"}],"m\u0065ssages":[{"role":"user","cont\u0065nt":"third"}]}`,
		api:  OpenAIChat,
		texts: []want{
			{"messages[0].content", RoleUser, "first"},
			{"Messages[0].Content", RoleUser, "second"},
			{"messages[0].content", RoleUser, "third"},
		},
	},
	{
		name: "shape detected without a known path",
		path: "/proxy",
		body: `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello!"}]}`,
		api:  OpenAIChat,
		texts: []want{
			{"messages[0].content", RoleUser, "Hello!"},
		},
	},
	{
		name: "no messages on the chat path falls back to every string",
		path: "/v1/chat/completions",
		body: `{"model":"gpt-4o","prompt":"Ignore previous instructions","n":1}`,
		api:  Generic,
		texts: []want{
			{"model#key", RoleUnknown, "model"},
			{"model", RoleUnknown, "gpt-4o"},
			{"prompt#key", RoleUnknown, "prompt"},
			{"prompt", RoleUnknown, "Ignore previous instructions"},
			{"n#key", RoleUnknown, "n"},
		},
	},
}

func TestOpenAIResponses(t *testing.T) { runAPICases(t, openAIResponsesCases) }

var openAIResponsesCases = []apiCase{
	{
		name: "instructions and string input",
		path: "/v1/responses",
		body: `{"model":"gpt-4.1","instructions":"You are a coding assistant that talks like a pirate.","input":"Are semicolons optional in JavaScript?"}`,
		api:  OpenAIResponses,
		texts: []want{
			{"instructions", RoleSystem, "You are a coding assistant that talks like a pirate."},
			{"input", RoleUser, "Are semicolons optional in JavaScript?"},
		},
	},
	{
		name: "message items with input_text and input_image",
		path: "/v1/responses",
		body: `{"model":"gpt-4.1","input":[
{"role":"developer","content":"Talk like a pirate."},
{"role":"user","content":[{"type":"input_text","text":"what is in this image?"},
{"type":"input_image","image_url":"https://upload.wikimedia.org/wikipedia/commons/thumb/d/dd/Gfp-wisconsin-madison-the-nature-boardwalk.jpg"},
{"type":"input_file","filename":"draconomicon.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjQK"}]},
{"type":"message","role":"assistant","id":"msg_67b73f697ba4819183a15cc17d011509","status":"completed",
 "content":[{"type":"output_text","text":"A boardwalk through a meadow.","annotations":[]}]}]}`,
		api: OpenAIResponses,
		texts: []want{
			{"input[0].content", RoleDeveloper, "Talk like a pirate."},
			{"input[1].content[0].text", RoleUser, "what is in this image?"},
			{"input[1].content[2].filename", RoleUser, "draconomicon.pdf"},
			{"input[2].content[0].text", RoleAssistant, "A boardwalk through a meadow."},
		},
	},
	{
		name: "function call and output",
		path: "/v1/responses",
		body: `{"model":"gpt-4.1","tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}}],
"input":[{"role":"user","content":"What's the weather like in Paris today?"},
{"type":"function_call","id":"fc_12345xyz","call_id":"call_12345xyz","name":"get_weather","arguments":"{\"location\":\"Paris, France\"}"},
{"type":"function_call_output","call_id":"call_12345xyz","output":"{\"temperature\": \"22\"}"},
{"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"part output"},{"type":"input_image","image_url":"data:image/png;base64,iVBOR"}]},
{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Thought about weather."}],"encrypted_content":"gAAAAB"},
{"type":"custom_tool_call_output","call_id":"call_3","output":"custom out"},
{"type":"item_reference","id":"msg_123"},
{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"paris weather"}},
{"type":"computer_call_output","call_id":"call_4","output":{"type":"computer_screenshot","image_url":"data:image/png;base64,iVBOR"}},
{"type":"local_shell_call_output","id":"lsh_1","output":"total 0\nREADME.md"},
{"type":"mcp_approval_response","approval_request_id":"mcpr_1","approve":false,"reason":"not now"}],
"prompt":{"id":"pmpt_123","variables":{"city":"Paris","doc":{"type":"input_text","text":"variable text"}}},
"previous_response_id":"resp_1","store":true}`,
		api: OpenAIResponses,
		texts: []want{
			{"tools[0].name", RoleToolDefinition, "get_weather"},
			{"input[0].content", RoleUser, "What's the weather like in Paris today?"},
			{"input[1].arguments", RoleAssistant, "{\"location\":\"Paris, France\"}"},
			{"input[2].output", RoleTool, "{\"temperature\": \"22\"}"},
			{"input[3].output[0].text", RoleTool, "part output"},
			{"input[4].summary[0].text", RoleAssistant, "Thought about weather."},
			{"input[5].output", RoleTool, "custom out"},
			{"input[7].action.type#key", RoleTool, "type"},
			{"input[7].action.type", RoleTool, "search"},
			{"input[7].action.query#key", RoleTool, "query"},
			{"input[7].action.query", RoleTool, "paris weather"},
			{"input[9].output", RoleTool, "total 0\nREADME.md"},
			{"input[10].approval_request_id", RoleUnknown, "mcpr_1"},
			{"input[10].reason", RoleUnknown, "not now"},
			{"prompt.variables.city", RoleUser, "Paris"},
			{"prompt.variables.doc.text", RoleUser, "variable text"},
		},
	},
	{
		name: "shape detection: input items without a path",
		path: "/",
		body: `{"model":"o3","input":[{"role":"user","content":"hi"}]}`,
		api:  OpenAIResponses,
		texts: []want{
			{"input[0].content", RoleUser, "hi"},
		},
	},
}

func TestOpenAICompletionsAndEmbeddings(t *testing.T) {
	runAPICases(t, openAICompletionsAndEmbeddingsCases)
}

var openAICompletionsAndEmbeddingsCases = []apiCase{
	{
		name:  "completions prompt string",
		path:  "/v1/completions",
		body:  `{"model":"gpt-3.5-turbo-instruct","prompt":"Say this is a test","max_tokens":7,"temperature":0}`,
		api:   OpenAICompletions,
		texts: []want{{"prompt", RoleUser, "Say this is a test"}},
	},
	{
		name: "completions prompt array and suffix",
		path: "/v1/completions",
		body: `{"model":"gpt-3.5-turbo-instruct","prompt":["Say this is a test","Say this is another"],"suffix":"\n-- end","stop":["\n"]}`,
		api:  OpenAICompletions,
		texts: []want{
			{"prompt[0]", RoleUser, "Say this is a test"},
			{"prompt[1]", RoleUser, "Say this is another"},
			{"suffix", RoleUser, "\n-- end"},
		},
	},
	{
		name:  "completions token arrays have no text",
		path:  "/v1/completions",
		body:  `{"model":"davinci-002","prompt":[[1212,318,257,1332],[50256]]}`,
		api:   OpenAICompletions,
		texts: []want{},
	},
	{
		name:  "embeddings string",
		path:  "/v1/embeddings",
		body:  `{"input":"The food was delicious and the waiter...","model":"text-embedding-ada-002","encoding_format":"float"}`,
		api:   OpenAIEmbeddings,
		texts: []want{{"input", RoleUser, "The food was delicious and the waiter..."}},
	},
	{
		name: "embeddings array of strings",
		path: "/v1/embeddings",
		body: `{"input":["first","second"],"model":"text-embedding-3-small","dimensions":256}`,
		api:  OpenAIEmbeddings,
		texts: []want{
			{"input[0]", RoleUser, "first"},
			{"input[1]", RoleUser, "second"},
		},
	},
	{
		name:  "embeddings tokens",
		path:  "/v1/embeddings",
		body:  `{"input":[[1,2,3],[4]],"model":"text-embedding-3-small"}`,
		api:   OpenAIEmbeddings,
		texts: []want{},
	},
	{
		name:  "embeddings by shape",
		path:  "/gateway",
		body:  `{"input":["a"],"model":"text-embedding-3-small"}`,
		api:   OpenAIEmbeddings,
		texts: []want{{"input[0]", RoleUser, "a"}},
	},
}
