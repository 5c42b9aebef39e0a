// One call of the official Ollama client, for the prompt_firewall
// end-to-end tests; call.mjs does the same for OpenAI's and Anthropic's.
//
// Environment:
//   CALL     chat | generate
//   BASE_URL the server's origin, e.g. http://127.0.0.1:8080
//   PARAMS   the request parameters as JSON (model, messages, prompt, ...)
//
// Prints one JSON line: {sent: [request bodies as the client sent them],
// result | error}.
import { Ollama } from 'ollama';

const { CALL, BASE_URL, PARAMS } = process.env;
const params = JSON.parse(PARAMS || '{}');
const sent = [];

// Record exactly what the client hands to fetch.
const recordingFetch = async (url, init) => {
  sent.push(typeof init?.body === 'string' ? init.body : null);
  return fetch(url, init);
};

const out = { sent };
try {
  const client = new Ollama({ host: BASE_URL, fetch: recordingFetch });
  if (CALL === 'chat') {
    const r = await client.chat({ ...params, stream: false });
    out.result = { content: r.message?.content ?? null };
  } else if (CALL === 'generate') {
    const r = await client.generate({ ...params, stream: false });
    out.result = { content: r.response ?? null };
  } else {
    throw new Error(`unknown CALL ${CALL}`);
  }
} catch (err) {
  // The client's own error: what an application would show its user.
  out.error = {
    class: err.constructor.name,
    status: err.status_code ?? null,
    message: String(err.message),
  };
}
console.log(JSON.stringify(out));
