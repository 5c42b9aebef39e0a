// agent.mjs is an agent on the scan service's MCP endpoint: the official
// MCP SDK client (@modelcontextprotocol/sdk, Streamable HTTP) lists the
// tools, pre-checks a text, calls the paid scan_text without payment,
// pays the PaymentRequired it gets with the real x402 client (@x402/core's
// x402Client with @x402/svm's exact scheme) as x402's MCP transport says,
// in _meta["x402/payment"], and sends the same payment once more. It
// prints one JSON line with every answer:
// {"protocolVersion","tools","precheck","unpaid","paid","replay","payment","error"}.
//
// @x402 2.27.0 has no MCP client helper, so the retry is driven here.
//
// Usage: node agent.mjs <mcp-url>
// Env: RPC_URL (Solana JSON-RPC), PAYER_SECRET (base58 64-byte secret),
//      CALLER (wallet named to precheck_text), TEXT (the text).
// It exits 0 whatever the answers; "error" holds a thrown message.
// Exit status 2 means the arguments or environment were unusable.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createKeyPairSignerFromBytes, getBase58Encoder } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { ExactSvmScheme } from "@x402/svm/exact/client";

function usage(msg) {
  process.stderr.write(`agent.mjs: ${msg}\nusage: RPC_URL=... PAYER_SECRET=... CALLER=... TEXT=... node agent.mjs <mcp-url>\n`);
  process.exit(2);
}

// paymentRequired reads the x402 tool-result binding's PaymentRequired:
// structuredContent first, else content[0].text, as the transport says.
function paymentRequired(result) {
  const sc = result?.structuredContent;
  if (result?.isError && sc && sc.x402Version !== undefined && Array.isArray(sc.accepts)) return sc;
  try {
    const parsed = JSON.parse(result?.content?.[0]?.text ?? "");
    if (result?.isError && parsed.x402Version !== undefined && Array.isArray(parsed.accepts)) return parsed;
  } catch {}
  return null;
}

async function main() {
  const url = process.argv[2];
  if (!url) usage("missing <mcp-url>");
  const { RPC_URL: rpcUrl, PAYER_SECRET: secretB58, CALLER: caller, TEXT: text } = process.env;
  if (!rpcUrl || !secretB58 || !caller || text === undefined) usage("RPC_URL, PAYER_SECRET, CALLER and TEXT are required");
  let secret;
  try {
    secret = new Uint8Array(getBase58Encoder().encode(secretB58));
  } catch (e) {
    usage(`PAYER_SECRET is not base58: ${e.message}`);
  }
  if (secret.length !== 64) usage(`PAYER_SECRET decodes to ${secret.length} bytes, want 64`);

  const out = { protocolVersion: null, tools: null, precheck: null, unpaid: null, paid: null, replay: null, payment: null, error: null };
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: "promptwall-mcp-e2e", version: "0.0.0" });
  try {
    await client.connect(transport);
    out.protocolVersion = transport.protocolVersion ?? null;
    out.tools = (await client.listTools()).tools;
    out.precheck = await client.callTool({ name: "precheck_text", arguments: { text, caller } });

    out.unpaid = await client.callTool({ name: "scan_text", arguments: { text } });
    const required = paymentRequired(out.unpaid);
    if (!required) throw new Error("the unpaid call did not answer with PaymentRequired");

    const signer = await createKeyPairSignerFromBytes(secret);
    const payer = new x402Client().register("solana:*", new ExactSvmScheme(signer, { rpcUrl }));
    out.payment = await payer.createPaymentPayload(required);

    const paidCall = { name: "scan_text", arguments: { text }, _meta: { "x402/payment": out.payment } };
    out.paid = await client.callTool(paidCall);
    out.replay = await client.callTool(paidCall);
  } catch (e) {
    out.error = e?.message ?? String(e);
  } finally {
    await client.close().catch(() => {});
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stdout.write(JSON.stringify({ error: e?.message ?? String(e) }) + "\n");
});
