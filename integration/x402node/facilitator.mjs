// facilitator.mjs is a real x402 facilitator: x402Facilitator from
// @x402/core with the exact-SVM scheme from @x402/svm, behind the HTTP API of
// docs/X402.md (GET /supported, POST /verify, POST /settle).
import { x402Facilitator } from "@x402/core/facilitator";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/facilitator";

const MAX_BODY = 1 << 20;

export function createFacilitator(feePayerSigner, rpcUrl, networks) {
  const signer = toFacilitatorSvmSigner(feePayerSigner, { defaultRpcUrl: rpcUrl });
  const facilitator = new x402Facilitator();
  facilitator.register(networks, new ExactSvmScheme(signer));
  return facilitator;
}

function send(res, status, body) {
  const text = JSON.stringify(body, (_, v) => (typeof v === "bigint" ? v.toString() : v));
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

export function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (c) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error("body too large"));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

// facilitatorHandler answers the three endpoints. A request that is not of
// the documented shape is a 400 with {"error": ...}; an exception inside the
// scheme (which the reference servers also surface) is a 500.
export function facilitatorHandler(facilitator, log) {
  return async (req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    try {
      if (path === "/supported" && req.method === "GET") {
        return send(res, 200, facilitator.getSupported());
      }
      if ((path === "/verify" || path === "/settle") && req.method === "POST") {
        let body;
        try {
          body = JSON.parse(await readBody(req));
        } catch (e) {
          return send(res, 400, { error: `invalid JSON body: ${e.message}` });
        }
        const { paymentPayload, paymentRequirements } = body ?? {};
        if (!paymentPayload || typeof paymentPayload !== "object" ||
            !paymentRequirements || typeof paymentRequirements !== "object") {
          return send(res, 400, { error: "body must hold paymentPayload and paymentRequirements" });
        }
        const result = path === "/verify"
          ? await facilitator.verify(paymentPayload, paymentRequirements)
          : await facilitator.settle(paymentPayload, paymentRequirements);
        log(`${path} -> ${JSON.stringify(result)}`);
        return send(res, 200, result);
      }
      if (["/supported", "/verify", "/settle"].includes(path)) {
        return send(res, 405, { error: `method ${req.method} not allowed` });
      }
      return send(res, 404, { error: `no route ${path}` });
    } catch (e) {
      log(`${path} failed: ${e.stack ?? e}`);
      return send(res, 500, { error: e.message ?? String(e) });
    }
  };
}
