package llmresp

// Transcripts written from the providers' documented wire formats (OpenAI's streaming guide and
// API reference, Anthropic's streaming messages page, Gemini's REST reference, Ollama's API.md),
// with the members the real servers add (usage, ids, logprobs, sequence numbers, signatures).

type transcript struct {
	name   string
	api    API
	ctype  string
	body   string
	pieces []string // "channel|kind|text", "+" before the channel for Whole
	done   int      // [DONE] events
	errors int      // upstream error events
}

var transcripts = []transcript{
	{name: "openai chat stream", api: OpenAIChat, ctype: "text/event-stream; charset=utf-8", done: 1,
		body: `data: {"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":" wor\"ld \u00e9\ud83d\ude00\n"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_DdmO9","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"location\":\"Paris\"}"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-08-06","choices":[{"index":1,"delta":{"refusal":"I can't","reasoning_content":"hm"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}

data: [DONE]

`,
		pieces: []string{
			"choices[0].content|text|",
			"choices[0].content|text|Hello",
			"choices[0].content|text| wor\"ld é😀\n",
			"choices[0].tool_calls[0].name|tool_name|get_weather",
			"choices[0].tool_calls[0].arguments|tool_args|",
			`choices[0].tool_calls[0].arguments|tool_args|{"location":"Paris"}`,
			"choices[1].refusal|refusal|I can't",
			"choices[1].reasoning|reasoning|hm",
		}},
	{name: "openai chat whole", api: OpenAIChat, ctype: "application/json",
		body: `{
  "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
  "object": "chat.completion",
  "created": 1741569952,
  "model": "gpt-4.1-2025-04-14",
  "choices": [
    {
      "index": 0,
      "message": {
        "role": "assistant",
        "content": "See ![chart](https://collect.example/p?d=x)",
        "refusal": null,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}],
        "annotations": []
      },
      "logprobs": null,
      "finish_reason": "stop"
    }
  ],
  "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29}
}
`,
		pieces: []string{
			"choices[0].content|text|See ![chart](https://collect.example/p?d=x)",
			"choices[0].tool_calls[0].name|tool_name|f",
			`choices[0].tool_calls[0].arguments|tool_args|{"a":1}`,
		}},
	{name: "openai completions stream", api: OpenAICompletions, ctype: "text/event-stream", done: 1,
		body:   "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"text\":\"Once\",\"index\":0,\"logprobs\":null,\"finish_reason\":null}]}\n\ndata: [DONE]\n\n",
		pieces: []string{"choices[0].text|text|Once"}},
	{name: "openai responses stream", api: OpenAIResponses, ctype: "text/event-stream",
		body: `event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1741290958,"status":"in_progress","output":[],"usage":null}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}

event: response.content_part.added
data: {"type":"response.content_part.added","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi","logprobs":[]}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":" there","logprobs":[]}

event: response.output_text.done
data: {"type":"response.output_text.done","sequence_number":5,"item_id":"msg_1","output_index":0,"content_index":0,"text":"Hi there","logprobs":[]}

event: response.content_part.done
data: {"type":"response.content_part.done","sequence_number":6,"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"Hi there","annotations":[]}}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":7,"output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi there","annotations":[]}]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":8,"output_index":1,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"get_weather"}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":9,"item_id":"fc_1","output_index":1,"delta":"{\"city\":"}

event: response.function_call_arguments.done
data: {"type":"response.function_call_arguments.done","sequence_number":10,"item_id":"fc_1","output_index":1,"arguments":"{\"city\":"}

event: response.refusal.delta
data: {"type":"response.refusal.delta","sequence_number":11,"item_id":"msg_2","output_index":2,"content_index":0,"delta":"No"}

event: response.reasoning_summary_text.delta
data: {"type":"response.reasoning_summary_text.delta","sequence_number":12,"item_id":"rs_1","output_index":3,"summary_index":1,"delta":"think"}

event: response.completed
data: {"type":"response.completed","sequence_number":13,"response":{"id":"resp_1","object":"response","status":"completed","output":[{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi there","annotations":[]}]},{"id":"fc_1","type":"function_call","arguments":"{\"city\":","call_id":"call_1","name":"get_weather"},{"id":"msg_2","type":"message","content":[{"type":"refusal","refusal":"No"}]},{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"think"}]}],"usage":{"input_tokens":5,"output_tokens":7,"total_tokens":12}}}

`,
		pieces: []string{
			"+output[0].content[0]|text|",
			"output[0].content[0]|text|Hi",
			"output[0].content[0]|text| there",
			"+output[0].content[0]|text|Hi there",
			"+output[0].content[0]|text|Hi there",
			"+output[0].content[0]|text|Hi there",
			"+output[1].arguments|tool_args|",
			"+output[1].name|tool_name|get_weather",
			`output[1].arguments|tool_args|{"city":`,
			`+output[1].arguments|tool_args|{"city":`,
			"output[2].content[0]|refusal|No",
			"output[3].summary[1]|reasoning|think",
			"+output[0].content[0]|text|Hi there",
			`+output[1].arguments|tool_args|{"city":`,
			"+output[1].name|tool_name|get_weather",
			"+output[2].content[0]|refusal|No",
			"+output[3].summary[0]|reasoning|a",
			"+output[3].summary[1]|reasoning|think",
		}},
	{name: "openai responses code and audio", api: OpenAIResponses, ctype: "text/event-stream",
		body: "event: response.code_interpreter_call_code.delta\ndata: {\"type\":\"response.code_interpreter_call_code.delta\",\"output_index\":4,\"item_id\":\"ci_1\",\"delta\":\"print(\",\"sequence_number\":9}\n\n" +
			"event: response.audio.transcript.delta\ndata: {\"type\":\"response.audio.transcript.delta\",\"delta\":\"Hel\",\"sequence_number\":10}\n\n" +
			"event: response.web_search_call.searching\ndata: {\"type\":\"response.web_search_call.searching\",\"output_index\":5,\"item_id\":\"ws_1\",\"sequence_number\":11}\n\n",
		pieces: []string{"output[4].arguments|tool_args|print(", "audio.transcript|text|Hel"}},
	{name: "openai responses hosted tools and types to come", api: OpenAIResponses, ctype: "text/event-stream",
		body: `event: response.output_text.annotation.added
data: {"type":"response.output_text.annotation.added","item_id":"msg_1","output_index":0,"content_index":0,"annotation_index":0,"annotation":{"type":"url_citation","start_index":0,"end_index":4,"url":"https://collect.example/p?d=1","title":"T"},"sequence_number":3}

event: response.image_generation_call.partial_image
data: {"type":"response.image_generation_call.partial_image","output_index":0,"item_id":"ig_1","sequence_number":4,"partial_image_index":0,"partial_image_b64":"iVBORw0KGgo="}

event: response.future_thing.delta
data: {"type":"response.future_thing.delta","item_id":"x_1","output_index":0,"delta":"new text","nested":[{"k":"v"}],"sequence_number":5}

`,
		pieces: []string{
			"event.response.output_text.annotation.added|text|https://collect.example/p?d=1",
			"event.response.output_text.annotation.added|text|T",
			"event.response.future_thing.delta|text|new text",
			"event.response.future_thing.delta|text|v",
		}},
	{name: "openai responses whole", api: OpenAIResponses, ctype: "application/json",
		body: `{"id":"resp_2","object":"response","status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[]},{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Done.","annotations":[]}]},{"type":"custom_tool_call","id":"ctc_1","call_id":"c1","name":"code_exec","input":"print(1)"}],"usage":{"input_tokens":1,"output_tokens":2}}`,
		pieces: []string{
			"+output[1].content[0]|text|Done.",
			"+output[2].name|tool_name|code_exec",
			"+output[2].arguments|tool_args|print(1)",
		}},
	{name: "anthropic stream", api: AnthropicMessages, ctype: "text/event-stream; charset=utf-8",
		body: `event: message_start
data: {"type":"message_start","message":{"id":"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY","type":"message","role":"assistant","content":[],"model":"claude-opus-4-1","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hello"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"!\u2028"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"location\": \"San Fra"}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}

event: message_stop
data: {"type":"message_stop"}

`,
		pieces: []string{
			"content[0]|reasoning|",
			"content[0]|reasoning|Let me",
			"content[1]|text|",
			"content[1]|text|Hello",
			"content[1]|text|!\u2028",
			"content[2].name|tool_name|get_weather",
			"content[2].start|tool_args|{}",
			"content[2]|tool_args|",
			`content[2]|tool_args|{"location": "San Fra`,
		}},
	{name: "anthropic citations and types to come", api: AnthropicMessages, ctype: "text/event-stream",
		body: "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"citations_delta\",\"citation\":{\"type\":\"char_location\",\"cited_text\":\"The grass is green.\",\"document_index\":0,\"document_title\":\"Doc\",\"start_char_index\":0,\"end_char_index\":20}}}\n\n" +
			"event: future_event\ndata: {\"type\":\"future_event\",\"id\":\"x\",\"body\":\"words\"}\n\n",
		pieces: []string{
			"content[0].citations_delta|text|The grass is green.",
			"content[0].citations_delta|text|Doc",
			"event.future_event|text|words",
		}},
	{name: "anthropic whole", api: AnthropicMessages, ctype: "application/json",
		body: `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hi!"},{"type":"tool_use","id":"toolu_1","name":"search","input":{"q":"x","n":2}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":2095,"output_tokens":503}}`,
		pieces: []string{
			"content[0]|text|Hi!",
			"content[1].name|tool_name|search",
			`content[1]|tool_args|{"q":"x","n":2}`,
		}},
	{name: "anthropic stream error", api: AnthropicMessages, ctype: "text/event-stream", errors: 1,
		body: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\nevent: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n"},
	{name: "gemini sse", api: Gemini, ctype: "text/event-stream",
		body: "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"The\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 8,\"totalTokenCount\": 8},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"r1\"}\r\n\r\n" +
			"data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"thinking\",\"thought\": true},{\"text\": \" sky\"},{\"functionCall\": {\"name\": \"lookup\",\"args\": {\"q\": \"blue\"}}}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 8,\"candidatesTokenCount\": 3,\"totalTokenCount\": 11}}\r\n\r\n",
		pieces: []string{
			"candidates[0].text|text|The",
			"candidates[0].thought|reasoning|thinking",
			"candidates[0].text|text| sky",
			"candidates[0].functionCall.name|tool_name|lookup",
			`candidates[0].functionCall.args|tool_args|{"q": "blue"}`,
		}},
	{name: "gemini json array", api: Gemini, ctype: "application/json; charset=UTF-8",
		body: "[{\n  \"candidates\": [\n    {\n      \"content\": {\n        \"parts\": [\n          {\n            \"text\": \"Hel\"\n          }\n        ],\n        \"role\": \"model\"\n      },\n      \"index\": 0\n    }\n  ]\n}\n,\r\n{\n  \"candidates\": [{\"content\": {\"parts\": [{\"text\": \"lo ]}\\\"\"}, {\"executableCode\": {\"language\": \"PYTHON\", \"code\": \"print(1)\"}}],\"role\": \"model\"},\"finishReason\": \"STOP\"}],\n  \"usageMetadata\": {\"promptTokenCount\": 2}\n}\n]",
		pieces: []string{
			"candidates[0].text|text|Hel",
			`candidates[0].text|text|lo ]}"`,
			"candidates[0].code|tool_args|print(1)",
		}},
	{name: "gemini whole", api: Gemini, ctype: "application/json",
		body: `{"candidates":[{"content":{"parts":[{"text":"A"},{"text":"B"}],"role":"model"},"finishReason":"STOP","index":0},{"content":{"parts":[{"text":"C"}]},"index":1}],"usageMetadata":{"promptTokenCount":4}}`,
		pieces: []string{
			"candidates[0].text|text|A",
			"candidates[0].text|text|B",
			"candidates[1].text|text|C",
		}},
	{name: "ollama chat ndjson", api: OllamaChat, ctype: "application/x-ndjson",
		body: `{"model":"llama3.2","created_at":"2023-08-04T08:52:19.385406455-07:00","message":{"role":"assistant","content":"The","images":null},"done":false}
{"model":"llama3.2","created_at":"2023-08-04T08:52:19.385406455-07:00","message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}
{"model":"llama3.2","created_at":"2023-08-04T08:52:19.385406455-07:00","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Tokyo"}}}]},"done":false}
{"model":"llama3.2","created_at":"2023-08-04T19:22:45.499127Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":4883583458,"load_duration":1334875,"prompt_eval_count":26,"prompt_eval_duration":342546000,"eval_count":282,"eval_duration":4535599000}
`,
		pieces: []string{
			"message.content|text|The",
			"message.content|text|",
			"message.thinking|reasoning|hmm",
			"message.content|text|",
			"message.tool_calls[0].name|tool_name|get_weather",
			`message.tool_calls[0].arguments|tool_args|{"city":"Tokyo"}`,
			"message.content|text|",
		}},
	{name: "ollama generate ndjson", api: OllamaGenerate, ctype: "application/x-ndjson",
		body:   "{\"model\":\"llama3.2\",\"created_at\":\"2023-08-04T08:52:19.385406455-07:00\",\"response\":\"The\",\"done\":false}\r\n\r\n{\"model\":\"llama3.2\",\"created_at\":\"2023-08-04T19:22:45.499127Z\",\"response\":\"\",\"done\":true,\"context\":[1,2,3],\"total_duration\":10706818083}",
		pieces: []string{"response|text|The", "response|text|"}},
	{name: "ollama chat whole", api: OllamaChat, ctype: "application/json; charset=utf-8",
		body:   `{"model":"llama3.2","created_at":"2023-12-12T14:13:43.416799Z","message":{"role":"assistant","content":"Hello! How are you today?"},"done":true,"total_duration":5191566416}`,
		pieces: []string{"message.content|text|Hello! How are you today?"}},
	{name: "ollama stream error", api: OllamaChat, ctype: "application/x-ndjson", errors: 1,
		body: "{\"error\":\"model 'x' not found\"}\n"},
	{name: "embeddings", api: OpenAIEmbeddings, ctype: "application/json",
		body: `{"object":"list","data":[{"object":"embedding","embedding":[0.0023,-0.0093],"index":0}],"model":"text-embedding-3-small","usage":{"prompt_tokens":8,"total_tokens":8}}`},
}
