//! The rmcp `ServerHandler` of one MCP session: tools from the toolset, resources, prompts,
//! logging level, completions and resource subscriptions; the session's peer kept once it is
//! initialized, for `McpServer::notify_tools_changed`.
// Logging and sampling are deprecated by rmcp for the draft protocol 2026-07-28, which drops them;
// protocol 2025-11-25, which clients speak, has them.
#![allow(deprecated)]

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, GetPromptRequestParams,
    GetPromptResponse, InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    SetLevelRequestParams, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::Shared;
use super::call::{CallSetup, call_tool};
use super::convert;
use super::request::{LogLevel, McpRequest, SessionLevel};
use crate::context::RunContext;
use crate::toolset::ToolsetTool;

/// One client's session: the server's shared state and what the client set for itself.
pub(super) struct Session<D> {
    server: Arc<Shared<D>>,
    level: Arc<SessionLevel>,
    subscriptions: Mutex<HashSet<String>>,
}

impl<D> Session<D> {
    pub(super) fn new(server: Arc<Shared<D>>) -> Self {
        Session { server, level: Arc::default(), subscriptions: Mutex::default() }
    }
}

/// A value of an rmcp type from MCP's JSON (its types are non-exhaustive: the JSON is the
/// stable shape).
fn from_json<T: DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(format!("malformed result: {e}"), None))
}

impl<D: Clone + Send + Sync + 'static> Session<D> {
    async fn tools(&self) -> Result<Vec<ToolsetTool<D>>, ErrorData> {
        let ctx = RunContext::with_deps(self.server.deps.clone());
        self.server
            .toolset
            .get_tools_boxed(&ctx)
            .await
            .map_err(|e| ErrorData::internal_error(format!("the tools could not be listed: {e}"), None))
    }
}

impl<D: Clone + Send + Sync + 'static> ServerHandler for Session<D> {
    fn get_info(&self) -> InitializeResult {
        let s = &self.server;
        let mut caps = json!({"tools": {"listChanged": true}, "logging": {}, "completions": {}});
        if !s.resources.is_empty() || !s.templates.is_empty() {
            caps["resources"] = json!({"subscribe": true, "listChanged": false});
        }
        if !s.prompts.is_empty() {
            caps["prompts"] = json!({"listChanged": false});
        }
        let capabilities: ServerCapabilities = serde_json::from_value(caps).unwrap_or_default();
        let mut info = InitializeResult::new(capabilities);
        info.server_info =
            serde_json::from_value(json!({"name": s.name, "version": s.version})).unwrap_or(info.server_info);
        info.instructions = s.instructions.clone();
        info
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut peers = self.server.peers.lock().unwrap_or_else(|p| p.into_inner());
        peers.retain(|peer| !peer.is_transport_closed());
        peers.push(context.peer);
    }

    async fn set_level(&self, request: SetLevelRequestParams, _: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.level.set(LogLevel::from_rmcp(request.level));
        Ok(())
    }

    async fn complete(
        &self,
        _: CompleteRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        Ok(CompleteResult::default())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools: Vec<Value> = self
            .tools()
            .await?
            .iter()
            .filter_map(|t| convert::mcp_tool(&t.def))
            .filter_map(|t| serde_json::to_value(t).ok())
            .collect();
        from_json(json!({"tools": tools}))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tools = self.tools().await?;
        let Some(tool) = tools.iter().find(|t| t.def.name == request.name) else {
            return Err(ErrorData::invalid_params(format!("Unknown tool: {}", request.name), None));
        };
        let mut ctx = RunContext::with_deps(self.server.deps.clone());
        ctx.tool_name = Some(tool.def.name.clone());
        ctx.tool_call_id = Some(context.id.to_string());
        ctx.max_retries = tool.max_retries.unwrap_or(0);
        let progress = context.meta.get_progress_token();
        let setup = CallSetup {
            ctx,
            timeout: tool.def.timeout.or(tool.toolset_timeout).or(self.server.timeout),
            request: McpRequest::new(context.peer.clone(), progress, context.ct.clone(), self.level.clone()),
            cancel: context.ct.clone(),
        };
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        Ok(CallToolResponse::Complete(call_tool(tool, args, setup).await))
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources: Vec<Value> = self.server.resources.iter().map(|r| r.listing(false)).collect();
        from_json(json!({"resources": resources}))
    }

    async fn list_resource_templates(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates: Vec<Value> = self.server.templates.iter().map(|t| t.0.listing(true)).collect();
        from_json(json!({"resourceTemplates": templates}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let found = match self.server.resources.iter().find(|r| r.uri == uri) {
            Some(resource) => Some((resource, HashMap::new())),
            None => self.server.templates.iter().find_map(|t| t.matches(uri).map(|vars| (&t.0, vars))),
        };
        let Some((resource, vars)) = found else {
            return Err(ErrorData::resource_not_found(format!("Resource not found: {uri}"), Some(json!({"uri": uri}))));
        };
        let contents = resource.read(uri, vars).await.map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(ReadResourceResponse::Complete(from_json(contents)?))
    }

    async fn subscribe(&self, request: SubscribeRequestParams, _: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).insert(request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).remove(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts: Vec<Value> = self.server.prompts.iter().map(|p| p.listing()).collect();
        from_json(json!({"prompts": prompts}))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let Some(prompt) = self.server.prompts.iter().find(|p| p.name == request.name) else {
            return Err(ErrorData::invalid_params(format!("Unknown prompt: {}", request.name), None));
        };
        let args: HashMap<String, String> =
            request.arguments.unwrap_or_default().into_iter().map(|(k, v)| (k, convert::value_text(&v))).collect();
        let result = prompt.get(args).await.map_err(|e| ErrorData::invalid_params(e, None))?;
        Ok(GetPromptResponse::Complete(from_json(result)?))
    }
}
