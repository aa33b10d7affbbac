//! Misbehaving MCP servers, in process (raw JSON-RPC lines over `tokio::io::duplex`), as a
//! child process (`sh`), and over HTTP (a raw TCP server on 127.0.0.1).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

use super::{McpError, McpToolset};

/// What the fake server answers.
#[derive(Clone, Default)]
struct Script {
    /// The `tools/list` result (the same for every page).
    tools: Value,
}

fn reply(id: &Value, result: Value) -> String {
    format!("{}\n", json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// A server speaking raw JSON-RPC lines: `initialize`, `tools/list` from the script, and
/// `tools/call` of `echo` (its arguments back as text) and `huge` (a text of `bytes` bytes).
async fn fake_server(stream: tokio::io::DuplexStream, script: Script) {
    let (reader, mut writer) = tokio::io::split(stream);
    let mut lines = tokio::io::BufReader::new(reader).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
        let Some(id) = message.get("id").cloned() else { continue };
        let out = match message["method"].as_str().unwrap_or_default() {
            "initialize" => reply(
                &id,
                json!({
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fake", "version": "1"}
                }),
            ),
            "tools/list" => reply(&id, script.tools.clone()),
            "tools/call" if message["params"]["name"] == "deep" => {
                let levels = message["params"]["arguments"]["levels"].as_u64().unwrap_or(0) as usize;
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"structuredContent":{{"v":{}}}}}}}"#,
                    nested_text(levels)
                ) + "\n"
            }
            "tools/call" if message["params"]["name"] == "huge" => {
                let bytes = message["params"]["arguments"]["bytes"].as_u64().unwrap_or(0) as usize;
                reply(&id, json!({"content": [{"type": "text", "text": "x".repeat(bytes)}]}))
            }
            "tools/call" => {
                reply(&id, json!({"content": [{"type": "text", "text": message["params"]["arguments"].to_string()}]}))
            }
            _ => format!("{}\n", json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}})),
        };
        if writer.write_all(out.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// JSON text of arrays nested `levels` deep around `0`.
fn nested_text(levels: usize) -> String {
    format!("{}0{}", "[".repeat(levels), "]".repeat(levels))
}

fn fake(script: Script) -> McpToolset {
    McpToolset::from_io("fake", move || {
        let script = script.clone();
        async move {
            let (client, server) = tokio::io::duplex(64 * 1024);
            tokio::spawn(fake_server(server, script));
            Ok(tokio::io::split(client))
        }
    })
}

fn echo_tools() -> Value {
    json!({"tools": [
        {"name": "echo", "inputSchema": {"type": "object"}},
        {"name": "huge", "inputSchema": {"type": "object", "properties": {"bytes": {"type": "integer"}}}}
    ]})
}

// ---------------------------------------------------------------------------------------------
// A result over the size limit fails at once, naming the limit
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_past_the_default_limit_fails_at_once() {
    // The default request timeout (300 s) is left as it is: the error must not wait for it.
    let mcp = fake(Script { tools: echo_tools() });
    let started = Instant::now();
    let err = mcp.call_tool("huge", json!({"bytes": 17 * 1024 * 1024})).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    assert!(matches!(err, McpError::MessageTooLarge { max_bytes: 16_777_216, .. }), "{err:?}");
    assert!(err.to_string().contains("larger than 16777216 bytes, the limit"), "{err}");
    assert!(err.is_connection_error());
    // The next call opens a new session.
    assert_eq!(mcp.call_tool("echo", json!({"a": 1})).await.unwrap().text(), r#"{"a":1}"#);
    assert_eq!(mcp.connection_count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limit_is_configurable_and_every_waiting_request_fails() {
    let mcp = fake(Script { tools: echo_tools() }).max_message_size(64 * 1024);
    let ok = mcp.call_tool("huge", json!({"bytes": 60 * 1024})).await.unwrap();
    assert_eq!(ok.text().len(), 60 * 1024);
    let started = Instant::now();
    let (a, b) =
        tokio::join!(mcp.call_tool("huge", json!({"bytes": 65 * 1024})), mcp.call_tool("huge", json!({"bytes": 10})));
    assert!(started.elapsed() < Duration::from_secs(5));
    let a = a.unwrap_err();
    assert!(matches!(a, McpError::MessageTooLarge { max_bytes: 65536, .. }), "{a:?}");
    assert!(a.to_string().contains("raise `max_message_size`"), "{a}");
    // The other request on the session fails at once too (or got its answer before).
    if let Err(b) = b {
        assert!(b.is_connection_error(), "{b:?}");
    }
    assert!(McpToolset::<()>::from_io("x", || async { Ok(tokio::io::duplex(8)) }).max_message_size(0).check().is_err());
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_past_the_limit_fails_at_once() {
    // Answers `initialize` with the version it was asked for, then writes 200 KiB without a line
    // end whatever it is asked.
    let script = r#"read l; v=$(printf '%s' "$l" | sed 's/.*"protocolVersion":"\([^"]*\)".*/\1/');
printf '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}\n' "$v";
read l; read l; head -c 204800 /dev/zero | tr '\0' x; sleep 30"#;
    let mcp: McpToolset = McpToolset::stdio("sh", ["-c", script]).max_message_size(64 * 1024);
    let started = Instant::now();
    let err = mcp.call_tool("anything", json!({})).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(matches!(err, McpError::MessageTooLarge { max_bytes: 65536, .. }), "{err:?}");
    mcp.close().await;
}

// ---------------------------------------------------------------------------------------------
// A listed tool without an input schema
// ---------------------------------------------------------------------------------------------

/// Collects the messages of warnings.
#[derive(Clone, Default)]
struct Warnings(Arc<Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Warnings {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: tracing_subscriber::layer::Context<'_, S>) {
        struct Message<'a>(&'a mut String);
        impl tracing::field::Visit for Message<'_> {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" {
                    *self.0 = format!("{value:?}");
                }
            }
        }
        if *event.metadata().level() == tracing::Level::WARN {
            let mut text = String::new();
            event.record(&mut Message(&mut text));
            self.0.lock().unwrap().push(text);
        }
    }
}

#[tokio::test]
async fn a_tool_without_an_input_schema_is_listed_with_an_empty_one_and_named() {
    use tracing_subscriber::layer::SubscriberExt;
    let warnings = Warnings::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(warnings.clone()));
    let tools = json!({"tools": [
        {"name": "good", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}},
        {"name": "bare", "description": "no schema"},
        {"name": "stringly", "inputSchema": "not a schema"},
        {"name": "odd", "inputSchema": {"type": "object"}, "annotations": "not an object"},
        {"description": "nameless", "inputSchema": {"type": "object"}},
        17
    ]});
    let mcp = fake(Script { tools });
    let defs = mcp.list_tools().await.unwrap();
    let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["good", "bare", "stringly"]);
    assert_eq!(*defs[1].parameters_json_schema, json!({"type": "object", "properties": {}}));
    assert_eq!(defs[1].description.as_deref(), Some("no schema"));
    // The tool can be called.
    assert_eq!(mcp.call_tool("bare", json!({})).await.unwrap().text(), "null");
    let warnings = warnings.0.lock().unwrap().clone();
    assert!(warnings.iter().any(|w| w.contains("tool 'bare' without an object `inputSchema`")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.contains("tool 'stringly' without")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.contains("tool 'odd' in a shape that cannot be read")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.contains("a tool without a name")), "{warnings:?}");
}

#[tokio::test]
async fn a_tools_list_that_repeats_its_cursor_ends() {
    let tools = json!({"tools": [{"name": "one"}], "nextCursor": "again"});
    let defs = fake(Script { tools }).list_tools().await.unwrap();
    assert_eq!(defs.len(), 2, "the first page and the one its cursor named, then the repeat stops");
    let err = fake(Script { tools: json!({"things": []}) }).list_tools().await.unwrap_err();
    assert!(err.to_string().contains("has no `tools` list"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// HTTP credentials never show in errors
// ---------------------------------------------------------------------------------------------

const TOKEN: &str = "mcp-bearer/0123456789+secret";
const HEADER_SECRET: &str = "x-secret-value-9876543210";

/// Every form of a secret a server may echo.
fn forms(secret: &str) -> Vec<String> {
    use base64::Engine;
    vec![
        secret.to_string(),
        secret.replace('/', "\\/"),
        secret.chars().map(|c| format!("\\u{:04x}", c as u32)).collect(),
        secret.bytes().map(|b| format!("%{b:02X}")).collect(),
        base64::engine::general_purpose::STANDARD.encode(format!("Bearer {secret}")),
    ]
}

fn echo_text() -> String {
    forms(TOKEN).into_iter().chain(forms(HEADER_SECRET)).collect::<Vec<_>>().join(" ")
}

fn assert_no_secret(err: &McpError) {
    for text in [err.to_string(), format!("{err:?}")] {
        for form in forms(TOKEN).into_iter().chain(forms(HEADER_SECRET)) {
            assert!(!text.contains(&form), "{form:?} leaked: {text}");
        }
        assert!(!text.contains("0123456789"), "{text}");
        assert!(!text.contains("9876543210"), "{text}");
    }
}

/// Reads one HTTP request: its head (lowercased) and body.
async fn read_http(socket: &mut tokio::net::TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            while buf.len() < end + 4 + length {
                let n = socket.read(&mut chunk).await.ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            return Some((head, buf[end + 4..end + 4 + length].to_vec()));
        }
    }
}

/// A streamable HTTP server: `initialize` answered, then `on_call` answers `tools/call` (status,
/// content type, body); everything else is accepted.
async fn http_server(on_call: fn(&Value) -> (u16, &'static str, String), fail_initialize: bool) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                while let Some((head, body)) = read_http(&mut socket).await {
                    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let (status, content_type, text) = if !head.starts_with("post") {
                        (405, "text/plain", String::new())
                    } else if message["method"] == "initialize" && fail_initialize {
                        (401, "application/json", json!({"error": format!("bad token {}", echo_text())}).to_string())
                    } else if message["method"] == "initialize" {
                        let result = json!({
                            "protocolVersion": message["params"]["protocolVersion"],
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "fake-http", "version": "1"}
                        });
                        (
                            200,
                            "application/json",
                            json!({"jsonrpc": "2.0", "id": message["id"], "result": result}).to_string(),
                        )
                    } else if message["method"] == "tools/call" {
                        on_call(&message)
                    } else {
                        (202, "application/json", String::new())
                    };
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nmcp-session-id: s1\r\n\r\n{text}",
                        text.len()
                    );
                    if socket.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    format!("http://{addr}/mcp")
}

fn http_toolset(url: &str) -> McpToolset {
    McpToolset::http(url)
        .bearer_token(TOKEN)
        .header("X-Api-Secret", HEADER_SECRET)
        .connect_timeout(Duration::from_secs(5))
        .request_timeout(Duration::from_secs(20))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_credentials_never_show_in_errors() {
    // Echoed in the body of a failed handshake.
    let url = http_server(|_| (500, "text/plain", String::new()), true).await;
    let err = http_toolset(&url).list_tools().await.unwrap_err();
    assert!(matches!(err, McpError::Connect { .. }), "{err:?}");
    assert_no_secret(&err);

    // Echoed in a JSON-RPC error (which also goes back to the model as a retry).
    let url = http_server(
        |m| {
            let error = json!({"code": -32000, "message": format!("denied for {}", echo_text()), "data": {"auth": echo_text()}});
            (200, "application/json", json!({"jsonrpc": "2.0", "id": m["id"], "error": error}).to_string())
        },
        false,
    )
    .await;
    let mcp = http_toolset(&url);
    let err = mcp.call_tool("x", json!({})).await.unwrap_err();
    assert!(matches!(err, McpError::Server { .. }), "{err:?}");
    assert!(err.to_string().contains("denied for [REDACTED]"), "{err}");
    assert_no_secret(&err);
    let retry = format!("{:?}", err.into_tool_error());
    assert!(!retry.contains(TOKEN) && !retry.contains(HEADER_SECRET), "{retry}");

    // Echoed in an HTTP error of a call.
    let url = http_server(|_| (500, "text/plain", format!("failed: {}", echo_text())), false).await;
    let err = http_toolset(&url).call_tool("x", json!({})).await.unwrap_err();
    assert_no_secret(&err);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_result_past_the_limit_fails_at_once() {
    let url = http_server(
        |m| {
            let result = json!({"content": [{"type": "text", "text": "x".repeat(100 * 1024)}]});
            let event = json!({"jsonrpc": "2.0", "id": m["id"], "result": result});
            (200, "text/event-stream", format!("data: {event}\n\n"))
        },
        false,
    )
    .await;
    let mcp = http_toolset(&url).max_message_size(64 * 1024);
    let started = Instant::now();
    let err = mcp.call_tool("x", json!({})).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}: {err}", started.elapsed());
    assert!(err.to_string().contains("65536"), "the error names the limit: {err}");
}

// ---------------------------------------------------------------------------------------------
// A message nested deeper than a parser reads fails at once, naming the limit
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_nested_past_what_a_parser_reads_fails_at_once() {
    // The default request timeout (300 s) is left as it is: the error must not wait for it.
    let mcp = fake(Script { tools: echo_tools() });
    // 120 levels inside the message's 4: read.
    let ok = mcp.call_tool("deep", json!({"levels": 120})).await.unwrap();
    assert!(ok.structured_content.is_some());
    let started = Instant::now();
    let err = mcp.call_tool("deep", json!({"levels": 200})).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    assert!(matches!(err, McpError::MessageTooDeep { max_depth: 127, .. }), "{err:?}");
    assert!(err.to_string().contains("nested deeper than 127 levels"), "{err}");
    assert!(err.is_connection_error());
    // The next call opens a new session.
    assert_eq!(mcp.call_tool("echo", json!({"a": 1})).await.unwrap().text(), r#"{"a":1}"#);
    assert_eq!(mcp.connection_count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_result_nested_past_what_a_parser_reads_fails_at_once() {
    let url = http_server(
        |m| {
            let event = format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[],"structuredContent":{{"v":{}}}}}}}"#,
                m["id"],
                nested_text(300)
            );
            (200, "text/event-stream", format!("data: {event}\n\n"))
        },
        false,
    )
    .await;
    let mcp = http_toolset(&url).request_timeout(Duration::from_secs(120));
    let started = Instant::now();
    let err = mcp.call_tool("x", json!({})).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}: {err}", started.elapsed());
    assert!(matches!(err, McpError::MessageTooDeep { .. }), "{err:?}");

    // The same answer as a JSON body, not an event stream: refused as fast.
    let url = http_server(
        |m| {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[],"structuredContent":{{"v":{}}}}}}}"#,
                m["id"],
                nested_text(300)
            );
            (200, "application/json", body)
        },
        false,
    )
    .await;
    let mcp = http_toolset(&url).request_timeout(Duration::from_secs(120));
    let started = Instant::now();
    let err = mcp.call_tool("x", json!({})).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}: {err}", started.elapsed());
}

#[tokio::test]
async fn a_server_that_will_not_start_is_unavailable_and_an_optional_one_is_left_out() {
    use crate::prelude::*;
    use crate::toolset::ToolsetExt;

    let dead = || McpToolset::<()>::stdio("/nonexistent/toolsmith-mcp-server", Vec::<String>::new());
    let agent = Agent::builder(TestModel::default()).toolset(dead()).build().unwrap();
    match agent.run("hi").await.unwrap_err() {
        AgentRunError::ToolsetUnavailable(e) => {
            assert!(e.message.contains("could not start MCP server"), "{e}");
            // The reason is said once.
            assert_eq!(e.to_string().matches("could not start").count(), 1, "{e}");
        }
        other => panic!("expected ToolsetUnavailable, got {other:?}"),
    }
    let agent = Agent::builder(TestModel::default()).toolset(dead().optional()).build().unwrap();
    assert_eq!(agent.run("hi").await.unwrap().output(), "success (no tool calls)");
}
