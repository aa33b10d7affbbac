//! Sampling (`sampling/createMessage`): a server asks the client's model for a completion. The
//! request goes to a handler of MCP JSON
//! ([`McpToolset::sampling_handler`](crate::toolset::McpToolset::sampling_handler)).

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

/// Answers a server's sampling request (`sampling/createMessage`): receives the request's params
/// and returns the result, both as MCP JSON; an `Err` is sent back to the server as an error.
pub type SamplingHandler = Arc<dyn Fn(Value) -> BoxFuture<'static, Result<Value, String>> + Send + Sync>;
