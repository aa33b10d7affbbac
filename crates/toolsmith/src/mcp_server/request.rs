//! [`McpRequest`]: what a tool called through the MCP server can ask of the client that called
//! it (log messages, progress, elicitation, sampling), reached through a task-local.
// Logging and sampling are deprecated by rmcp for the draft protocol 2026-07-28, which drops them;
// protocol 2025-11-25, which clients speak, has them.
#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, ElicitationAction, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken,
};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::error::ClientRequestError;

tokio::task_local! {
    static CURRENT: McpRequest;
}

/// The severity of a log message sent to the client (`notifications/message`), lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum LogLevel {
    /// Debugging detail.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// A warning.
    Warning,
    /// An error.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    fn rmcp(self) -> LoggingLevel {
        match self {
            LogLevel::Debug => LoggingLevel::Debug,
            LogLevel::Info => LoggingLevel::Info,
            LogLevel::Notice => LoggingLevel::Notice,
            LogLevel::Warning => LoggingLevel::Warning,
            LogLevel::Error => LoggingLevel::Error,
            LogLevel::Critical => LoggingLevel::Critical,
            LogLevel::Alert => LoggingLevel::Alert,
            LogLevel::Emergency => LoggingLevel::Emergency,
        }
    }

    pub(super) fn from_rmcp(level: LoggingLevel) -> Self {
        match level {
            LoggingLevel::Debug => LogLevel::Debug,
            LoggingLevel::Info => LogLevel::Info,
            LoggingLevel::Notice => LogLevel::Notice,
            LoggingLevel::Warning => LogLevel::Warning,
            LoggingLevel::Error => LogLevel::Error,
            LoggingLevel::Critical => LogLevel::Critical,
            LoggingLevel::Alert => LogLevel::Alert,
            LoggingLevel::Emergency => LogLevel::Emergency,
        }
    }
}

/// The lowest level a session's client asked for (`logging/setLevel`); debug until it asks.
#[derive(Debug, Default)]
pub(super) struct SessionLevel(AtomicU8);

impl SessionLevel {
    pub(super) fn set(&self, level: LogLevel) {
        self.0.store(level as u8, Ordering::Relaxed);
    }

    fn allows(&self, level: LogLevel) -> bool {
        level as u8 >= self.0.load(Ordering::Relaxed)
    }
}

/// What the user answered to an elicitation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Elicitation {
    /// Accepted, with the content filled in (an object matching the requested schema).
    Accept(Value),
    /// Declined.
    Decline,
    /// Dismissed without a choice.
    Cancel,
}

/// The client's answer to a sampling request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Sampled {
    /// The text of the answer (empty when it holds no text).
    pub text: String,
    /// The model that answered, as the client names it.
    pub model: String,
    /// The whole result as the client sent it (`CreateMessageResult`).
    pub raw: Value,
}

/// The MCP request a tool is running for: the client that called it, the call's progress token
/// and cancellation.
///
/// A tool served by [`McpServer`](super::McpServer) reaches it with [`McpRequest::current`]
/// (a task-local set for the duration of the call; `None` when the tool runs in an agent run
/// or in a test). Its methods are async: a synchronous tool gets `None` and should be made
/// async to talk to the client.
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::mcp_server::{LogLevel, McpRequest};
///
/// /// Counts to ten, reporting progress to the MCP client.
/// #[tool]
/// async fn count() -> String {
///     if let Some(request) = McpRequest::current() {
///         request.log(LogLevel::Info, "counting").await;
///         for i in 0..=10 {
///             request.progress(f64::from(i), Some(10.0), None).await;
///         }
///     }
///     "done".into()
/// }
/// ```
#[derive(Clone)]
pub struct McpRequest {
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    cancel: CancellationToken,
    level: Arc<SessionLevel>,
}

impl std::fmt::Debug for McpRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRequest").field("progress_token", &self.progress_token).finish_non_exhaustive()
    }
}

impl McpRequest {
    pub(super) fn new(
        peer: Peer<RoleServer>,
        progress_token: Option<ProgressToken>,
        cancel: CancellationToken,
        level: Arc<SessionLevel>,
    ) -> Self {
        McpRequest { peer, progress_token, cancel, level }
    }

    /// The request the current tool call is running for, if it runs under an MCP server.
    pub fn current() -> Option<McpRequest> {
        CURRENT.try_with(Clone::clone).ok()
    }

    /// Runs `fut` with this request as [`McpRequest::current`].
    pub(super) async fn scope<F: Future>(self, fut: F) -> F::Output {
        CURRENT.scope(self, fut).await
    }

    /// Whether the client cancelled the call (`notifications/cancelled`). The server stops
    /// waiting for a cancelled call and drops its future; a tool that loops can stop early.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Sends a log message, unless the client asked for a higher level. Failures to send
    /// (a client gone) are ignored: logging never fails a call.
    pub async fn log(&self, level: LogLevel, data: impl Into<Value>) {
        if !self.level.allows(level) {
            return;
        }
        let param = LoggingMessageNotificationParam::new(level.rmcp(), data.into());
        let _ = self.peer.notify_logging_message(param).await;
    }

    /// Reports progress, when the client asked for it (sent a progress token); otherwise does
    /// nothing. `progress` should grow from call to call.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = &self.progress_token else { return };
        let mut param = ProgressNotificationParam::new(token.clone(), progress);
        param.total = total;
        param.message = message.map(str::to_string);
        let _ = self.peer.notify_progress(param).await;
    }

    /// Whether the client declared the elicitation capability.
    pub fn can_elicit(&self) -> bool {
        self.peer.peer_info().is_some_and(|info| info.capabilities.elicitation.is_some())
    }

    /// Whether the client declared the sampling capability.
    pub fn can_sample(&self) -> bool {
        self.peer.peer_info().is_some_and(|info| info.capabilities.sampling.is_some())
    }

    /// Asks the user, through the client, to fill in a form (`elicitation/create`): `schema`
    /// is the requested schema, an object of primitive properties.
    pub async fn elicit(&self, message: impl Into<String>, schema: Value) -> Result<Elicitation, ClientRequestError> {
        if !self.can_elicit() {
            return Err(ClientRequestError::Unsupported { capability: "elicitation" });
        }
        let params: ElicitRequestParams =
            serde_json::from_value(json!({"mode": "form", "message": message.into(), "requestedSchema": schema}))
                .map_err(|e| ClientRequestError::Invalid { what: "elicitation schema", message: e.to_string() })?;
        let result = self
            .peer
            .create_elicitation(params)
            .await
            .map_err(|e| ClientRequestError::Failed { method: "elicitation/create", message: e.to_string() })?;
        Ok(match result.action {
            ElicitationAction::Accept => Elicitation::Accept(result.content.unwrap_or_else(|| json!({}))),
            ElicitationAction::Decline => Elicitation::Decline,
            _ => Elicitation::Cancel,
        })
    }

    /// Asks the client's model for a completion of one user message (`sampling/createMessage`).
    pub async fn sample(&self, prompt: impl Into<String>, max_tokens: u32) -> Result<Sampled, ClientRequestError> {
        let params = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt.into()}}],
            "maxTokens": max_tokens,
        });
        self.sample_with(params).await
    }

    /// [`sample`](Self::sample) with the request's parameters written as MCP's JSON
    /// (`messages`, `maxTokens`, `systemPrompt`, `modelPreferences`...).
    pub async fn sample_with(&self, params: Value) -> Result<Sampled, ClientRequestError> {
        if !self.can_sample() {
            return Err(ClientRequestError::Unsupported { capability: "sampling" });
        }
        let params: CreateMessageRequestParams = serde_json::from_value(params)
            .map_err(|e| ClientRequestError::Invalid { what: "sampling request", message: e.to_string() })?;
        #[allow(deprecated)] // sampling is deprecated by a draft of the protocol, not by 2025-11-25
        let result = self
            .peer
            .create_message(params)
            .await
            .map_err(|e| ClientRequestError::Failed { method: "sampling/createMessage", message: e.to_string() })?;
        let raw = serde_json::to_value(&result).unwrap_or(Value::Null);
        let text = sampled_text(&raw["content"]);
        let model = raw["model"].as_str().unwrap_or_default().to_string();
        Ok(Sampled { text, model, raw })
    }
}

/// The text of a sampled message's content: one block or a list of them.
fn sampled_text(content: &Value) -> String {
    match content {
        Value::Array(items) => items.iter().filter_map(|c| c["text"].as_str()).collect::<Vec<_>>().join(""),
        other => other["text"].as_str().unwrap_or_default().to_string(),
    }
}
