//! [`McpError`]: what can go wrong talking to an MCP server.

use std::time::Duration;

use serde_json::Value;

use crate::error::UserError;
use crate::tool::{ModelRetry, ToolError};

/// What went wrong talking to an MCP server. Each message names the server and says what to do.
///
/// In an agent run, an error while connecting or listing tools ends the run as
/// [`AgentRunError::ToolsetUnavailable`](crate::AgentRunError::ToolsetUnavailable) (a
/// misconfiguration as a [`UserError`]), unless the toolset is
/// [`optional`](crate::toolset::ToolsetExt::optional); during a call,
/// a JSON-RPC error answered by the server is a retry for the model (the server's message is sent
/// back, as Pydantic AI does), and every other error ends the run as a tool failure of kind
/// `McpError`. After a lost connection or a timeout the session is dropped, and the next call or
/// step reconnects.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The configuration cannot work: an empty command, an invalid header...
    #[error("MCP server '{server}' is misconfigured: {message}")]
    Config {
        /// The server, as named in messages.
        server: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// The server's process could not be started.
    #[error(
        "could not start MCP server '{server}' (`{command}`): {message}. Check that the command exists, is executable and is on PATH"
    )]
    Spawn {
        /// The server, as named in messages.
        server: String,
        /// The command line.
        command: String,
        /// The operating system's error.
        message: String,
    },
    /// The connection or the `initialize` handshake failed.
    #[error("could not connect to MCP server '{server}': {message}")]
    Connect {
        /// The server, as named in messages.
        server: String,
        /// What failed (with the last lines the server wrote to stderr, when there are any).
        message: String,
    },
    /// The `initialize` handshake did not finish in time.
    #[error(
        "MCP server '{server}' did not finish the initialize handshake within {}: raise `connect_timeout` if it is slow to start{detail}",
        secs(*timeout)
    )]
    ConnectTimeout {
        /// The server, as named in messages.
        server: String,
        /// The connect timeout.
        timeout: Duration,
        /// The last lines the server wrote to stderr, when there are any.
        detail: String,
    },
    /// A request got no answer in time. The session is dropped and the next request reconnects.
    #[error(
        "MCP server '{server}' did not answer {method} within {}: the session was dropped and the next call reconnects (raise `request_timeout` if the server is just slow)",
        secs(*timeout)
    )]
    Timeout {
        /// The server, as named in messages.
        server: String,
        /// The request, e.g. `tools/call 'echo'`.
        method: String,
        /// The request timeout.
        timeout: Duration,
    },
    /// The connection was lost (the server exited or crashed, or the network failed) or the server
    /// broke the protocol. The session is dropped and the next request reconnects.
    #[error("the connection to MCP server '{server}' was lost during {method}: {message}. The next call reconnects")]
    ConnectionLost {
        /// The server, as named in messages.
        server: String,
        /// The request, e.g. `tools/call 'echo'`.
        method: String,
        /// What happened (with the last lines the server wrote to stderr, when there are any).
        message: String,
    },
    /// The server sent a message (one JSON-RPC message: a line over stdio, an event over HTTP)
    /// larger than the limit ([`McpToolset::max_message_size`](super::McpToolset::max_message_size)).
    /// The requests waiting on the session fail at once; the session is dropped and the next
    /// request reconnects.
    #[error(
        "MCP server '{server}' sent a message larger than {max_bytes} bytes, the limit, during {method}: the session was dropped and the next call reconnects (raise `max_message_size` if the server's results are that large)"
    )]
    MessageTooLarge {
        /// The server, as named in messages.
        server: String,
        /// The request, e.g. `tools/call 'echo'`.
        method: String,
        /// The limit, in bytes.
        max_bytes: usize,
    },
    /// The server sent a message nested deeper than a JSON parser reads (serde_json's 127
    /// levels): the session was dropped, and every request waiting on it failed at once.
    #[error(
        "MCP server '{server}' sent a message nested deeper than {max_depth} levels, more than its JSON-RPC messages are read to, during {method}: the session was dropped and the next call reconnects"
    )]
    MessageTooDeep {
        /// The server, as named in messages.
        server: String,
        /// The request, e.g. `tools/call 'echo'`.
        method: String,
        /// The limit, in levels of arrays and objects.
        max_depth: usize,
    },
    /// Authorizing with the server (OAuth, see [`McpAuth`](super::McpAuth)) failed.
    #[error("could not authorize with MCP server '{server}': {error}")]
    Auth {
        /// The server, as named in messages.
        server: String,
        /// What failed.
        #[source]
        error: super::McpAuthError,
    },
    /// The server answered a request with a JSON-RPC error.
    #[error("MCP server '{server}' answered {method} with error {code}: {message}")]
    Server {
        /// The server, as named in messages.
        server: String,
        /// The request, e.g. `tools/call 'echo'`.
        method: String,
        /// The JSON-RPC error code.
        code: i32,
        /// The server's message.
        message: String,
        /// The error's `data`, if any.
        data: Option<Value>,
    },
}

/// A JSON value with its strings (and keys) redacted.
pub(super) fn redact_value(v: Value, redactor: &super::redact::Redactor) -> Value {
    match v {
        Value::String(s) => Value::String(redactor.redact(&s).into_owned()),
        Value::Array(items) => Value::Array(items.into_iter().map(|i| redact_value(i, redactor)).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter().map(|(k, v)| (redactor.redact(&k).into_owned(), redact_value(v, redactor))).collect(),
        ),
        other => other,
    }
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 { format!("{s:.0} s") } else { format!("{s} s") }
}

impl McpError {
    /// Whether the session was dropped because of this error (the next request reconnects).
    pub fn is_connection_error(&self) -> bool {
        matches!(
            self,
            McpError::Timeout { .. }
                | McpError::ConnectionLost { .. }
                | McpError::MessageTooLarge { .. }
                | McpError::MessageTooDeep { .. }
        )
    }

    /// The error with the redactor's secrets (the HTTP headers and bearer token) removed from
    /// every text the server or the transport produced.
    pub(crate) fn redacted(self, redactor: &super::redact::Redactor) -> McpError {
        if redactor.is_empty() {
            return self;
        }
        let r = |text: String| redactor.redact(&text).into_owned();
        match self {
            McpError::Config { server, message } => McpError::Config { server, message: r(message) },
            McpError::Spawn { server, command, message } => McpError::Spawn { server, command, message: r(message) },
            McpError::Connect { server, message } => McpError::Connect { server, message: r(message) },
            McpError::ConnectTimeout { server, timeout, detail } => {
                McpError::ConnectTimeout { server, timeout, detail: r(detail) }
            }
            McpError::ConnectionLost { server, method, message } => {
                McpError::ConnectionLost { server, method, message: r(message) }
            }
            McpError::Server { server, method, code, message, data } => McpError::Server {
                server,
                method,
                code,
                message: r(message),
                data: data.map(|d| redact_value(d, redactor)),
            },
            other => other,
        }
    }

    /// The error as a tool call's result: a JSON-RPC error from the server is a retry carrying
    /// the server's message; anything else ends the run as a failure of kind `McpError`.
    pub fn into_tool_error(self) -> ToolError {
        match self {
            McpError::Server { message, .. } => ToolError::Retry(ModelRetry::new(message)),
            other => ToolError::Failed { kind: "McpError".into(), message: other.to_string(), source: None },
        }
    }
}

impl McpError {
    /// The server, as named in messages.
    pub fn server(&self) -> &str {
        match self {
            McpError::Config { server, .. }
            | McpError::Spawn { server, .. }
            | McpError::Connect { server, .. }
            | McpError::ConnectTimeout { server, .. }
            | McpError::Timeout { server, .. }
            | McpError::ConnectionLost { server, .. }
            | McpError::MessageTooLarge { server, .. }
            | McpError::MessageTooDeep { server, .. }
            | McpError::Server { server, .. }
            | McpError::Auth { server, .. } => server,
        }
    }
}

/// A misconfigured server is a configuration mistake; a server that would not start, answer or
/// stay connected is unavailable ([`AgentRunError::ToolsetUnavailable`](crate::AgentRunError::ToolsetUnavailable)
/// in a run).
impl From<McpError> for UserError {
    fn from(e: McpError) -> Self {
        match e {
            McpError::Config { .. } => UserError::new(e.to_string()),
            other => crate::error::ToolsetUnavailable::new(other.server(), other.to_string()).into(),
        }
    }
}

impl From<McpError> for ToolError {
    fn from(e: McpError) -> Self {
        e.into_tool_error()
    }
}
