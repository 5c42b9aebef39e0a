// What the SDK scripts of the prompt_firewall end-to-end tests share: the
// report they print, the fetch that records what the SDK sent, and the
// chunk log that acknowledges the first chunk to the fake upstream.

// report returns the script's report ({sent, chunks, acked}), a fetch that
// records exactly the request bodies the SDK hands to it (so a test can
// compare them with what the upstream received), and onChunk, which logs a
// text chunk and, at the first, POSTs to ackURL (when set): the upstream
// holds the rest of its stream until then.
export function report(ackURL) {
  const t0 = Date.now();
  const out = { sent: [], chunks: [], acked: false };
  const recordingFetch = async (url, init) => {
    out.sent.push(typeof init?.body === 'string' ? init.body : null);
    return fetch(url, init);
  };
  const onChunk = async (text) => {
    out.chunks.push({ text, ms: Date.now() - t0 });
    if (out.chunks.length === 1 && ackURL) {
      const r = await fetch(ackURL, { method: 'POST' });
      out.acked = r.ok;
    }
  };
  return { out, recordingFetch, onChunk };
}
