// One call of an official SDK, for the prompt_firewall end-to-end tests.
//
// Environment:
//   SDK      openai | anthropic
//   CALL     chat | chat_stream | responses | responses_stream (create with
//            stream: true) | responses_helper (client.responses.stream) (openai);
//            messages | messages_stream (anthropic)
//   BASE_URL the server's origin, e.g. http://127.0.0.1:8080
//   PARAMS   the request parameters as JSON (model, messages, input, ...)
//   ACK_URL  for *_stream: URL to POST to as soon as the first text chunk
//            arrives; the fake upstream holds the rest of the stream until then
//
// Prints one JSON line: {sent: [request bodies as the SDK sent them],
// result | error, chunks: [{text, ms}], acked, and for *_stream the events
// that end a stream: finish (OpenAI finish_reason), usage, stopped
// (Anthropic message_stop, Responses response.completed), and for the Responses
// calls args (the function calls' arguments as the SDK assembled them) and
// seqs (the events' sequence_number)}.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { report } from './report.mjs';

const { SDK, CALL, BASE_URL, PARAMS, ACK_URL } = process.env;
const params = JSON.parse(PARAMS || '{}');
const { out, recordingFetch, onChunk } = report(ACK_URL);

// The text of a Responses response's messages (a streamed one has no
// output_text member; the SDK adds it to what create returns).
function outputText(r) {
  return r.output.filter((o) => o.type === 'message')
    .flatMap((o) => o.content).filter((c) => c.type === 'output_text').map((c) => c.text).join('');
}

function responsesEnd(r) {
  out.usage = r.usage;
  out.args = r.output.filter((o) => o.type === 'function_call').map((o) => o.arguments).join('');
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
      responsesEnd(r);
    } else if (CALL === 'responses_stream' || CALL === 'responses_helper') {
      const stream = CALL === 'responses_stream'
        ? await client.responses.create({ ...params, stream: true })
        : client.responses.stream(params);
      out.seqs = [];
      out.deltaArgs = '';
      for await (const ev of stream) {
        out.seqs.push(ev.sequence_number);
        if (ev.type === 'response.output_text.delta') await onChunk(ev.delta);
        if (ev.type === 'response.function_call_arguments.delta') out.deltaArgs += ev.delta;
        if (ev.type === 'response.completed') {
          out.stopped = true;
          out.result = { content: ev.response.output_text ?? outputText(ev.response) };
          responsesEnd(ev.response);
        }
      }
      if (CALL === 'responses_helper') {
        // The helper's own accumulation of the events.
        const r = await stream.finalResponse();
        out.result = { content: r.output_text };
      }
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
