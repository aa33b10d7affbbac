// The official TypeScript SDK's client driving `toolsmith mcp gateway` over stdio. Run by
// tests/cli_gateway.rs with NODE_PATH set to the npm cache of scripts/install-mcp-servers.sh.
//
//   node sdk_client.cjs GATEWAY_BINARY CONFIG_FILE FILE_TO_READ
//
// Prints one JSON object: what each step saw.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const [gateway, config, file] = process.argv.slice(2);

function text(result) {
  return (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("");
}

async function main() {
  const transport = new StdioClientTransport({ command: gateway, args: ["mcp", "gateway", "--config", config] });
  const client = new Client({ name: "sdk-gateway-test", version: "1.0.0" });
  await client.connect(transport);
  const out = {};
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  const search = await client.callTool({ name: "search_tools", arguments: { query: "read a text file", max_results: 5 } });
  out.search = JSON.parse(text(search));
  const read = await client.callTool({ name: "call_tool", arguments: { name: "files_read_text_file", arguments: { path: file } } });
  out.read = { isError: read.isError === true, text: text(read) };
  const echo = await client.callTool({ name: "call_tool", arguments: { name: "everything_echo", arguments: { message: "hi" } } });
  out.echo = { isError: echo.isError === true, text: text(echo) };
  const unknown = await client.callTool({ name: "call_tool", arguments: { name: "nowhere_tool", arguments: {} } });
  out.unknown = { isError: unknown.isError === true, text: text(unknown) };
  const invalid = await client.callTool({ name: "call_tool", arguments: { name: "everything_echo", arguments: {} } });
  out.invalid = { isError: invalid.isError === true, text: text(invalid) };
  const missing = await client.callTool({ name: "call_tool", arguments: {} });
  out.missing_name = { isError: missing.isError === true, text: text(missing) };
  const dead = await client.callTool({ name: "search_tools", arguments: { query: "echo" } });
  out.dead = JSON.parse(text(dead));
  await client.close();
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
