// pay.mjs pays for one request with the real x402 client (@x402/fetch +
// @x402/svm exact scheme) and prints one JSON line describing the outcome:
// {"status","body","paymentResponse","paymentSignature","error"}.
//
// Usage: node pay.mjs <url>
// Env: RPC_URL (Solana JSON-RPC), PAYER_SECRET (base58 64-byte secret),
//      BODY (JSON request body, default {"text":"hello"}).
// It exits 0 even when the payment fails: the JSON line says what happened.
// Exit status 2 means the arguments or environment were unusable.
import { createKeyPairSignerFromBytes, getBase58Encoder } from "@solana/kit";
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";

function usage(msg) {
  process.stderr.write(`pay.mjs: ${msg}\nusage: RPC_URL=... PAYER_SECRET=... node pay.mjs <url>\n`);
  process.exit(2);
}

async function main() {
  const url = process.argv[2];
  if (!url) usage("missing <url>");
  const rpcUrl = process.env.RPC_URL;
  if (!rpcUrl) usage("RPC_URL is not set");
  const secretB58 = process.env.PAYER_SECRET;
  if (!secretB58) usage("PAYER_SECRET is not set");
  let secret;
  try {
    secret = new Uint8Array(getBase58Encoder().encode(secretB58));
  } catch (e) {
    usage(`PAYER_SECRET is not base58: ${e.message}`);
  }
  if (secret.length !== 64) usage(`PAYER_SECRET decodes to ${secret.length} bytes, want 64`);
  const body = process.env.BODY ?? '{"text":"hello"}';

  const signer = await createKeyPairSignerFromBytes(secret);
  // registerExactSvmScheme cannot pass rpcUrl, so the scheme is built here.
  const client = new x402Client().register("solana:*", new ExactSvmScheme(signer, { rpcUrl }));

  // The inner fetch records the last PAYMENT-SIGNATURE header sent, which is
  // what the Go tests decode and replay.
  let paymentSignature = null;
  const recordingFetch = (input, init) => {
    const req = new Request(input, init);
    const h = req.headers.get("PAYMENT-SIGNATURE");
    if (h !== null) paymentSignature = h;
    return fetch(req);
  };
  const payFetch = wrapFetchWithPayment(recordingFetch, client);

  const out = { status: null, body: null, paymentResponse: null, paymentSignature: null, error: null };
  try {
    const res = await payFetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body,
      signal: AbortSignal.timeout(60_000),
    });
    out.status = res.status;
    out.body = await res.text();
    const pr = res.headers.get("PAYMENT-RESPONSE");
    if (pr !== null) {
      try {
        out.paymentResponse = decodePaymentResponseHeader(pr);
      } catch (e) {
        out.error = `undecodable PAYMENT-RESPONSE header: ${e.message}`;
      }
    }
  } catch (e) {
    out.error = e?.message ?? String(e);
  }
  out.paymentSignature = paymentSignature;
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stdout.write(JSON.stringify({ status: null, body: null, paymentResponse: null,
    paymentSignature: null, error: e?.message ?? String(e) }) + "\n");
});
