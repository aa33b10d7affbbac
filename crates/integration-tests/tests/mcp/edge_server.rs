//! An MCP server written with rmcp, run in-process over a byte pipe, for the edge cases real
//! servers do not offer on demand: a slow tool, a huge result, a tool list that changes, a tool
//! error, a server that asks for sampling, a server that dies.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorCode, ErrorData, ListToolsResult,
    PaginatedRequestParams, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{Value, json};
use toolsmith::toolset::McpToolset;

/// What the server has seen, and the switches the tests flip.
#[derive(Default)]
pub struct EdgeState {
    /// Whether the `late` tool is listed.
    pub late_tool: AtomicBool,
    /// How many `tools/list` requests were answered.
    pub lists: AtomicUsize,
    /// How many `tools/call` requests arrived.
    pub calls: AtomicUsize,
    /// How many sessions are open on the server's side.
    pub open: AtomicUsize,
    /// The sessions' cancellation tokens, to kill the server.
    sessions: Mutex<Vec<rmcp::service::RunningServiceCancellationToken>>,
}

impl EdgeState {
    /// Kills every open session, as if the server process had died.
    pub fn kill(&self) {
        for token in self.sessions.lock().unwrap().drain(..) {
            token.cancel();
        }
    }
}

#[derive(Clone)]
pub struct EdgeServer {
    pub state: Arc<EdgeState>,
}

fn from_json<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("valid MCP JSON")
}

fn text_result(text: impl Into<String>) -> CallToolResponse {
    from_json::<CallToolResult>(json!({"content": [{"type": "text", "text": text.into()}]})).into()
}

impl ServerHandler for EdgeServer {
    fn get_info(&self) -> ServerConfig {
        from_json(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "edge", "version": "1.0.0"},
            "instructions": "A server for edge cases."
        }))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.state.lists.fetch_add(1, Ordering::SeqCst);
        let mut tools = vec![
            json!({"name": "slow", "description": "Sleep, then answer.",
                   "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]}}),
            json!({"name": "huge", "description": "Answer with a long text.",
                   "inputSchema": {"type": "object", "properties": {"bytes": {"type": "integer"}}, "required": ["bytes"]}}),
            json!({"name": "fail", "description": "Always fails.", "inputSchema": {"type": "object"}}),
            json!({"name": "sample", "description": "Ask the client's model.", "inputSchema": {"type": "object"}}),
            json!({"name": "add", "title": "Add", "description": "Add two integers.",
                   "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]},
                   "outputSchema": {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"], "x-fastmcp-wrap-result": true},
                   "annotations": {"readOnlyHint": true},
                   "_meta": {"team": "maths"}}),
            json!({"name": "add_tool", "description": "List one more tool.", "inputSchema": {"type": "object"}}),
            json!({"name": "rpc_error", "description": "Answers with a JSON-RPC error.", "inputSchema": {"type": "object"}}),
        ];
        if self.state.late_tool.load(Ordering::SeqCst) {
            tools
                .push(json!({"name": "late", "description": "A tool added later.", "inputSchema": {"type": "object"}}));
        }
        Ok(from_json(json!({ "tools": tools })))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.state.calls.fetch_add(1, Ordering::SeqCst);
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        match request.name.as_ref() {
            "slow" => {
                let seconds = args["seconds"].as_f64().unwrap_or(0.0);
                tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
                Ok(text_result(format!("slept {seconds} s")))
            }
            "huge" => {
                let bytes = args["bytes"].as_u64().unwrap_or(0) as usize;
                Ok(text_result("x".repeat(bytes)))
            }
            "fail" => Ok(from_json::<CallToolResult>(json!({
                "content": [{"type": "text", "text": "the widget is broken"}],
                "isError": true
            }))
            .into()),
            "sample" => {
                let params = from_json(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}],
                    "maxTokens": 10
                }));
                #[allow(deprecated)]
                match context.peer.create_message(params).await {
                    Ok(result) => {
                        let value = serde_json::to_value(&result).unwrap_or_default();
                        Ok(text_result(format!("the model said: {}", value["content"]["text"].as_str().unwrap_or("?"))))
                    }
                    Err(e) => Ok(text_result(format!("sampling failed: {e}"))),
                }
            }
            "add" => {
                let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
                Ok(from_json::<CallToolResult>(json!({
                    "content": [{"type": "text", "text": json!({"result": sum}).to_string()}],
                    "structuredContent": {"result": sum}
                }))
                .into())
            }
            "add_tool" => {
                self.state.late_tool.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                Ok(text_result("added"))
            }
            "late" => Ok(text_result("I am new")),
            "rpc_error" => Err(ErrorData::new(ErrorCode::INTERNAL_ERROR, "database is down", None)),
            other => Err(ErrorData::new(ErrorCode::INVALID_PARAMS, format!("Unknown tool: {other}"), None)),
        }
    }
}

/// A toolset connected to a fresh in-process edge server for each session.
pub fn edge_toolset<D>() -> (McpToolset<D>, Arc<EdgeState>) {
    let state = Arc::new(EdgeState::default());
    let server = EdgeServer { state: state.clone() };
    let toolset = McpToolset::from_io("edge", move || {
        let server = server.clone();
        async move {
            let (client_side, server_side) = tokio::io::duplex(1 << 16);
            tokio::spawn(async move {
                if let Ok(running) = server.clone().serve(server_side).await {
                    server.state.open.fetch_add(1, Ordering::SeqCst);
                    server.state.sessions.lock().unwrap().push(running.cancellation_token());
                    let _ = running.waiting().await;
                    server.state.open.fetch_sub(1, Ordering::SeqCst);
                }
            });
            Ok(tokio::io::split(client_side))
        }
    });
    (toolset, state)
}
