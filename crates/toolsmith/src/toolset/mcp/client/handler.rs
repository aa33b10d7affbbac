//! rmcp's `ClientHandler` for a session: the capabilities the client advertises, and the
//! server's requests (sampling, elicitation, roots) and notifications routed to what the
//! application gave the toolset. Every handler the application gave is bounded by the request
//! timeout, so that a server is never left waiting for an answer that does not come.

// Sampling, roots and logging are deprecated in the newest protocol revision (SEP-2577) but still
// used by servers on the revisions this client speaks.
#![allow(deprecated)]

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::FutureExt;
use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ErrorCode, ErrorData, Implementation, ListRootsResult, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProtocolVersion, ResourceUpdatedNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::{Value, json};

use super::super::Settings;
use super::super::session::SessionNotes;
use super::notifications::{McpLogLevel, McpNotification, trace_log};
use super::{ClientOptions, elicitation};

/// The client side of a session.
pub(crate) struct ClientState {
    info: ClientConfig,
    server: Arc<str>,
    notes: Arc<SessionNotes>,
    options: ClientOptions,
    /// How long a handler of the application's may take to answer the server.
    timeout: Duration,
}

impl ClientState {
    pub(crate) fn new(settings: &Settings, notes: Arc<SessionNotes>) -> Self {
        ClientState {
            info: client_info(settings),
            server: settings.server.clone(),
            notes,
            options: settings.client.clone(),
            timeout: settings.request_timeout,
        }
    }

    /// Gives a notification to the application's callback; a panic there is logged, and the
    /// session goes on.
    fn notify(&self, notification: McpNotification) {
        if let Some(callback) = &self.options.notifications
            && std::panic::catch_unwind(AssertUnwindSafe(|| callback(notification))).is_err()
        {
            tracing::error!(server = %self.server, "the MCP notification callback panicked");
        }
    }

    /// Runs a handler of the application's with the request timeout; a handler that panics or
    /// does not answer in time is answered for with an error.
    async fn bounded<T>(&self, what: &str, fut: impl Future<Output = T>) -> Result<T, ErrorData> {
        match tokio::time::timeout(self.timeout, AssertUnwindSafe(fut).catch_unwind()).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => {
                tracing::error!(server = %self.server, "the client's {what} handler panicked");
                Err(internal(format!("the client's {what} handler failed")))
            }
            Err(_) => {
                tracing::warn!(server = %self.server, "the client's {what} handler did not answer in time");
                Err(internal(format!(
                    "the client's {what} handler did not answer within {} s",
                    self.timeout.as_secs_f64()
                )))
            }
        }
    }
}

/// The capabilities advertised: sampling, elicitation (form and URL) and roots, each only when
/// the application gave what answers it.
fn client_info(settings: &Settings) -> ClientConfig {
    let mut caps = serde_json::Map::new();
    if settings.client.sampling.is_some() {
        caps.insert("sampling".into(), json!({}));
    }
    if settings.client.elicitation.is_some() {
        caps.insert("elicitation".into(), json!({"form": {}, "url": {}}));
    }
    if settings.client.roots.is_some() {
        caps.insert("roots".into(), json!({"listChanged": true}));
    }
    let capabilities: ClientCapabilities = serde_json::from_value(Value::Object(caps)).unwrap_or_default();
    ClientConfig::new(capabilities, Implementation::new(settings.client_name.clone(), settings.client_version.clone()))
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

fn internal(message: String) -> ErrorData {
    ErrorData::new(ErrorCode::INTERNAL_ERROR, message, None)
}

impl ClientHandler for ClientState {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(handler) = &self.options.sampling else {
            tracing::info!(server = %self.server, "refused a sampling request: no sampling model or handler was given");
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "This client does not support sampling: no sampling model or handler was configured.",
                None,
            ));
        };
        let params = serde_json::to_value(&params).map_err(|e| internal(e.to_string()))?;
        let result = self
            .bounded("sampling", handler(params))
            .await?
            .map_err(|message| ErrorData::new(ErrorCode(-1), message, None))?;
        serde_json::from_value(result)
            .map_err(|e| internal(format!("the client's sampling handler returned an invalid result: {e}")))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(handler) = &self.options.elicitation else {
            tracing::info!(server = %self.server, "refused an elicitation request: no elicitation handler was given");
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "This client does not support elicitation: no elicitation handler was configured.",
                None,
            ));
        };
        let params = serde_json::to_value(&request).map_err(|e| internal(e.to_string()))?;
        let elicitation = elicitation::from_params(&self.server, &params);
        let response = self.bounded("elicitation", handler(elicitation.clone())).await?;
        serde_json::from_value(elicitation::to_result(&elicitation, response))
            .map_err(|e| internal(format!("the client's elicitation answer cannot be sent: {e}")))
    }

    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        let Some(roots) = &self.options.roots else {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "This client does not offer roots: none were configured.",
                None,
            ));
        };
        let roots: Vec<Value> = roots.read().unwrap_or_else(|p| p.into_inner()).iter().map(|r| r.to_json()).collect();
        serde_json::from_value(json!({ "roots": roots })).map_err(|e| internal(e.to_string()))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "the server's tool list changed");
        self.notes.tools_changed.store(true, Ordering::Release);
        self.notify(McpNotification::ToolsChanged { server: self.server.to_string() });
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notify(McpNotification::ResourcesChanged { server: self.server.to_string() });
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notify(McpNotification::PromptsChanged { server: self.server.to_string() });
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.notify(McpNotification::ResourceUpdated { server: self.server.to_string(), uri: params.uri });
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.notify(McpNotification::Progress {
            server: self.server.to_string(),
            token: serde_json::to_value(&params.progress_token).unwrap_or(Value::Null),
            progress: params.progress,
            total: params.total,
            message: params.message,
        });
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level).ok();
        let level =
            level.as_ref().and_then(Value::as_str).and_then(McpLogLevel::from_name).unwrap_or(McpLogLevel::Info);
        trace_log(&self.server, level, params.logger.as_deref().unwrap_or(""), &params.data);
        self.notify(McpNotification::Log {
            server: self.server.to_string(),
            level,
            logger: params.logger,
            data: params.data,
        });
    }
}
