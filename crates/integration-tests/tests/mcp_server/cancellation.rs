//! A client that gives up on a call cancels it on the server: `McpToolset` sends
//! `notifications/cancelled` when a call's future is dropped, and `McpServer` then fires the
//! call's cancellation token and drops the tool's future.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::Notify;
use toolsmith::mcp_server::{McpRequest, McpServer};
use toolsmith::prelude::*;
use toolsmith::tool::ToolOutput;
use toolsmith::toolset::McpToolset;

/// What the server-side tool saw: that it started, and, when its future was dropped, whether
/// its request was cancelled by then.
#[derive(Default)]
struct Seen {
    started: Notify,
    dropped: Mutex<Option<bool>>,
}

/// Dropped with the tool's future.
struct Guard(Arc<Seen>, Option<McpRequest>);

impl Drop for Guard {
    fn drop(&mut self) {
        let cancelled = self.1.as_ref().is_some_and(McpRequest::is_cancelled);
        *self.0.dropped.lock().unwrap() = Some(cancelled);
    }
}

fn server(seen: Arc<Seen>) -> McpServer {
    let wait = Tool::from_schema("wait", "Wait forever.", json!({"type": "object"}), move |_, _| {
        let seen = seen.clone();
        async move {
            let _guard = Guard(seen.clone(), McpRequest::current());
            seen.started.notify_one();
            std::future::pending::<()>().await;
            Ok(ToolOutput::Value(json!("never")))
        }
    });
    let echo =
        Tool::from_schema(
            "echo",
            "Echo.",
            json!({"type": "object"}),
            |_, args| async move { Ok(ToolOutput::Value(args)) },
        );
    McpServer::builder(FunctionToolset::new().with_tool(wait).with_tool(echo)).build()
}

#[tokio::test]
async fn dropping_a_call_cancels_the_tool_on_the_server() {
    let seen = Arc::new(Seen::default());
    let served = seen.clone();
    let mcp: McpToolset = McpToolset::from_io("cancel", move || {
        let seen = served.clone();
        async move {
            let (client, server_end) = tokio::io::duplex(1 << 16);
            let (read, write) = tokio::io::split(server_end);
            tokio::spawn(async move { server(seen).serve_io(read, write).await });
            let (r, w) = tokio::io::split(client);
            Ok((r, w))
        }
    });
    let call = mcp.call_tool("wait", json!({}));
    tokio::select! {
        result = call => panic!("the call should not end: {result:?}"),
        () = seen.started.notified() => {}
    }
    // The call's future is dropped here: the client sends `notifications/cancelled`.
    let started = Instant::now();
    while seen.dropped.lock().unwrap().is_none() && started.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(*seen.dropped.lock().unwrap(), Some(true), "the tool's future was not dropped on cancellation");
    // The session goes on.
    let echoed = mcp.call_tool("echo", json!({"a": 1})).await.unwrap();
    assert!(!echoed.is_error);
    assert_eq!(echoed.content[0]["text"], r#"{"a":1}"#);
    mcp.close().await;
}
