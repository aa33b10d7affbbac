//! What a server tells the client without being asked: log messages, progress, resources and
//! lists that changed. Given to the application's callback
//! ([`McpToolset::on_notification`](crate::toolset::McpToolset::on_notification)); log messages
//! are also written to the `tracing` log.

use std::sync::Arc;

use serde_json::Value;

/// A notification from an MCP server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum McpNotification {
    /// A log message (`notifications/message`).
    Log {
        /// The server, as named in messages.
        server: String,
        /// The severity: `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert` or
        /// `emergency`.
        level: String,
        /// The logger that wrote it, if named.
        logger: Option<String>,
        /// The message (any JSON).
        data: Value,
    },
    /// Progress of a request (`notifications/progress`): every request carries a progress
    /// token, which the server quotes.
    Progress {
        /// The server, as named in messages.
        server: String,
        /// The request's progress token, as MCP JSON (a number or a string).
        token: Value,
        /// The progress so far.
        progress: f64,
        /// The total, when known.
        total: Option<f64>,
        /// What is being done.
        message: Option<String>,
    },
    /// A resource the client subscribed to changed (`notifications/resources/updated`).
    ResourceUpdated {
        /// The server, as named in messages.
        server: String,
        /// The resource.
        uri: String,
    },
    /// The server's tools changed; the toolset lists them again before the next step.
    ToolsChanged {
        /// The server, as named in messages.
        server: String,
    },
    /// The server's resources changed.
    ResourcesChanged {
        /// The server, as named in messages.
        server: String,
    },
    /// The server's prompts changed.
    PromptsChanged {
        /// The server, as named in messages.
        server: String,
    },
}

/// The application's notification callback, as the toolset keeps it.
pub(crate) type NotificationFn = Arc<dyn Fn(McpNotification) + Send + Sync>;

/// Writes a server's log message to the `tracing` log at its level.
pub(crate) fn trace_log(server: &str, level: &str, logger: &str, data: &Value) {
    match level {
        "debug" => tracing::debug!(server, logger, data = %data, "MCP server log"),
        "info" | "notice" => tracing::info!(server, logger, data = %data, "MCP server log"),
        "warning" => tracing::warn!(server, logger, data = %data, "MCP server log"),
        _ => tracing::error!(server, logger, data = %data, "MCP server log"),
    }
}
