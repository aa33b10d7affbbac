//! The connection shared by a toolset and its clones: the session (opened on demand, reopened
//! when dead, shared by the runs that use it) and the calls made through it.

use super::*;

/// The open session, and how many runs use it.
#[derive(Default)]
pub(super) struct Slot {
    pub(super) session: Option<Arc<Session>>,
    pub(super) runs: usize,
}

/// The state shared by a toolset and its clones.
pub(super) struct Inner {
    pub(super) settings: Settings,
    pub(super) slot: tokio::sync::Mutex<Slot>,
    pub(super) connections: AtomicU64,
}

impl Inner {
    /// The open session, opening one when there is none or it is dead.
    pub(super) async fn session(&self) -> Result<Arc<Session>, McpError> {
        let mut slot = self.slot.lock().await;
        self.open(&mut slot).await
    }

    pub(super) async fn open(&self, slot: &mut Slot) -> Result<Arc<Session>, McpError> {
        if let Some(session) = &slot.session {
            if session.is_alive() {
                return Ok(session.clone());
            }
            tracing::info!(server = %self.settings.server, "the MCP session was closed: reconnecting");
        }
        slot.session = None;
        let id = self.connections.fetch_add(1, Ordering::Relaxed) + 1;
        let session = session::connect(&self.settings, id).await.map_err(|e| e.redacted(&self.settings.redactor()))?;
        let session = Arc::new(session);
        slot.session = Some(session.clone());
        Ok(session)
    }

    /// A run starts: count it and make sure a session is open.
    pub(super) async fn enter(&self) -> Result<(), McpError> {
        let mut slot = self.slot.lock().await;
        slot.runs += 1;
        self.open(&mut slot).await.map(|_| ())
    }

    /// A run ends: in per-run mode, the last run out closes the session.
    pub(super) async fn exit(&self) {
        let session = {
            let mut slot = self.slot.lock().await;
            slot.runs = slot.runs.saturating_sub(1);
            if slot.runs == 0 && self.settings.session_mode == SessionMode::PerRun { slot.session.take() } else { None }
        };
        if let Some(session) = session {
            session::close(session).await;
        }
    }

    /// Drops `session` if it is still the open one, so that the next request reconnects.
    pub(super) async fn discard(&self, session: &Session) {
        let mut slot = self.slot.lock().await;
        if slot.session.as_ref().is_some_and(|s| s.id == session.id) {
            slot.session = None;
        }
    }

    /// Runs one request with the request timeout, mapping errors (with the HTTP credentials
    /// redacted) and dropping the session on a connection error. A message past the size limit
    /// fails the request at once.
    pub(super) async fn request<T, F>(&self, session: &Session, method: &str, fut: F) -> Result<T, McpError>
    where
        F: Future<Output = Result<T, rmcp::ServiceError>>,
    {
        let server = &self.settings.server;
        let result = tokio::select! {
            answer = tokio::time::timeout(self.settings.request_timeout + self.settings.auth_allowance(), fut) => match answer {
                Ok(Ok(v)) => return Ok(v),
                Ok(Err(e)) => session.error(server, method, e).await,
                Err(_) => McpError::Timeout {
                    server: server.to_string(),
                    method: method.to_string(),
                    timeout: self.settings.request_timeout,
                },
            },
            why = session.notes.wait_unreadable() => why.error(server, method),
        };
        let result = result.redacted(&self.settings.redactor());
        if result.is_connection_error() {
            self.discard(session).await;
        }
        Err(result)
    }

    /// The server's tools, from the session's cache when it is fresh.
    pub(super) async fn catalog(&self) -> Result<(Arc<Session>, Arc<Vec<CatalogTool>>), McpError> {
        let mut retried = false;
        loop {
            let session = self.session().await?;
            match self.list(&session).await {
                Ok(catalog) => return Ok((session, catalog)),
                // Listing has no side effects: a session found dead is reopened once.
                Err(e) if e.is_connection_error() && !retried && !matches!(e, McpError::Timeout { .. }) => {
                    tracing::info!(server = %self.settings.server, error = %e, "listing tools failed: reconnecting");
                    retried = true;
                }
                Err(e) => return Err(e),
            }
        }
    }

    pub(super) async fn list(&self, session: &Session) -> Result<Arc<Vec<CatalogTool>>, McpError> {
        let _refresh = session.catalog_refresh.lock().await;
        let changed = session.notes.tools_changed.swap(false, Ordering::AcqRel);
        if self.settings.cache_tools && !changed {
            let cached = session.catalog.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if let Some(catalog) = cached {
                return Ok(catalog);
            }
        }
        let tools = self.list_all(session).await?;
        let server = &self.settings.server;
        if let Some(allowed) = &self.settings.allowed_tools {
            for name in allowed.iter().filter(|n| !tools.iter().any(|t| t.name == n.as_str())) {
                tracing::warn!(server = %server, tool = %name, "`allowed_tools` names a tool the MCP server does not list");
            }
        }
        let catalog: Vec<CatalogTool> = tools
            .iter()
            .filter(|t| self.settings.allowed(&t.name))
            .map(|t| convert::catalog_tool(server, t, self.settings.validate_args))
            .collect();
        let catalog = Arc::new(catalog);
        *session.catalog.lock().unwrap_or_else(|p| p.into_inner()) = Some(catalog.clone());
        Ok(catalog)
    }

    /// Every page of `tools/list`. A page rmcp cannot read as a whole (a tool without its
    /// `inputSchema`, say) is read tool by tool: see [`convert::lenient_tools`].
    async fn list_all(&self, session: &Session) -> Result<Vec<rmcp::model::Tool>, McpError> {
        use rmcp::model::{ClientRequest, ListToolsRequest, PaginatedRequestParams, ServerResult};
        let server = &self.settings.server;
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut cursors = std::collections::HashSet::new();
        loop {
            let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
            let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
            let page = self.request(session, "tools/list", session.service.peer().send_request(request)).await?;
            let next = match page {
                ServerResult::ListToolsResult(page) => {
                    tools.extend(page.tools);
                    page.next_cursor
                }
                other => {
                    let value = serde_json::to_value(&other).unwrap_or(Value::Null);
                    let (page, next) = convert::lenient_tools(server, &value).map_err(|message| {
                        McpError::ConnectionLost {
                            server: server.to_string(),
                            method: "tools/list".to_string(),
                            message,
                        }
                        .redacted(&self.settings.redactor())
                    })?;
                    tools.extend(page);
                    next
                }
            };
            match next {
                Some(next) if cursors.insert(next.clone()) => cursor = Some(next),
                Some(next) => {
                    tracing::warn!(server = %server, cursor = %next, "the MCP server repeated a tools/list cursor: listing stopped there");
                    break;
                }
                None => break,
            }
        }
        Ok(tools)
    }

    pub(super) async fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<(Arc<Session>, McpCallResult), McpError> {
        let session = self.session().await?;
        let mut params = rmcp::model::CallToolRequestParams::new(name.to_string());
        if !arguments.is_empty() {
            params = params.with_arguments(arguments);
        }
        let method = format!("tools/call '{name}'");
        let result = self.request(&session, &method, session.service.call_tool(params)).await?;
        Ok((session, McpCallResult::from_rmcp(result).redacted(&self.settings.redactor())))
    }

    /// Reads a resource link's contents (as MCP JSON), or `None` when the server cannot.
    pub(super) async fn read_link(&self, session: &Session, uri: String) -> Option<Vec<Value>> {
        let method = format!("resources/read '{uri}'");
        let params = rmcp::model::ReadResourceRequestParams::new(uri);
        match self.request(session, &method, session.service.read_resource(params)).await {
            Ok(result) => Some(result.contents.iter().filter_map(|c| serde_json::to_value(c).ok()).collect()),
            Err(e) => {
                tracing::debug!(server = %self.settings.server, error = %e, "could not read a resource link");
                None
            }
        }
    }

    /// A call made by the model: the server's result as a tool output, `isError` and JSON-RPC
    /// errors as retries.
    pub(super) async fn call_for_model(&self, name: &str, args: Value, tool: &ModelCall) -> ToolResult {
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ToolError::Retry(ModelRetry::new(format!(
                    "The arguments of tool '{name}' must be a JSON object, got {other}"
                ))));
            }
        };
        let (session, result) = self.call(name, arguments).await.map_err(McpError::into_tool_error)?;
        if result.is_error {
            return Err(ToolError::Retry(ModelRetry::new(result.error_message())));
        }
        if let Some(output) = &tool.output {
            client::structured::check(name, output, result.structured_content.as_ref())
                .map_err(|message| ToolError::Retry(ModelRetry::new(message)))?;
        }
        Ok(convert::tool_output(&result, tool.wrap_result, |uri| self.read_link(&session, uri)).await)
    }
}

/// What a model's call of a tool needs to know of it besides its name.
pub(super) struct ModelCall {
    wrap_result: bool,
    output: Option<crate::validation::Validator>,
}

pub(super) fn handler<D>(inner: &Arc<Inner>, tool: &CatalogTool) -> Handler<D> {
    let inner = inner.clone();
    let name: Arc<str> = Arc::from(tool.def.name.as_str());
    let call = Arc::new(ModelCall { wrap_result: tool.wrap_result, output: tool.output.clone() });
    Handler::Plain(Arc::new(move |args: std::borrow::Cow<'_, Value>| {
        let args = args.into_owned();
        let inner = inner.clone();
        let name = name.clone();
        let call = call.clone();
        Invocation::Async(Box::pin(async move { inner.call_for_model(&name, args, &call).await }))
    }))
}
