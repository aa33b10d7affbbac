//! The gateway in front of upstreams that fail or change, driven by toolsmith's own
//! `McpToolset` over stdio: an upstream killed mid-call, a tool list that changes, results
//! larger than the limit, a cancelled call, approval rules, and the gateway over streamable
//! HTTP.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolsmith::toolset::{McpCallResult, McpToolset};

use crate::support::*;

/// The SDK-based upstream of `tests/gateway/upstream_server.cjs`, as a `[servers.NAME]` table
/// (its markers written under `dir`).
fn upstream_table(name: &str, dir: &Path, extra: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gateway/upstream_server.cjs");
    format!(
        "[servers.{name}]\ncommand = {node:?}\nargs = [{script:?}, {dir:?}]\nenv = {{ NODE_PATH = {modules:?} }}\n{extra}\n",
        node = node(),
        script = script.display().to_string(),
        dir = dir.display().to_string(),
        modules = servers_dir().join("node_modules").display().to_string(),
    )
}

fn write_config(dir: &Path, tables: &[String]) -> PathBuf {
    let path = dir.join("gateway.toml");
    std::fs::write(&path, tables.concat()).unwrap();
    path
}

/// A client of the gateway over stdio.
fn gateway(config: &Path) -> McpToolset {
    McpToolset::stdio(
        env!("CARGO_BIN_EXE_toolsmith"),
        ["mcp".to_string(), "gateway".to_string(), "--config".to_string(), config.display().to_string()],
    )
    .name("gateway")
}

fn text(result: &McpCallResult) -> String {
    result.content.iter().filter_map(|c| c["text"].as_str()).collect()
}

async fn search(gateway: &McpToolset, query: &str) -> Value {
    let result = gateway.call_tool("search_tools", json!({"query": query, "max_results": 50})).await.unwrap();
    assert!(!result.is_error, "{}", text(&result));
    serde_json::from_str(&text(&result)).unwrap()
}

fn names(found: &Value) -> Vec<String> {
    found["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

async fn call(gateway: &McpToolset, name: &str, arguments: Value) -> McpCallResult {
    gateway.call_tool("call_tool", json!({"name": name, "arguments": arguments})).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_killed_mid_call_is_an_error_naming_it_and_the_next_call_reconnects() {
    let dir = temp_dir("gateway-killed");
    let pid_file = dir.join("everything.pid");
    let script = format!("echo $$ > '{}'; exec '{}' '{}' stdio", pid_file.display(), node(), everything_js());
    let everything = format!("[servers.everything]\ncommand = \"sh\"\nargs = [\"-c\", {script:?}]\n\n");
    let config = write_config(&dir, &[everything, upstream_table("other", &dir, "")]);
    let gateway = gateway(&config);
    assert_eq!(text(&call(&gateway, "everything_echo", json!({"message": "one"})).await), "Echo: one");
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();

    let slow = {
        let gateway = gateway.clone();
        tokio::spawn(async move {
            call(&gateway, "everything_trigger-long-running-operation", json!({"duration": 10, "steps": 2})).await
        })
    };
    // Time for the call to reach the server (it runs for 10 s).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(Command::new("kill").args(["-9", &pid]).status().unwrap().success());
    let started = Instant::now();
    let failed = slow.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "the failure must be seen at once, not at a timeout");
    assert!(failed.is_error);
    let message = text(&failed);
    assert!(message.starts_with("The MCP server `everything` failed:"), "{message}");
    assert!(message.contains("closed the connection"), "{message}");

    // The gateway is still up, and the other upstream still answers.
    assert_eq!(text(&call(&gateway, "other_lookup_alpha", json!({"word": "up"})).await), "lookup_alpha: up");
    // The next search lists the dead server's tools again (it was restarted), and calls work.
    let found = search(&gateway, "echo").await;
    assert!(names(&found).contains(&"everything_echo".to_string()), "{found}");
    assert!(found.get("unavailable_servers").is_none(), "{found}");
    assert_eq!(text(&call(&gateway, "everything_echo", json!({"message": "two"})).await), "Echo: two");
    let new_pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    assert_ne!(new_pid, pid, "the server was started again");
    gateway.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_tool_list_change_is_searched() {
    let dir = temp_dir("gateway-list-changed");
    let config = write_config(&dir, &[upstream_table("dict", &dir, "")]);
    let gateway = gateway(&config);
    let before = names(&search(&gateway, "look up a word in the dictionary").await);
    assert!(before.contains(&"dict_lookup_alpha".to_string()), "{before:?}");
    assert!(!before.contains(&"dict_lookup_beta".to_string()), "{before:?}");

    assert_eq!(text(&call(&gateway, "dict_switch_lookup", json!({})).await), "switched");
    let after = names(&search(&gateway, "look up a word in the dictionary").await);
    assert!(after.contains(&"dict_lookup_beta".to_string()), "{after:?}");
    assert!(!after.contains(&"dict_lookup_alpha".to_string()), "{after:?}");
    assert_eq!(text(&call(&gateway, "dict_lookup_beta", json!({"word": "w"})).await), "lookup_beta: w");
    gateway.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_expose_all_an_upstream_tool_list_change_is_passed_on_to_the_client() {
    use toolsmith::toolset::McpNotification;

    let dir = temp_dir("gateway-expose-all-list-changed");
    let config = write_config(&dir, &[upstream_table("dict", &dir, "")]);
    let (tx, mut changed) = tokio::sync::mpsc::unbounded_channel();
    let config_arg = config.display().to_string();
    let args = ["mcp", "gateway", "--expose-all", "--config", config_arg.as_str()];
    let client: McpToolset = McpToolset::stdio(env!("CARGO_BIN_EXE_toolsmith"), args).on_notification(move |note| {
        if matches!(note, McpNotification::ToolsChanged { .. }) {
            let _ = tx.send(());
        }
    });
    let listed = |tools: Vec<toolsmith::ToolDefinition>| tools.into_iter().map(|t| t.name).collect::<Vec<_>>();
    let before = listed(client.list_tools().await.unwrap());
    assert!(before.contains(&"dict_lookup_alpha".to_string()), "{before:?}");

    assert_eq!(text(&client.call_tool("dict_switch_lookup", json!({})).await.unwrap()), "switched");
    let notified = tokio::time::timeout(Duration::from_secs(5), changed.recv()).await;
    assert!(matches!(notified, Ok(Some(()))), "the gateway did not pass on tools/list_changed");
    // The client's cached list is refreshed from the gateway's, which has the new tool.
    let after = listed(client.list_tools().await.unwrap());
    assert!(after.contains(&"dict_lookup_beta".to_string()), "{after:?}");
    assert!(!after.contains(&"dict_lookup_alpha".to_string()), "{after:?}");
    client.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_upstream_result_is_an_error_and_the_gateway_goes_on() {
    let dir = temp_dir("gateway-oversized");
    let config = write_config(
        &dir,
        &[upstream_table("small", &dir, "max_message_bytes = 65536"), upstream_table("large", &dir, "")],
    );
    let gateway = gateway(&config);
    // Past the upstream's limit: an error naming the server and the limit.
    let refused = call(&gateway, "small_big", json!({"bytes": 200_000})).await;
    assert!(refused.is_error);
    let message = text(&refused);
    assert!(message.starts_with("The MCP server `small` failed:"), "{message}");
    assert!(message.contains("larger than 65536 bytes"), "{message}");
    // The same server answers the next call (a new session), and a large result within the
    // limit is passed on whole.
    assert_eq!(text(&call(&gateway, "small_big", json!({"bytes": 10})).await), "x".repeat(10));
    let large = call(&gateway, "large_big", json!({"bytes": 1_000_000})).await;
    assert!(!large.is_error);
    assert_eq!(text(&large).len(), 1_000_000);
    gateway.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_is_cancelled_upstream() {
    let dir = temp_dir("gateway-cancel");
    let config = write_config(&dir, &[upstream_table("up", &dir, "")]);
    let gateway = gateway(&config);
    // Connect first, so that the call below is under way when it is dropped.
    assert!(names(&search(&gateway, "wait").await).contains(&"up_wait_for_cancel".to_string()));
    let pending = call(&gateway, "up_wait_for_cancel", json!({}));
    // Once the upstream tool runs, the call's future is dropped: the client sends
    // `notifications/cancelled` to the gateway.
    let started = dir.join("started");
    tokio::select! {
        result = pending => panic!("the call should not end: {}", text(&result)),
        () = wait_for(&started) => {}
    }
    wait_for(&dir.join("cancelled")).await;
    // The gateway and the upstream go on.
    assert_eq!(text(&call(&gateway, "up_lookup_alpha", json!({"word": "again"})).await), "lookup_alpha: again");
    gateway.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Waits for a marker file of the upstream (10 s at most).
async fn wait_for(marker: &Path) {
    let started = Instant::now();
    while !marker.exists() {
        let name = marker.file_name().unwrap().to_string_lossy();
        assert!(started.elapsed() < Duration::from_secs(10), "the upstream did not write `{name}`");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The gateway over streamable HTTP on a free port; its URL.
struct HttpGateway {
    child: Child,
    url: String,
}

impl Drop for HttpGateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_gateway(config: &Path, token: Option<&str>) -> HttpGateway {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    command.args(["mcp", "gateway", "--config"]).arg(config).args(["--port", "0"]);
    if let Some(token) = token {
        command.args(["--bearer-token", token]);
    }
    let mut child = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let line = lines.next().and_then(Result::ok).unwrap_or_default();
    std::thread::spawn(move || for _ in lines {});
    let url = line.strip_prefix("toolsmith gateway listening on ").unwrap_or_else(|| panic!("{line}")).to_string();
    HttpGateway { child, url }
}

/// A raw POST of `initialize` to the gateway; the HTTP status.
fn post_status(url: &str, headers: &str) -> u16 {
    use std::io::{Read, Write};
    let addr = url.strip_prefix("http://").and_then(|u| u.split('/').next()).unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_serves_streamable_http_with_and_without_a_bearer_token() {
    let dir = temp_dir("gateway-http");
    let config = write_config(&dir, &[upstream_table("up", &dir, "")]);

    let open = http_gateway(&config, None);
    assert!(open.url.starts_with("http://127.0.0.1:") && open.url.ends_with("/mcp"), "{}", open.url);
    let client: McpToolset = McpToolset::http(open.url.clone());
    let tools: Vec<String> = client.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(tools, ["search_tools", "call_tool"]);
    assert_eq!(text(&call(&client, "up_lookup_alpha", json!({"word": "http"})).await), "lookup_alpha: http");
    client.close().await;
    drop(open);

    let guarded = http_gateway(&config, Some("s3cret"));
    assert_eq!(post_status(&guarded.url, ""), 401);
    assert_eq!(post_status(&guarded.url, "Authorization: Bearer wrong\r\n"), 401);
    let without: McpToolset = McpToolset::http(guarded.url.clone());
    assert!(without.list_tools().await.is_err());
    let with: McpToolset = McpToolset::http(guarded.url.clone()).bearer_token("s3cret");
    assert_eq!(names(&search(&with, "look up a word").await)[0], "up_lookup_alpha");
    with.close().await;
    drop(guarded);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_in_approve_are_approved_through_the_clients_elicitation() {
    use std::sync::{Arc, Mutex};
    use toolsmith::toolset::{Elicitation, ElicitationResponse};

    let dir = temp_dir("gateway-approve");
    let config = write_config(&dir, &[upstream_table("up", &dir, "approve = [\"lookup_alpha\"]")]);
    let asked = Arc::new(Mutex::new(Vec::<String>::new()));
    let answering = |accept: bool, gateway: McpToolset| {
        let asked = asked.clone();
        gateway.elicitation_handler(move |request: Elicitation| {
            asked.lock().unwrap().push(request.message.clone());
            async move { if accept { ElicitationResponse::accept_defaults() } else { ElicitationResponse::Decline } }
        })
    };

    // Search says which tools need approval.
    let plain = gateway(&config);
    let found = search(&plain, "look up a word").await;
    let alpha = found["tools"].as_array().unwrap().iter().find(|t| t["name"] == "up_lookup_alpha").unwrap();
    assert_eq!(alpha["requires_approval"], true, "{found}");
    let found = search(&plain, "return a long text").await;
    let big = found["tools"].as_array().unwrap().iter().find(|t| t["name"] == "up_big").unwrap();
    assert!(big.get("requires_approval").is_none(), "{found}");
    // A client that cannot elicit is told so; the upstream tool does not run.
    let refused = call(&plain, "up_lookup_alpha", json!({"word": "w"})).await;
    assert!(refused.is_error);
    assert!(text(&refused).contains("`up_lookup_alpha` needs approval, and this MCP client cannot ask for it"));
    plain.close().await;

    let accepting = answering(true, gateway(&config));
    assert_eq!(text(&call(&accepting, "up_lookup_alpha", json!({"word": "w"})).await), "lookup_alpha: w");
    accepting.close().await;
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert!(asked.lock().unwrap()[0].contains("`up_lookup_alpha` with arguments {\"word\":\"w\"}"), "{asked:?}");

    let declining = answering(false, gateway(&config));
    let denied = call(&declining, "up_lookup_alpha", json!({"word": "w"})).await;
    assert!(denied.is_error);
    assert_eq!(text(&denied), "The user denied the call to `up_lookup_alpha`.");
    // Tools not listed in `approve` are not asked about.
    assert_eq!(text(&call(&declining, "up_big", json!({"bytes": 3})).await), "xxx");
    declining.close().await;
    assert_eq!(asked.lock().unwrap().len(), 2);

    // With --expose-all, the listed tool asks the same way.
    let config_arg = config.display().to_string();
    let args = ["mcp", "gateway", "--expose-all", "--config", config_arg.as_str()];
    let direct = answering(false, McpToolset::stdio(env!("CARGO_BIN_EXE_toolsmith"), args));
    let denied = direct.call_tool("up_lookup_alpha", json!({"word": "w"})).await.unwrap();
    assert!(denied.is_error);
    assert_eq!(text(&denied), "The user denied the call to `up_lookup_alpha`.");
    assert_eq!(text(&direct.call_tool("up_big", json!({"bytes": 2})).await.unwrap()), "xx");
    direct.close().await;
    assert_eq!(asked.lock().unwrap().len(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}
