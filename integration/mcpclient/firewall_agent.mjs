// firewall_agent.mjs drives mcpserver.mjs through caddy's prompt_firewall
// with the official MCP SDK client (Client, StreamableHTTPClientTransport),
// and prints one JSON line of what each step got: a result, or the
// McpError's code and data ({"error": {"code", "data"}}).
//
// Usage: node firewall_agent.mjs <base-url>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

const base = process.argv[2];
if (!base) {
  process.stderr.write("usage: node firewall_agent.mjs <base-url>\n");
  process.exit(2);
}

const out = { sampled: false };

async function connect(path) {
  const client = new Client({ name: "promptwall-firewall-e2e", version: "0.0.0" }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    out.sampled = true;
    return { role: "assistant", content: { type: "text", text: "summary" }, model: "m" };
  });
  const transport = new StreamableHTTPClientTransport(new URL(base + path));
  await client.connect(transport);
  return { client, transport };
}

// step runs f and records its result, or the McpError it raised.
async function step(name, f) {
  try {
    out[name] = await f();
  } catch (e) {
    out[name] = e instanceof McpError ? { error: { code: e.code, data: e.data ?? null } } : { thrown: String(e) };
  }
}

async function main() {
  for (const path of ["/tools/mcp", "/json/mcp"]) {
    const key = path.split("/")[1];
    const { client, transport } = await connect(path);
    await step(key + "_list", () => client.listTools());
    await step(key + "_add_one", () => client.callTool({ name: "add_one", arguments: {} }));
    await step(key + "_read_page", () => client.callTool({ name: "read_page", arguments: {} }));
    await step(key + "_read_note", () => client.callTool({ name: "read_note", arguments: {} }));
    if (path === "/tools/mcp") await step("summarize", () => client.callTool({ name: "summarize", arguments: {} }));
    await transport.terminateSession();
    await client.close();
  }
  {
    const { client } = await connect("/poison/mcp");
    await step("poison_list", () => client.listTools());
    await client.close();
  }
  for (const path of ["/rug/mcp", "/rugfree/mcp"]) {
    const key = path.split("/")[1];
    const { client } = await connect(path);
    await step(key + "_first", () => client.listTools());
    await step(key + "_second", () => client.listTools());
    await client.close();
  }
}

main()
  .catch((e) => { out.fatal = String(e?.stack ?? e); })
  .finally(() => {
    process.stdout.write(JSON.stringify(out) + "\n");
    process.exit(0);
  });
