package llmreq

import "testing"

// Bodies follow the examples of the Gemini API and Ollama API documentation.

func TestGemini(t *testing.T) { runAPICases(t, geminiCases) }

var geminiCases = []apiCase{
	{
		name: "system instruction, snake case",
		path: "/v1beta/models/gemini-2.0-flash:generateContent",
		body: `{"system_instruction":{"parts":[{"text":"You are a cat. Your name is Neko."}]},
"contents":[{"parts":[{"text":"Hello there"}]}]}`,
		api: Gemini,
		texts: []want{
			{"system_instruction.parts[0].text", RoleSystem, "You are a cat. Your name is Neko."},
			{"contents[0].parts[0].text", RoleUser, "Hello there"},
		},
	},
	{
		name: "multi-turn, camel case, streaming",
		path: "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
		body: `{"contents":[{"role":"user","parts":[{"text":"Hello"}]},
{"role":"model","parts":[{"text":"Great to meet you. What would you like to know?"}]},
{"role":"user","parts":[{"text":"I have two dogs in my house. How many paws are in my house?"}]}],
"systemInstruction":{"role":"system","parts":[{"text":"Answer in one line."}]},
"generationConfig":{"stopSequences":["Title"],"temperature":1.0,"maxOutputTokens":800,"topP":0.8,"topK":10},
"safetySettings":[{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","threshold":"BLOCK_ONLY_HIGH"}]}`,
		api: Gemini,
		texts: []want{
			{"contents[0].parts[0].text", RoleUser, "Hello"},
			{"contents[1].parts[0].text", RoleAssistant, "Great to meet you. What would you like to know?"},
			{"contents[2].parts[0].text", RoleUser, "I have two dogs in my house. How many paws are in my house?"},
			{"systemInstruction.parts[0].text", RoleSystem, "Answer in one line."},
		},
	},
	{
		name: "inline data, function call and response",
		path: "/v1beta/models/gemini-2.5-flash:generateContent",
		body: `{"contents":[
{"role":"user","parts":[{"inline_data":{"mime_type":"image/jpeg","data":"/9j/4AAQSkZJRgABAQ=="}},{"text":"Caption this image."},{"file_data":{"mime_type":"application/pdf","file_uri":"https://generativelanguage.googleapis.com/v1beta/files/abc"}}]},
{"role":"model","parts":[{"functionCall":{"name":"get_current_weather","args":{"location":"Boston, MA"}},"thoughtSignature":"CiQB0e2Kb"}]},
{"role":"user","parts":[{"functionResponse":{"name":"get_current_weather","response":{"result":{"temperature":22,"description":"Sunny and warm"}}}}]},
{"role":"model","parts":[{"executableCode":{"language":"PYTHON","code":"print(1+1)"}},{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"2\n"}}]}],
"tools":[{"functionDeclarations":[{"name":"get_current_weather","description":"Get weather","parameters":{"type":"object"}}]}]}`,
		api: Gemini,
		texts: []want{
			{"contents[0].parts[1].text", RoleUser, "Caption this image."},
			{"contents[1].parts[0].functionCall.args.location#key", RoleAssistant, "location"},
			{"contents[1].parts[0].functionCall.args.location", RoleAssistant, "Boston, MA"},
			{"contents[2].parts[0].functionResponse.name", RoleTool, "get_current_weather"},
			{"contents[2].parts[0].functionResponse.response.result#key", RoleTool, "result"},
			{"contents[2].parts[0].functionResponse.response.result.temperature#key", RoleTool, "temperature"},
			{"contents[2].parts[0].functionResponse.response.result.description#key", RoleTool, "description"},
			{"contents[2].parts[0].functionResponse.response.result.description", RoleTool, "Sunny and warm"},
			{"contents[3].parts[0].executableCode.language", RoleAssistant, "PYTHON"},
			{"contents[3].parts[0].executableCode.code", RoleAssistant, "print(1+1)"},
			{"contents[3].parts[1].codeExecutionResult.output", RoleTool, "2\n"},
			{"tools[0].functionDeclarations[0].name", RoleToolDefinition, "get_current_weather"},
			{"tools[0].functionDeclarations[0].description", RoleToolDefinition, "Get weather"},
		},
	},
	{
		name: "Vertex rawPredict path falls to shape; odd roles",
		path: "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.0-flash:predict",
		body: `{"contents":[{"role":"function","parts":[{"text":"fn says"}]},{"role":"critic","parts":[{"text":"odd"}]},{"role":"user","role":"model","parts":{"text":"conflict"}},{"parts":[{"newKind":{"words":"unknown part"}}]}]}`,
		api:  Gemini,
		texts: []want{
			{"contents[0].parts[0].text", RoleTool, "fn says"},
			{"contents[1].parts[0].text", RoleUnknown, "odd"},
			{"contents[2].parts.text", RoleUnknown, "conflict"},
			{"contents[3].parts[0].newKind#key", RoleUser, "newKind"},
			{"contents[3].parts[0].newKind.words#key", RoleUser, "words"},
			{"contents[3].parts[0].newKind.words", RoleUser, "unknown part"},
		},
	},
	{
		name:  "a single content instead of a list keeps its role",
		path:  "/v1beta/models/gemini-2.0-flash:generateContent",
		body:  `{"contents":{"role":"model","parts":[{"text":"from the model"}]}}`,
		api:   Gemini,
		texts: []want{{"contents.parts[0].text", RoleAssistant, "from the model"}},
	},
	{
		name: "countTokens without contents is generic",
		path: "/v1beta/models/gemini-2.0-flash:countTokens",
		body: `{"generateContentRequest":{"model":"models/gemini-2.0-flash","contents":[{"parts":[{"text":"nested"}]}]}}`,
		api:  Generic,
		texts: []want{
			{"generateContentRequest#key", RoleUnknown, "generateContentRequest"},
			{"generateContentRequest.model#key", RoleUnknown, "model"},
			{"generateContentRequest.model", RoleUnknown, "models/gemini-2.0-flash"},
			{"generateContentRequest.contents#key", RoleUnknown, "contents"},
			{"generateContentRequest.contents[0].parts#key", RoleUnknown, "parts"},
			{"generateContentRequest.contents[0].parts[0].text#key", RoleUnknown, "text"},
			{"generateContentRequest.contents[0].parts[0].text", RoleUnknown, "nested"},
		},
	},
}

func TestOllama(t *testing.T) { runAPICases(t, ollamaCases) }

var ollamaCases = []apiCase{
	{
		name: "chat with images and tools",
		path: "/api/chat",
		body: `{"model":"llama3.2","messages":[
{"role":"system","content":"You are terse."},
{"role":"user","content":"what is in this image?","images":["iVBORw0KGgoAAAANSUhEUgAAAG0AAABmCAYAAADBPx+VAAAACXBIWXMAAAsTAAALEwEAmpwYAAAAAXNSR0IArs4c6QAAAARnQU1BAACxjwv8YQUAAA3VSURBVHgB7Z27"]},
{"role":"assistant","content":"","thinking":"The user asks about weather.","tool_calls":[{"function":{"name":"get_current_weather","arguments":{"format":"celsius","location":"Paris, FR"}}}]},
{"role":"tool","content":"22 degrees celsius","tool_name":"get_current_weather"}],
"stream":false,"options":{"temperature":0.2,"seed":42},
"tools":[{"type":"function","function":{"name":"get_current_weather","description":"Get the current weather for a location",
"parameters":{"type":"object","properties":{"location":{"type":"string","description":"The location, e.g. Paris, FR"},"format":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location","format"]}}}]}`,
		api: OllamaChat,
		texts: []want{
			{"messages[0].content", RoleSystem, "You are terse."},
			{"messages[1].content", RoleUser, "what is in this image?"},
			{"messages[2].content", RoleAssistant, ""},
			{"messages[2].thinking", RoleAssistant, "The user asks about weather."},
			{"messages[2].tool_calls[0].function.arguments.format#key", RoleAssistant, "format"},
			{"messages[2].tool_calls[0].function.arguments.format", RoleAssistant, "celsius"},
			{"messages[2].tool_calls[0].function.arguments.location#key", RoleAssistant, "location"},
			{"messages[2].tool_calls[0].function.arguments.location", RoleAssistant, "Paris, FR"},
			{"messages[3].content", RoleTool, "22 degrees celsius"},
			{"messages[3].tool_name", RoleTool, "get_current_weather"},
			{"tools[0].function.name", RoleToolDefinition, "get_current_weather"},
			{"tools[0].function.description", RoleToolDefinition, "Get the current weather for a location"},
			{"tools[0].function.parameters.properties.location#key", RoleToolDefinition, "location"},
			{"tools[0].function.parameters.properties.location.description", RoleToolDefinition, "The location, e.g. Paris, FR"},
			{"tools[0].function.parameters.properties.format.enum[0]", RoleToolDefinition, "celsius"},
			{"tools[0].function.parameters.properties.format.enum[1]", RoleToolDefinition, "fahrenheit"},
			{"tools[0].function.parameters.required[0]", RoleToolDefinition, "location"},
			{"tools[0].function.parameters.required[1]", RoleToolDefinition, "format"},
		},
	},
	{
		name: "generate with system, template and suffix",
		path: "/api/generate",
		body: `{"model":"codellama:code","prompt":"def compute_gcd(a, b):","suffix":"    return result","system":"Complete the code.","template":"<PRE> {{ .Prompt }} <SUF>{{ .Suffix }} <MID>","context":[1,2,3],"images":["iVBORw0KGgo="],"options":{"temperature":0},"stream":false}`,
		api:  OllamaGenerate,
		texts: []want{
			{"prompt", RoleUser, "def compute_gcd(a, b):"},
			{"suffix", RoleUser, "    return result"},
			{"system", RoleSystem, "Complete the code."},
			{"template", RoleSystem, "<PRE> {{ .Prompt }} <SUF>{{ .Suffix }} <MID>"},
		},
	},
	{
		name: "generate by shape",
		path: "/",
		body: `{"model":"llama3.2","prompt":"Why is the sky blue?","system":"Talk like a pirate."}`,
		api:  OllamaGenerate,
		texts: []want{
			{"prompt", RoleUser, "Why is the sky blue?"},
			{"system", RoleSystem, "Talk like a pirate."},
		},
	},
	{
		name: "load a model: no prompt, generic",
		path: "/api/generate",
		body: `{"model":"llama3.2","keep_alive":"5m"}`,
		api:  Generic,
		texts: []want{{"model#key", RoleUnknown, "model"}, {"model", RoleUnknown, "llama3.2"},
			{"keep_alive#key", RoleUnknown, "keep_alive"}, {"keep_alive", RoleUnknown, "5m"}},
	},
}

func TestGeneric(t *testing.T) { runAPICases(t, genericCases) }

var genericCases = []apiCase{
	{
		name: "nested values, keys are not values, odd keys quoted",
		path: "/v1/whatever",
		body: `{"a":{"b":[1,"two",{"c":"three"}]},"x y":"four","":"five","ünï":"six","q\"k":["seven"],"n":null,"t":true,"9x":"eight"}`,
		api:  Generic,
		texts: []want{
			{"a#key", RoleUnknown, "a"},
			{"a.b#key", RoleUnknown, "b"},
			{"a.b[1]", RoleUnknown, "two"},
			{"a.b[2].c#key", RoleUnknown, "c"},
			{"a.b[2].c", RoleUnknown, "three"},
			{"[\"x y\"]#key", RoleUnknown, "x y"},
			{"[\"x y\"]", RoleUnknown, "four"},
			{"[\"\"]#key", RoleUnknown, ""},
			{"[\"\"]", RoleUnknown, "five"},
			{"[\"ünï\"]#key", RoleUnknown, "ünï"},
			{"[\"ünï\"]", RoleUnknown, "six"},
			{"[\"q\\\"k\"]#key", RoleUnknown, "q\"k"},
			{"[\"q\\\"k\"][0]", RoleUnknown, "seven"},
			{"n#key", RoleUnknown, "n"},
			{"t#key", RoleUnknown, "t"},
			{"[\"9x\"]#key", RoleUnknown, "9x"},
			{"[\"9x\"]", RoleUnknown, "eight"},
		},
	},
	{
		name:  "top-level string",
		path:  "/",
		body:  ` "just text" `,
		api:   Generic,
		texts: []want{{"", RoleUnknown, "just text"}},
	},
	{
		name: "top-level array, even on a known path",
		path: "/v1/chat/completions",
		body: `[{"role":"user","content":"x"},"y"]`,
		api:  Generic,
		texts: []want{
			{"[0].role#key", RoleUnknown, "role"},
			{"[0].role", RoleUnknown, "user"},
			{"[0].content#key", RoleUnknown, "content"},
			{"[0].content", RoleUnknown, "x"},
			{"[1]", RoleUnknown, "y"},
		},
	},
	{
		name:  "scalars only",
		path:  "/",
		body:  `[1, 2.5e10, true, null, {}]`,
		api:   Generic,
		texts: []want{},
	},
}
