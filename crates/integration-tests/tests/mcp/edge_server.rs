//! An MCP server written with rmcp, run in-process over a byte pipe, for the edge cases real
//! servers do not offer on demand: a slow tool, a huge result, a tool list that changes, a tool
//! error, a server that asks for sampling or elicitation (in a call, or later), a structured
//! result that breaks its output schema, progress and log notifications, a call that notices its
//! cancellation, a server that lists the client's roots, a server that dies.

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
    /// Whether the server speaks only protocol revisions up to 2025-06-18 (set before connecting).
    pub legacy: AtomicBool,
    /// How many calls saw their cancellation (`notifications/cancelled`).
    pub cancelled: AtomicUsize,
    /// The log level the client asked for (`logging/setLevel`).
    pub log_level: Mutex<Option<String>>,
    /// What the client answered to the elicitations asked by `elicit_later`.
    pub elicited: Mutex<Vec<String>>,
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
        let version = if self.state.legacy.load(Ordering::SeqCst) { "2025-06-18" } else { "2025-11-25" };
        from_json(json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": true}, "logging": {}},
            "serverInfo": {"name": "edge", "version": "1.0.0"},
            "instructions": "A server for edge cases."
        }))
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [rmcp::model::ProtocolVersion]> {
        use rmcp::model::ProtocolVersion;
        let newest = if self.state.legacy.load(Ordering::SeqCst) {
            ProtocolVersion::V_2025_06_18
        } else {
            ProtocolVersion::V_2025_11_25
        };
        std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(&newest))
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let level = serde_json::to_value(request.level).unwrap_or_default();
        *self.state.log_level.lock().unwrap() = level.as_str().map(str::to_string);
        Ok(())
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
            json!({"name": "elicit", "description": "Ask the user for a form.", "inputSchema": {"type": "object"}}),
            json!({"name": "elicit_later", "description": "Ask the user for a form, answering at once.", "inputSchema": {"type": "object"}}),
            json!({"name": "weather", "description": "A structured result.",
                   "inputSchema": {"type": "object", "properties": {"broken": {"type": "boolean"}}},
                   "outputSchema": {"type": "object", "properties": {"temperature": {"type": "number"}}, "required": ["temperature"]}}),
            json!({"name": "cancellable", "description": "Wait until cancelled.", "inputSchema": {"type": "object"}}),
            json!({"name": "report", "description": "Send progress and a log message.", "inputSchema": {"type": "object"}}),
            json!({"name": "roots", "description": "List the client's roots.", "inputSchema": {"type": "object"}}),
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
            "elicit" => Ok(text_result(match context.peer.create_elicitation(elicitation()).await {
                Ok(result) => serde_json::to_value(&result).unwrap_or_default().to_string(),
                Err(e) => format!("elicitation failed: {e}"),
            })),
            "elicit_later" => {
                let (peer, state) = (context.peer.clone(), self.state.clone());
                tokio::spawn(async move {
                    let outcome = match peer.create_elicitation(elicitation()).await {
                        Ok(result) => serde_json::to_value(&result).unwrap_or_default().to_string(),
                        Err(e) => format!("elicitation failed: {e}"),
                    };
                    state.elicited.lock().unwrap().push(outcome);
                });
                Ok(text_result("asked"))
            }
            "weather" => {
                let temperature = if args["broken"] == json!(true) { json!("warm") } else { json!(21.5) };
                Ok(from_json::<CallToolResult>(json!({
                    "content": [
                        {"type": "text", "text": json!({"temperature": temperature}).to_string()},
                        {"type": "resource_link", "uri": "test://forecast", "name": "forecast"},
                        {"type": "resource", "resource": {"uri": "test://station", "text": "Station 7, on the hill"}}
                    ],
                    "structuredContent": {"temperature": temperature}
                }))
                .into())
            }
            "cancellable" => {
                tokio::select! {
                    _ = context.ct.cancelled() => {
                        self.state.cancelled.fetch_add(1, Ordering::SeqCst);
                        Ok(text_result("cancelled"))
                    }
                    _ = tokio::time::sleep(Duration::from_secs(10)) => Ok(text_result("not cancelled")),
                }
            }
            "report" => {
                if let Some(token) = context.meta.get_progress_token() {
                    for step in 1..=2 {
                        let params = from_json::<rmcp::model::ProgressNotificationParam>(json!({
                            "progressToken": token, "progress": step, "total": 2, "message": format!("step {step}")
                        }));
                        let _ = context.peer.notify_progress(params).await;
                    }
                }
                let log = from_json(json!({"level": "warning", "logger": "edge", "data": "disk almost full"}));
                #[allow(deprecated)]
                let _ = context.peer.notify_logging_message(log).await;
                Ok(text_result("reported"))
            }
            "roots" => {
                #[allow(deprecated)]
                let roots = context.peer.list_roots().await;
                Ok(text_result(match roots {
                    Ok(result) => serde_json::to_value(&result).unwrap_or_default().to_string(),
                    Err(e) => format!("roots failed: {e}"),
                }))
            }
            "rpc_error" => Err(ErrorData::new(ErrorCode::INTERNAL_ERROR, "database is down", None)),
            other => Err(ErrorData::new(ErrorCode::INVALID_PARAMS, format!("Unknown tool: {other}"), None)),
        }
    }
}

/// A form of two fields, one with a default.
fn elicitation() -> rmcp::model::ElicitRequestParams {
    from_json(json!({
        "mode": "form",
        "message": "Who are you?",
        "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string"},
            "team": {"type": "string", "default": "maths"}
        }}
    }))
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
