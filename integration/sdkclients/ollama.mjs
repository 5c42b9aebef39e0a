// One call of the official Ollama client, for the prompt_firewall
// end-to-end tests; call.mjs does the same for OpenAI's and Anthropic's.
//
// Environment:
//   CALL     chat | generate | chat_stream | generate_stream
//   BASE_URL the server's origin, e.g. http://127.0.0.1:8080
//   PARAMS   the request parameters as JSON (model, messages, prompt, ...)
//   ACK_URL  for *_stream: URL to POST to as soon as the first text chunk
//            arrives; the fake upstream holds the rest of the stream until then
//
// Prints one JSON line: {sent: [request bodies as the client sent them],
// result | error, chunks: [{text, ms}], acked, args (the tool calls'
// arguments as JSON), and the end of the answer: finish (done_reason),
// usage ({prompt_eval_count, eval_count}), stopped (done: true)}.
import { Ollama } from 'ollama';
import { report } from './report.mjs';

const { CALL, BASE_URL, PARAMS, ACK_URL } = process.env;
const params = JSON.parse(PARAMS || '{}');
const { out, recordingFetch, onChunk } = report(ACK_URL);
const args = [];

// What an application reads of an answer or chunk besides its text.
function take(r) {
  for (const tc of r.message?.tool_calls ?? []) args.push(JSON.stringify(tc.function.arguments));
  if (r.done) {
    out.stopped = true;
    out.finish = r.done_reason;
    out.usage = { prompt_eval_count: r.prompt_eval_count, eval_count: r.eval_count };
  }
}

try {
  const client = new Ollama({ host: BASE_URL, fetch: recordingFetch });
  if (CALL === 'chat') {
    const r = await client.chat({ ...params, stream: false });
    take(r);
    out.result = { content: r.message?.content ?? null };
  } else if (CALL === 'generate') {
    const r = await client.generate({ ...params, stream: false });
    take(r);
    out.result = { content: r.response ?? null };
  } else if (CALL === 'chat_stream' || CALL === 'generate_stream') {
    const chat = CALL === 'chat_stream';
    const stream = chat ? await client.chat({ ...params, stream: true }) : await client.generate({ ...params, stream: true });
    for await (const r of stream) {
      const text = chat ? r.message?.content : r.response;
      if (text) await onChunk(text);
      take(r);
    }
    out.result = { content: out.chunks.map((c) => c.text).join('') };
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
out.args = args.join('');
console.log(JSON.stringify(out));
