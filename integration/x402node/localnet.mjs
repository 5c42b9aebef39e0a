// localnet.mjs starts, in one process, a Solana JSON-RPC server over LiteSVM
// (real SPL Token program, mainnet USDC mint) and an x402 facilitator, then
// prints one JSON line describing them on stdout. Logs go to stderr.
//
// Env: RPC_PORT, FACILITATOR_PORT (0 or unset = pick a free port).
// It serves until SIGTERM/SIGINT, or until stdin closes when stdin is a pipe
// (so a test process that dies leaves no orphan behind).
import http from "node:http";
import fs from "node:fs";
import { createChain, MAINNET_CAIP2, USDC_MAINNET } from "./chain.mjs";
import { createRpc } from "./rpc.mjs";
import { createFacilitator, facilitatorHandler, readBody } from "./facilitator.mjs";

const log = (msg) => process.stderr.write(`[localnet] ${msg}\n`);

function port(name) {
  const v = process.env[name] ?? "0";
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new Error(`${name}=${v} is not a port number`);
  }
  return n;
}

function listen(server, p) {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(p, "127.0.0.1", () => resolve(server.address().port));
  });
}

function rpcServer(handle) {
  return http.createServer(async (req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405, { "Content-Type": "text/plain" });
      return res.end("JSON-RPC wants POST\n");
    }
    let out;
    try {
      const body = JSON.parse(await readBody(req));
      out = Array.isArray(body) ? body.map(handle) : handle(body);
    } catch (e) {
      out = { jsonrpc: "2.0", id: null, error: { code: -32700, message: `Parse error: ${e.message}` } };
    }
    const text = JSON.stringify(out, (_, v) => (typeof v === "bigint" ? v.toString() : v));
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(text);
  });
}

async function main() {
  const chain = await createChain();
  const rpc = rpcServer(createRpc(chain, log));
  const rpcPort = await listen(rpc, port("RPC_PORT"));
  const rpcUrl = `http://127.0.0.1:${rpcPort}`;

  const facilitator = createFacilitator(chain.feePayer.signer, rpcUrl, [MAINNET_CAIP2]);
  const fac = http.createServer(facilitatorHandler(facilitator, log));
  const facPort = await listen(fac, port("FACILITATOR_PORT"));

  const shutdown = (why) => {
    log(`stopping: ${why}`);
    rpc.close();
    fac.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
  // Only a pipe can signal that the parent went away; a terminal or
  // /dev/null on stdin must not stop the chain.
  const st = fs.fstatSync(0);
  if (st.isFIFO() || st.isSocket()) {
    process.stdin.on("end", () => shutdown("stdin closed"));
    process.stdin.on("error", () => shutdown("stdin error"));
    process.stdin.resume();
  }

  process.stdout.write(JSON.stringify({
    rpc: rpcUrl,
    facilitator: `http://127.0.0.1:${facPort}`,
    network: MAINNET_CAIP2,
    asset: USDC_MAINNET,
    payTo: chain.merchant.address,
    payToTokenAccount: chain.merchantAta,
    feePayer: chain.feePayer.address,
    payer: chain.payer.address,
    payerSecret: chain.payer.secretBase58,
    payerTokenAccount: chain.payerAta,
    unfunded: chain.unfunded.address,
    unfundedSecret: chain.unfunded.secretBase58,
    unfundedTokenAccount: chain.unfundedAta,
  }) + "\n");
  log(`ready: rpc ${rpcUrl}, facilitator http://127.0.0.1:${facPort}`);
}

main().catch((e) => {
  log(`failed to start: ${e.stack ?? e}`);
  process.exit(1);
});
