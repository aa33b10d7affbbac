//! `McpServer::notify_tools_changed` reaches every open session as
//! `notifications/tools/list_changed`, and `McpToolset` lists the tools again.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use toolsmith::mcp_server::McpServer;
use toolsmith::prelude::*;
use toolsmith::tool::ToolOutput;
use toolsmith::toolset::{DynamicToolset, McpNotification, McpToolset};

#[tokio::test]
async fn a_tools_changed_notification_reaches_the_client_which_lists_again() {
    let names = Arc::new(Mutex::new(vec!["first"]));
    let listed = names.clone();
    let toolset = DynamicToolset::new(move |_| {
        let names = listed.lock().unwrap().clone();
        let mut tools = FunctionToolset::new();
        for name in names {
            tools = tools.with_tool(Tool::from_schema(name, "A tool.", json!({"type": "object"}), |_, _| async {
                Ok(ToolOutput::Value(json!("ok")))
            }));
        }
        Some(tools)
    });
    let server = McpServer::builder(toolset).build();
    let served = server.clone();
    let (tx, mut changed) = tokio::sync::mpsc::unbounded_channel();
    let mcp: McpToolset = McpToolset::from_io("dynamic", move || {
        let server = served.clone();
        async move {
            let (client, server_end) = tokio::io::duplex(1 << 16);
            let (read, write) = tokio::io::split(server_end);
            tokio::spawn(async move { server.serve_io(read, write).await });
            let (r, w) = tokio::io::split(client);
            Ok((r, w))
        }
    })
    .on_notification(move |note| {
        if matches!(note, McpNotification::ToolsChanged { .. }) {
            let _ = tx.send(());
        }
    });
    let first: Vec<String> = mcp.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(first, ["first"]);

    *names.lock().unwrap() = vec!["second"];
    // Without the notification the client keeps its cached list.
    let cached: Vec<String> = mcp.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(cached, ["first"]);
    server.notify_tools_changed().await;
    let notified = tokio::time::timeout(Duration::from_secs(5), changed.recv()).await;
    assert!(matches!(notified, Ok(Some(()))), "no tools/list_changed reached the client");
    let second: Vec<String> = mcp.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(second, ["second"]);
    mcp.close().await;
}
