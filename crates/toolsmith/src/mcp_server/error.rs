//! The errors of the MCP server: serving, and what a tool's requests to the client can meet.

/// Why a server could not start or stopped serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpServerError {
    /// The toolset refused to start (its `enter` failed).
    #[error("the toolset did not start: {message}")]
    Toolset {
        /// The toolset's error.
        message: String,
    },
    /// The HTTP listener could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The MCP session could not start or ended with an error (a client that never
    /// initialised, a transport that broke).
    #[error("MCP session failed: {message}")]
    Session {
        /// What went wrong.
        message: String,
    },
}

/// Why a request of a tool to the MCP client (elicitation, sampling) failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientRequestError {
    /// The call is not running under an MCP server ([`McpRequest::current`](super::McpRequest::current)
    /// is `None`): called outside a served tool call.
    #[error("no MCP client: the tool is not being called through an MCP server")]
    NoClient,
    /// The client did not declare the capability at initialisation.
    #[error("the MCP client does not support {capability}")]
    Unsupported {
        /// `elicitation` or `sampling`.
        capability: &'static str,
    },
    /// The request was malformed (a schema the protocol does not take).
    #[error("invalid {what}: {message}")]
    Invalid {
        /// What was invalid (`elicitation schema`, `sampling request`).
        what: &'static str,
        /// Why.
        message: String,
    },
    /// The client answered with an error, or the connection failed.
    #[error("the MCP client's {method} failed: {message}")]
    Failed {
        /// The MCP method (`elicitation/create`, `sampling/createMessage`).
        method: &'static str,
        /// The error.
        message: String,
    },
}
