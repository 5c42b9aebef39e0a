// One generateContent call of Google's official Gen AI client
// (@google/genai), for the prompt_firewall end-to-end tests.
//
// Environment:
//   BASE_URL    the server's origin, e.g. http://127.0.0.1:8080
//   PARAMS      the generateContent parameters as JSON (model, contents, config)
//   TOOL_RESULT if set, the config gets a CallableTool get_weather that
//               returns this text, so the SDK's automatic function calling
//               sends it back to the model in a functionResponse
//
// Prints one JSON line: {sent: [request bodies as the client sent them],
// result | error}.
import { GoogleGenAI, ApiError } from '@google/genai';

const { BASE_URL, PARAMS, TOOL_RESULT } = process.env;
const params = JSON.parse(PARAMS || '{}');
const sent = [];

// Record exactly what the client hands to fetch.
const recordingFetch = async (url, init) => {
  sent.push(typeof init?.body === 'string' ? init.body : null);
  return fetch(url, init);
};

// A CallableTool is what the SDK runs itself in its automatic function
// calling loop; an MCP client reaches it the same way (mcpToTool).
const weather = {
  tool: async () => ({
    functionDeclarations: [{
      name: 'get_weather',
      description: 'The weather in a city',
      parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    }],
  }),
  callTool: async (calls) => calls.map((c) => ({
    functionResponse: { id: c.id, name: c.name, response: { output: TOOL_RESULT } },
  })),
};

const out = { sent };
try {
  const ai = new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl: BASE_URL, fetch: recordingFetch } });
  if (TOOL_RESULT) {
    params.config = { ...params.config, tools: [weather], automaticFunctionCalling: { maximumRemoteCalls: 2 } };
  }
  const r = await ai.models.generateContent(params);
  out.result = { text: r.text ?? null, afcHistory: r.automaticFunctionCallingHistory?.length ?? 0 };
} catch (err) {
  // The client's own error: what an application would catch.
  out.error = {
    class: err.constructor.name,
    isApiError: err instanceof ApiError,
    status: err.status ?? null,
    message: String(err.message),
  };
}
console.log(JSON.stringify(out));
