//! toolsmith's `McpToolset` against `McpServer`, in process over `tokio::io::duplex` and over
//! HTTP on a loopback port.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolsmith::mcp_server::{HttpOptions, McpServer};
use toolsmith::prelude::*;
use toolsmith::toolset::{Elicitation, ElicitationResponse, McpError, McpToolset};

/// Add two integers.
#[tool]
fn add(x: i64, y: i64) -> i64 {
    x + y
}

/// Pay an amount (asks the model to retry above 100).
#[tool]
fn pay(amount: u32) -> Result<String, ModelRetry> {
    if amount > 100 {
        return Err(ModelRetry::new("too much: pay at most 100"));
    }
    Ok(format!("paid {amount}"))
}

/// Sleep longer than the server lets it.
#[tool]
async fn slow() -> String {
    tokio::time::sleep(Duration::from_secs(5)).await;
    "done".into()
}

/// Delete everything (needs approval).
#[tool]
fn delete_all() -> String {
    "deleted".into()
}

/// Return a long text.
#[tool]
fn big(bytes: usize) -> String {
    "x".repeat(bytes)
}

/// A value nested `depth` arrays deep, built in memory (no parser's depth limit applies).
#[tool]
fn deep(depth: usize) -> serde_json::Value {
    let mut value = json!("bottom");
    for _ in 0..depth {
        value = serde_json::Value::Array(vec![value]);
    }
    value
}

fn server() -> McpServer {
    let tools = FunctionToolset::new()
        .with_tools([add, pay, slow, big, deep])
        .with_tool(Tool::from(delete_all).requires_approval(true));
    McpServer::builder(tools).name("in-process").timeout(Duration::from_millis(200)).build()
}

/// A client of a fresh in-process server over a duplex pipe.
fn client() -> McpToolset {
    McpToolset::from_io("in-process", || async {
        let (client, server_end) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(server_end);
        tokio::spawn(async move { server().serve_io(read, write).await });
        let (r, w) = tokio::io::split(client);
        Ok((r, w))
    })
}

fn text(result: &toolsmith::toolset::McpCallResult) -> String {
    result.content.iter().filter_map(|c| c["text"].as_str()).collect()
}

#[tokio::test]
async fn tools_are_listed_with_their_schemas() {
    let mcp = client();
    let tools = mcp.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add", "pay", "slow", "big", "deep", "delete_all"]);
    let schema = &tools[0].parameters_json_schema;
    assert_eq!(schema["properties"]["x"]["type"], "integer");
    assert_eq!(tools[0].description.as_deref(), Some("Add two integers."));
    mcp.close().await;
}

#[tokio::test]
async fn a_call_returns_the_value_and_its_structured_content() {
    let mcp = client();
    let result = mcp.call_tool("add", json!({"x": "2", "y": 3})).await.unwrap();
    assert!(!result.is_error);
    assert_eq!(text(&result), "5");
    assert_eq!(result.structured_content, Some(json!({"result": 5})));
    mcp.close().await;
}

#[tokio::test]
async fn invalid_arguments_are_answered_with_the_models_retry_text() {
    let mcp = client();
    let result = mcp.call_tool("add", json!({"x": "two"})).await.unwrap();
    assert!(result.is_error);
    let text = text(&result);
    assert!(text.starts_with("2 validation errors:"), "{text}");
    assert!(text.contains("\"loc\"") && text.contains("\"y\""), "{text}");
    assert!(text.ends_with("Fix the errors and try again."), "{text}");
    mcp.close().await;
}

#[tokio::test]
async fn a_model_retry_and_a_timeout_are_errors_with_the_runs_text() {
    let mcp = client();
    let retry = mcp.call_tool("pay", json!({"amount": 500})).await.unwrap();
    assert!(retry.is_error);
    assert_eq!(text(&retry), "too much: pay at most 100\n\nFix the errors and try again.");
    let timeout = mcp.call_tool("slow", json!({})).await.unwrap();
    assert!(timeout.is_error);
    assert_eq!(text(&timeout), "Timed out after 0.2 seconds.\n\nFix the errors and try again.");
    mcp.close().await;
}

#[tokio::test]
async fn an_unknown_tool_is_a_protocol_error() {
    let mcp = client();
    let err = mcp.call_tool("nope", json!({})).await.unwrap_err();
    assert!(err.to_string().contains("Unknown tool: nope"), "{err}");
    mcp.close().await;
}

#[tokio::test]
async fn an_oversized_result_is_refused_by_the_client_and_the_server_goes_on() {
    let mcp = client().max_message_size(64 * 1024);
    let err = mcp.call_tool("big", json!({"bytes": 200_000})).await.unwrap_err();
    assert!(matches!(err, McpError::MessageTooLarge { .. }), "{err:?}");
    let small = mcp.call_tool("big", json!({"bytes": 10})).await.unwrap();
    assert_eq!(text(&small), "x".repeat(10));
    mcp.close().await;
}

#[tokio::test]
async fn approval_needs_a_client_that_can_elicit() {
    let mcp = client();
    let refused = mcp.call_tool("delete_all", json!({})).await.unwrap();
    assert!(refused.is_error);
    assert!(text(&refused).contains("cannot ask for it"), "{}", text(&refused));
    mcp.close().await;

    let accepting = client().elicitation_handler(|request: Elicitation| async move {
        assert!(request.message.contains("delete_all"), "{}", request.message);
        ElicitationResponse::accept_defaults()
    });
    let done = accepting.call_tool("delete_all", json!({})).await.unwrap();
    assert_eq!(text(&done), "deleted");
    accepting.close().await;

    let declining = client().elicitation_handler(|_| async { ElicitationResponse::Decline });
    let denied = declining.call_tool("delete_all", json!({})).await.unwrap();
    assert!(denied.is_error);
    assert_eq!(text(&denied), "The user denied the call to `delete_all`.");
    declining.close().await;
}

#[tokio::test]
async fn an_agent_uses_the_served_tools() {
    let agent = Agent::builder(TestModel::default().call_tools(["add"])).toolset(client()).build().unwrap();
    let result = agent.run("add").await.unwrap();
    assert_eq!(result.usage().tool_calls, 1);
}

/// A raw HTTP/1 POST; the status code.
async fn post_status(addr: std::net::SocketAddr, headers: &str) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer);
    answer.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

#[tokio::test]
async fn http_checks_the_bearer_token_and_the_origin() {
    let running = server().serve_http(HttpOptions::new().bearer_token("s3cret")).await.unwrap();
    let addr = running.local_addr();
    assert!(addr.ip().is_loopback());
    assert_eq!(post_status(addr, "").await, 401);
    assert_eq!(post_status(addr, "Authorization: Bearer wrong\r\n").await, 401);
    let evil = "Authorization: Bearer s3cret\r\nOrigin: http://evil.example\r\n";
    assert_eq!(post_status(addr, evil).await, 403);

    let without: McpToolset = McpToolset::http(running.url());
    assert!(without.list_tools().await.is_err());
    let with: McpToolset = McpToolset::http(running.url()).bearer_token("s3cret");
    let result = with.call_tool("add", json!({"x": 1, "y": 2})).await.unwrap();
    assert_eq!(text(&result), "3");
    with.close().await;
    running.shutdown().await;
}

/// A tool that returns a value 100,000 levels deep: the server answers on a 2 MiB worker, with
/// the levels past what a message keeps written as JSON text, and nothing overflows its stack.
#[test]
fn a_result_nested_past_any_limit_is_answered_on_a_small_stack() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(2 << 20)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mcp = client();
        let result = mcp.call_tool("deep", json!({"depth": 100_000})).await.unwrap();
        assert!(!result.is_error, "{}", text(&result));
        let answer = text(&result);
        assert!(answer.starts_with("[[") && answer.contains("bottom"), "{}", &answer[..answer.len().min(200)]);
        // The structured content arrives too, read whole by the client's JSON parser (rmcp's).
        assert!(result.structured_content.as_ref().is_some_and(|s| s["result"].is_array()), "no structured content");
        mcp.close().await;
    });
}
