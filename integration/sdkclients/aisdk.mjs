// One generateText call of the Vercel AI SDK (`ai`) through one of its
// official providers, for the prompt_firewall end-to-end tests.
//
// Environment:
//   PROVIDER    openai-chat | openai-responses | anthropic | google
//   BASE_URL    the server's origin, e.g. http://127.0.0.1:8080
//   MODEL       the model id
//   PROMPT      the user's text
//   TOOL_RESULT if set, generateText gets a tool get_weather whose execute
//               returns this text and may take two steps, so the SDK's own
//               tool loop sends it back to the model
//   TOOL_SHAPE  text (the default) | object: execute returns the text
//               itself, or an object holding it, which the providers send
//               as JSON
//   STREAM      if set, streamText instead: its fullStream's text deltas
//               are the chunks, its error part the error
//
// Prints one JSON line: {sent: [request bodies as the SDK sent them],
// result | error, and for STREAM chunks: [{text}], finish}.
import { generateText, streamText, tool, stepCountIs, APICallError } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { z } from 'zod';
import { report } from './report.mjs';

const { PROVIDER, BASE_URL, MODEL, PROMPT, TOOL_RESULT, TOOL_SHAPE, STREAM } = process.env;
const { out, recordingFetch, onChunk } = report();

function model() {
  switch (PROVIDER) {
    case 'openai-chat':
      return createOpenAI({ apiKey: 'sk-test', baseURL: `${BASE_URL}/v1`, fetch: recordingFetch }).chat(MODEL);
    case 'openai-responses':
      return createOpenAI({ apiKey: 'sk-test', baseURL: `${BASE_URL}/v1`, fetch: recordingFetch }).responses(MODEL);
    case 'anthropic':
      return createAnthropic({ apiKey: 'sk-ant-test', baseURL: `${BASE_URL}/v1`, fetch: recordingFetch })(MODEL);
    case 'google':
      return createGoogleGenerativeAI({ apiKey: 'test-key', baseURL: `${BASE_URL}/v1beta`, fetch: recordingFetch })(MODEL);
    default:
      throw new Error(`unknown PROVIDER ${PROVIDER}`);
  }
}

// The SDK's own error: what an application would catch.
const describe = (err) => ({
  class: err.constructor.name,
  isAPICallError: APICallError.isInstance(err),
  status: err.statusCode ?? null,
  isRetryable: err.isRetryable ?? null,
  message: String(err.message),
});

// Warnings (an unknown model's defaults) would go to stdout, before the
// one JSON line.
globalThis.AI_SDK_LOG_WARNINGS = false;

try {
  const opts = { model: model(), system: 'Answer briefly.', prompt: PROMPT };
  if (TOOL_RESULT) {
    opts.tools = {
      get_weather: tool({
        description: 'The weather in a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async () => (TOOL_SHAPE === 'object' ? { forecast: TOOL_RESULT, unit: 'C' } : TOOL_RESULT),
      }),
    };
    opts.stopWhen = stepCountIs(2);
  }
  if (STREAM) {
    for await (const part of streamText(opts).fullStream) {
      if (part.type === 'text-delta') await onChunk(part.text);
      else if (part.type === 'error') out.error = describe(part.error);
      else if (part.type === 'finish') out.finish = part.finishReason;
    }
    if (!out.error) out.result = { text: out.chunks.map((c) => c.text).join('') };
  } else {
    const r = await generateText(opts);
    out.result = { text: r.text, steps: r.steps.length };
  }
} catch (err) {
  out.error = describe(err);
}
console.log(JSON.stringify(out));
