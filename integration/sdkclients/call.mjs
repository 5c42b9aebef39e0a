// One call of an official SDK, for the prompt_firewall end-to-end tests.
//
// Environment:
//   SDK      openai | anthropic
//   CALL     chat | chat_stream | responses (openai); messages | messages_stream (anthropic)
//   BASE_URL the server's origin, e.g. http://127.0.0.1:8080
//   PARAMS   the request parameters as JSON (model, messages, input, ...)
//   ACK_URL  for *_stream: URL to POST to as soon as the first text chunk
//            arrives; the fake upstream holds the rest of the stream until then
//
// Prints one JSON line: {sent: [request bodies as the SDK sent them],
// result | error, chunks: [{text, ms}], acked, and for *_stream the events
// that end a stream: finish (OpenAI finish_reason), usage, stopped
// (Anthropic message_stop)}.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';

const { SDK, CALL, BASE_URL, PARAMS, ACK_URL } = process.env;
const params = JSON.parse(PARAMS || '{}');
const sent = [];
const t0 = Date.now();

// Record exactly what the SDK hands to fetch, so the test can compare it
// with what the upstream received.
const recordingFetch = async (url, init) => {
  sent.push(typeof init?.body === 'string' ? init.body : null);
  return fetch(url, init);
};

const out = { sent, chunks: [], acked: false };

async function onChunk(text) {
  out.chunks.push({ text, ms: Date.now() - t0 });
  if (out.chunks.length === 1 && ACK_URL) {
    // Tell the upstream the first chunk is here; it sends the rest only then.
    const r = await fetch(ACK_URL, { method: 'POST' });
    out.acked = r.ok;
  }
}

try {
  if (SDK === 'openai') {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${BASE_URL}/v1`, fetch: recordingFetch });
    if (CALL === 'chat') {
      const r = await client.chat.completions.create(params);
      out.result = { content: r.choices[0].message.content };
    } else if (CALL === 'chat_stream') {
      const stream = await client.chat.completions.create({ ...params, stream: true });
      for await (const ev of stream) {
        const d = ev.choices[0]?.delta?.content;
        if (d) await onChunk(d);
        if (ev.choices[0]?.finish_reason) out.finish = ev.choices[0].finish_reason;
        if (ev.usage) out.usage = ev.usage;
      }
      out.result = { content: out.chunks.map((c) => c.text).join('') };
    } else if (CALL === 'responses') {
      const r = await client.responses.create(params);
      out.result = { content: r.output_text };
    } else {
      throw new Error(`unknown CALL ${CALL}`);
    }
  } else if (SDK === 'anthropic') {
    const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: BASE_URL, fetch: recordingFetch });
    if (CALL === 'messages') {
      const r = await client.messages.create(params);
      out.result = { content: r.content.map((b) => b.text).join('') };
    } else if (CALL === 'messages_stream') {
      const stream = await client.messages.create({ ...params, stream: true });
      for await (const ev of stream) {
        if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') await onChunk(ev.delta.text);
        if (ev.type === 'message_delta') out.usage = ev.usage;
        if (ev.type === 'message_stop') out.stopped = true;
      }
      out.result = { content: out.chunks.map((c) => c.text).join('') };
    } else {
      throw new Error(`unknown CALL ${CALL}`);
    }
  } else {
    throw new Error(`unknown SDK ${SDK}`);
  }
} catch (err) {
  // The SDKs' own error classes: what an application would catch.
  out.error = {
    class: err.constructor.name,
    isBadRequest: SDK === 'openai' ? err instanceof OpenAI.BadRequestError : err instanceof Anthropic.BadRequestError,
    status: err.status ?? null,
    message: err.message,
    code: err.code ?? null,
    type: err.type ?? null,
    param: err.param ?? null,
    body: err.error ?? null,
    shouldRetry: err.headers?.get?.('x-should-retry') ?? null,
  };
}
console.log(JSON.stringify(out));
