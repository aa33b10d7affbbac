// A small upstream MCP server (the official TypeScript SDK's server half, over stdio) for the
// gateway's tests of what the real servers cannot show on demand:
//
//   node upstream_server.cjs MARKER_DIR
//
// - `lookup_alpha` is listed at the start; `switch_lookup` replaces it by `lookup_beta` and
//   sends `notifications/tools/list_changed`.
// - `wait_for_cancel` writes MARKER_DIR/started, then runs until the client cancels it (it then
//   writes MARKER_DIR/cancelled) or 30 s pass.
// - `big` returns a text of `bytes` bytes.
const fs = require("fs");
const path = require("path");
const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { ListToolsRequestSchema, CallToolRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

const markerDir = process.argv[2];
let switched = false;

const object = (properties = {}, required = []) => ({ type: "object", properties, required });
const tools = () => [
  switched
    ? { name: "lookup_beta", description: "Look up a word in the beta dictionary.", inputSchema: object({ word: { type: "string" } }) }
    : { name: "lookup_alpha", description: "Look up a word in the alpha dictionary.", inputSchema: object({ word: { type: "string" } }) },
  { name: "switch_lookup", description: "Replace the alpha dictionary by the beta one.", inputSchema: object() },
  { name: "wait_for_cancel", description: "Wait until cancelled.", inputSchema: object() },
  { name: "big", description: "Return a long text.", inputSchema: object({ bytes: { type: "integer" } }, ["bytes"]) },
];
const text = (t) => ({ content: [{ type: "text", text: t }] });

const server = new Server({ name: "gateway-test-upstream", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools() }));
server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const args = request.params.arguments || {};
  switch (request.params.name) {
    case "lookup_alpha":
    case "lookup_beta":
      if (!tools().some((t) => t.name === request.params.name)) {
        return { ...text(`${request.params.name} is not listed`), isError: true };
      }
      return text(`${request.params.name}: ${args.word}`);
    case "switch_lookup":
      switched = true;
      await server.sendToolListChanged();
      return text("switched");
    case "wait_for_cancel":
      fs.writeFileSync(path.join(markerDir, "started"), "started");
      return await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(text("not cancelled")), 30000);
        extra.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          fs.writeFileSync(path.join(markerDir, "cancelled"), "cancelled");
          resolve(text("cancelled"));
        });
      });
    case "big":
      return text("x".repeat(args.bytes));
    default:
      return { ...text(`unknown tool ${request.params.name}`), isError: true };
  }
});

server.connect(new StdioServerTransport()).catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
