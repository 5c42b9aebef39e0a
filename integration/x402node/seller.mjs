// seller.mjs is test support only: a minimal x402 v2 seller in Node that
// lets the harness be exercised without the Go handler. It answers POST with
// 402 + PAYMENT-REQUIRED, and with a PAYMENT-SIGNATURE header verifies and
// settles through the facilitator, then answers 200 + PAYMENT-RESPONSE.
//
// Env: FACILITATOR_URL, NETWORK, ASSET, PAY_TO, AMOUNT (atomic units, default
// 10000), MEMO (optional extra.memo), SELLER_PORT (0 = free port).
// Prints {"url": "http://127.0.0.1:P/scan"} on stdout when ready.
import http from "node:http";
import { readBody } from "./facilitator.mjs";

const env = (k, d) => {
  const v = process.env[k] ?? d;
  if (v === undefined) throw new Error(`${k} is not set`);
  return v;
};
const facilitatorUrl = env("FACILITATOR_URL");
const b64 = (o) => Buffer.from(JSON.stringify(o)).toString("base64");

async function post(path, body) {
  const res = await fetch(facilitatorUrl + path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

async function main() {
  const supported = await (await fetch(facilitatorUrl + "/supported")).json();
  const network = env("NETWORK");
  const kind = supported.kinds.find((k) => k.x402Version === 2 && k.network === network);
  if (!kind) throw new Error(`facilitator does not support ${network}`);
  const extra = { feePayer: kind.extra.feePayer };
  if (process.env.MEMO) extra.memo = process.env.MEMO;
  const requirements = {
    scheme: "exact", network, amount: env("AMOUNT", "10000"), asset: env("ASSET"),
    payTo: env("PAY_TO"), maxTimeoutSeconds: 60, extra,
  };

  const server = http.createServer(async (req, res) => {
    const url = `http://${req.headers.host}${req.url}`;
    await readBody(req);
    const required = (error) => {
      res.writeHead(402, { "PAYMENT-REQUIRED": b64({ x402Version: 2, error,
        resource: { url, description: "test seller", mimeType: "application/json" },
        accepts: [requirements] }), "Cache-Control": "no-store", "Content-Type": "application/json" });
      res.end(JSON.stringify({ error }));
    };
    const header = req.headers["payment-signature"];
    if (!header) return required("PAYMENT-SIGNATURE header is required");
    try {
      const payload = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
      const v = await post("/verify", { x402Version: 2, paymentPayload: payload, paymentRequirements: requirements });
      if (!v.isValid) return required(v.invalidReason ?? "invalid payment");
      const s = await post("/settle", { x402Version: 2, paymentPayload: payload, paymentRequirements: requirements });
      if (!s.success) {
        res.writeHead(402, { "PAYMENT-RESPONSE": b64(s), "Content-Type": "application/json" });
        return res.end(JSON.stringify({ error: s.errorReason }));
      }
      res.writeHead(200, { "PAYMENT-RESPONSE": b64(s), "Content-Type": "application/json" });
      res.end(JSON.stringify({ ok: true }));
    } catch (e) {
      res.writeHead(503, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: e.message }));
    }
  });
  server.listen(Number(env("SELLER_PORT", "0")), "127.0.0.1", () => {
    process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}/scan` }) + "\n");
  });
  process.on("SIGTERM", () => process.exit(0));
}

main().catch((e) => {
  process.stderr.write(`seller: ${e.stack ?? e}\n`);
  process.exit(1);
});
