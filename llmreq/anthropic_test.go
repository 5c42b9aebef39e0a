package llmreq

import "testing"

// Bodies follow the examples of Anthropic's Messages API documentation.

func TestAnthropicMessages(t *testing.T) { runAPICases(t, anthropicMessagesCases) }

var anthropicMessagesCases = []apiCase{
	{
		name: "system blocks with cache control",
		path: "/v1/messages",
		body: `{
  "model": "claude-sonnet-4-5",
  "max_tokens": 1024,
  "system": [
    {"type": "text", "text": "You are an AI assistant tasked with analyzing literary works."},
    {"type": "text", "text": "<the entire contents of Pride and Prejudice>", "cache_control": {"type": "ephemeral"}}
  ],
  "messages": [{"role": "user", "content": "Analyze the major themes in Pride and Prejudice."}]
}`,
		api: AnthropicMessages,
		texts: []want{
			{"system[0].text", RoleSystem, "You are an AI assistant tasked with analyzing literary works."},
			{"system[1].text", RoleSystem, "<the entire contents of Pride and Prejudice>"},
			{"messages[0].content", RoleUser, "Analyze the major themes in Pride and Prejudice."},
		},
	},
	{
		name: "tool_use and tool_result",
		path: "/v1/messages",
		body: `{"model":"claude-opus-4-1","max_tokens":1024,"system":"Be brief.",
"tools":[{"name":"get_weather","description":"Get the current weather in a given location","input_schema":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}],
"messages":[{"role":"user","content":"What is the weather like in San Francisco?"},
{"role":"assistant","content":[{"type":"text","text":"<thinking>I need to use get_weather.</thinking>"},
 {"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9","name":"get_weather","input":{"location":"San Francisco, CA","unit":"celsius","days":3}}]},
{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01A09q90qw90lq917835lq9","content":"15 degrees"},
 {"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"It is sunny."},{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/4AAQSkZJRg=="}}],"is_error":false},
 {"type":"text","text":"Thanks, what next?"}]}]}`,
		api: AnthropicMessages,
		texts: []want{
			{"system", RoleSystem, "Be brief."},
			{"tools[0].name", RoleToolDefinition, "get_weather"},
			{"tools[0].description", RoleToolDefinition, "Get the current weather in a given location"},
			{"tools[0].input_schema.properties.location#key", RoleToolDefinition, "location"},
			{"tools[0].input_schema.required[0]", RoleToolDefinition, "location"},
			{"messages[0].content", RoleUser, "What is the weather like in San Francisco?"},
			{"messages[1].content[0].text", RoleAssistant, "<thinking>I need to use get_weather.</thinking>"},
			{"messages[1].content[1].input.location#key", RoleAssistant, "location"},
			{"messages[1].content[1].input.location", RoleAssistant, "San Francisco, CA"},
			{"messages[1].content[1].input.unit#key", RoleAssistant, "unit"},
			{"messages[1].content[1].input.unit", RoleAssistant, "celsius"},
			{"messages[1].content[1].input.days#key", RoleAssistant, "days"},
			{"messages[2].content[0].tool_use_id", RoleUser, "toolu_01A09q90qw90lq917835lq9"},
			{"messages[2].content[0].content", RoleTool, "15 degrees"},
			{"messages[2].content[1].tool_use_id", RoleUser, "toolu_2"},
			{"messages[2].content[1].content[0].text", RoleTool, "It is sunny."},
			{"messages[2].content[2].text", RoleUser, "Thanks, what next?"},
		},
	},
	{
		name: "documents, images, thinking",
		path: "/anthropic/v1/messages",
		body: `{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":[
{"type":"document","source":{"type":"text","media_type":"text/plain","data":"The grass is green. The sky is blue."},"title":"My Document","context":"This is a trustworthy document.","citations":{"enabled":true}},
{"type":"document","source":{"type":"content","content":[{"type":"text","text":"First chunk"},{"type":"text","text":"Second chunk"}]},"title":"Document Title"},
{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjcKCjEgMCBvYmo="}},
{"type":"document","source":{"type":"url","url":"https://assets.anthropic.com/m/1cd9d098ac3e6467/original/Claude-3-Model-Card-October-Addendum.pdf"}},
{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/4AAQSkZJRgABAQ=="}},
{"type":"image","source":{"type":"url","url":"https://upload.wikimedia.org/wikipedia/commons/a/a7/Camponotus_flavomarginatus_ant.jpg"}},
{"type":"text","text":"What color is the grass and sky?","cache_control":{"type":"ephemeral"}}]},
{"role":"assistant","content":[{"type":"thinking","thinking":"Let me look at the document.","signature":"EqQBCgIYAhIM"},{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}]}]}`,
		api: AnthropicMessages,
		texts: []want{
			{"messages[0].content[0].source.data", RoleUser, "The grass is green. The sky is blue."},
			{"messages[0].content[0].title", RoleUser, "My Document"},
			{"messages[0].content[0].context", RoleUser, "This is a trustworthy document."},
			{"messages[0].content[1].source.content[0].text", RoleUser, "First chunk"},
			{"messages[0].content[1].source.content[1].text", RoleUser, "Second chunk"},
			{"messages[0].content[1].title", RoleUser, "Document Title"},
			{"messages[0].content[6].text", RoleUser, "What color is the grass and sky?"},
			{"messages[1].content[0].thinking", RoleAssistant, "Let me look at the document."},
		},
	},
	{
		name: "server tool results and unknown blocks",
		path: "/v1/messages",
		body: `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[
{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"claude shannon birth date"}},
{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://en.wikipedia.org/wiki/Claude_Shannon","title":"Claude Shannon - Wikipedia","encrypted_content":"EqgfCioIARgBIiQ3YTA","page_age":"April 30, 2025"}]}]},
{"role":"user","content":[{"type":"search_result","source":"https://example.com/a","title":"Result","content":[{"type":"text","text":"found text"}]},
{"type":"future_block","payload":{"words":"new kind of text"}}]}]}`,
		api: AnthropicMessages,
		texts: []want{
			{"messages[0].content[0].input.query#key", RoleAssistant, "query"},
			{"messages[0].content[0].input.query", RoleAssistant, "claude shannon birth date"},
			{"messages[0].content[1].tool_use_id", RoleAssistant, "srvtoolu_1"},
			{"messages[0].content[1].content[0].url#key", RoleTool, "url"},
			{"messages[0].content[1].content[0].url", RoleTool, "https://en.wikipedia.org/wiki/Claude_Shannon"},
			{"messages[0].content[1].content[0].title#key", RoleTool, "title"},
			{"messages[0].content[1].content[0].title", RoleTool, "Claude Shannon - Wikipedia"},
			{"messages[0].content[1].content[0].encrypted_content#key", RoleTool, "encrypted_content"},
			{"messages[0].content[1].content[0].encrypted_content", RoleTool, "EqgfCioIARgBIiQ3YTA"},
			{"messages[0].content[1].content[0].page_age#key", RoleTool, "page_age"},
			{"messages[0].content[1].content[0].page_age", RoleTool, "April 30, 2025"},
			{"messages[1].content[0].source", RoleUser, "https://example.com/a"},
			{"messages[1].content[0].title", RoleUser, "Result"},
			{"messages[1].content[0].content[0].text", RoleUser, "found text"},
			{"messages[1].content[1].payload#key", RoleUser, "payload"},
			{"messages[1].content[1].payload.words#key", RoleUser, "words"},
			{"messages[1].content[1].payload.words", RoleUser, "new kind of text"},
		},
	},
	{
		name: "Bedrock body detected by shape",
		path: "/model/anthropic.claude-3-5-sonnet-20240620-v1:0/invoke",
		body: `{"anthropic_version":"bedrock-2023-05-31","max_tokens":512,"messages":[{"role":"user","content":[{"type":"text","text":"Hello, Claude"}]}]}`,
		api:  AnthropicMessages,
		texts: []want{
			{"messages[0].content[0].text", RoleUser, "Hello, Claude"},
		},
	},
	{
		name: "count_tokens endpoint",
		path: "/v1/messages/count_tokens",
		body: `{"model":"claude-sonnet-4-5","system":"You are a scientist","messages":[{"role":"user","content":"Hello, Claude"}]}`,
		api:  AnthropicMessages,
		texts: []want{
			{"system", RoleSystem, "You are a scientist"},
			{"messages[0].content", RoleUser, "Hello, Claude"},
		},
	},
	{
		name: "an Assistants thread message is not Messages shaped",
		path: "/v1/threads/thread_abc123/messages",
		body: `{"role":"user","content":"How does AI work? Explain it in simple terms."}`,
		api:  Generic,
		texts: []want{
			{"role#key", RoleUnknown, "role"},
			{"role", RoleUnknown, "user"},
			{"content#key", RoleUnknown, "content"},
			{"content", RoleUnknown, "How does AI work? Explain it in simple terms."},
		},
	},
}
