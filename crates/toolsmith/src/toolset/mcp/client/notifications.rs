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
        /// The severity.
        level: McpLogLevel,
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

/// The severity of a server's log message (RFC 5424's levels, as MCP names them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum McpLogLevel {
    /// `debug`
    Debug,
    /// `info`
    Info,
    /// `notice`
    Notice,
    /// `warning`
    Warning,
    /// `error`
    Error,
    /// `critical`
    Critical,
    /// `alert`
    Alert,
    /// `emergency`
    Emergency,
}

impl McpLogLevel {
    const ALL: [McpLogLevel; 8] = [
        McpLogLevel::Debug,
        McpLogLevel::Info,
        McpLogLevel::Notice,
        McpLogLevel::Warning,
        McpLogLevel::Error,
        McpLogLevel::Critical,
        McpLogLevel::Alert,
        McpLogLevel::Emergency,
    ];

    /// The level's name in MCP (`debug`, `info`...).
    pub fn as_str(self) -> &'static str {
        match self {
            McpLogLevel::Debug => "debug",
            McpLogLevel::Info => "info",
            McpLogLevel::Notice => "notice",
            McpLogLevel::Warning => "warning",
            McpLogLevel::Error => "error",
            McpLogLevel::Critical => "critical",
            McpLogLevel::Alert => "alert",
            McpLogLevel::Emergency => "emergency",
        }
    }

    /// The level named `name`, if it is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

impl std::fmt::Display for McpLogLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The application's notification callback, as the toolset keeps it.
pub(crate) type NotificationFn = Arc<dyn Fn(McpNotification) + Send + Sync>;

/// Writes a server's log message to the `tracing` log at its level.
pub(crate) fn trace_log(server: &str, level: McpLogLevel, logger: &str, data: &Value) {
    match level {
        McpLogLevel::Debug => tracing::debug!(server, logger, data = %data, "MCP server log"),
        McpLogLevel::Info | McpLogLevel::Notice => tracing::info!(server, logger, data = %data, "MCP server log"),
        McpLogLevel::Warning => tracing::warn!(server, logger, data = %data, "MCP server log"),
        _ => tracing::error!(server, logger, data = %data, "MCP server log"),
    }
}

/// Asks the server (when it has the `logging` capability) to send log messages from `level`
/// up (`logging/setLevel`), waiting at most `timeout`; a refusal is logged, not an error.
#[allow(deprecated)]
pub(crate) async fn set_level(
    service: &rmcp::service::RunningService<rmcp::service::RoleClient, super::handler::ClientState>,
    server: &str,
    level: McpLogLevel,
    timeout: std::time::Duration,
) {
    let has_logging = service.peer().peer_info().is_some_and(|info| info.capabilities.logging.is_some());
    if !has_logging {
        tracing::debug!(server, "the MCP server has no logging capability: no log level set");
        return;
    }
    let params = serde_json::from_value(serde_json::json!({ "level": level.as_str() }));
    let Ok(params) = params else { return };
    match tokio::time::timeout(timeout, service.peer().set_level(params)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(server, error = %e, "the MCP server refused logging/setLevel"),
        Err(_) => tracing::warn!(server, "the MCP server did not answer logging/setLevel in time"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_named_as_in_mcp() {
        for level in McpLogLevel::ALL {
            assert_eq!(McpLogLevel::from_name(level.as_str()), Some(level));
        }
        assert!(McpLogLevel::Warning > McpLogLevel::Info);
        assert_eq!(McpLogLevel::from_name("loud"), None);
    }
}
