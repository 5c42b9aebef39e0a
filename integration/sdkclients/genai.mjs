// One generateContent call of Google's official Gen AI client
// (@google/genai), for the prompt_firewall end-to-end tests.
//
// Environment:
//   CALL        generate (the default) | stream (generateContentStream, SSE)
//   BASE_URL    the server's origin, e.g. http://127.0.0.1:8080
//   PARAMS      the generateContent parameters as JSON (model, contents, config)
//   TOOL_RESULT if set, the config gets a CallableTool get_weather that
//               returns this text, so the SDK's automatic function calling
//               sends it back to the model in a functionResponse
//   ACK_URL     for stream: URL to POST to as soon as the first text chunk
//               arrives; the fake upstream holds the rest of the stream until then
//
// Prints one JSON line: {sent: [request bodies as the client sent them],
// result | error, and for stream chunks: [{text, ms}], acked, finish (the
// last finishReason), usage (the last usageMetadata), args (the function
// calls' args as JSON), stopped (a chunk with a finishReason came)}.
import { GoogleGenAI, ApiError } from '@google/genai';
import { report } from './report.mjs';

const { CALL, BASE_URL, PARAMS, TOOL_RESULT, ACK_URL } = process.env;
const params = JSON.parse(PARAMS || '{}');
const { out, recordingFetch, onChunk } = report(ACK_URL);

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

// What an application reads of a response: its text, function calls, end.
function take(r, calls) {
  for (const fc of r.functionCalls ?? []) calls.push(fc.args);
  const c = r.candidates?.[0];
  if (c?.finishReason) {
    out.finish = c.finishReason;
    out.stopped = true;
  }
  if (r.usageMetadata) out.usage = r.usageMetadata;
}

try {
  const ai = new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl: BASE_URL, fetch: recordingFetch } });
  if (TOOL_RESULT) {
    params.config = { ...params.config, tools: [weather], automaticFunctionCalling: { maximumRemoteCalls: 2 } };
  }
  const calls = [];
  if (CALL === 'stream') {
    let text = '';
    for await (const r of await ai.models.generateContentStream(params)) {
      if (r.text) {
        text += r.text;
        await onChunk(r.text);
      }
      take(r, calls);
    }
    out.result = { text, content: text };
  } else {
    const r = await ai.models.generateContent(params);
    take(r, calls);
    out.result = { text: r.text ?? null, content: r.text ?? null, afcHistory: r.automaticFunctionCallingHistory?.length ?? 0 };
  }
  out.args = calls.map((a) => JSON.stringify(a)).join('');
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
