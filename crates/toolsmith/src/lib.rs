//! # toolsmith
//!
//! The tool layer for LLM agents. Write plain Rust functions, mark them with [`macro@tool`], and
//! toolsmith turns them into tools with JSON schemas, validates what the model sends (reporting
//! every error at once, in the shape models already understand), runs calls concurrently with
//! retries and timeouts, and records everything in a message history that is wire-compatible with
//! Pydantic AI's.
//!
//! ```
//! use toolsmith::prelude::*;
//!
//! /// Roll a six-sided die and return the result.
//! #[tool]
//! async fn roll_dice() -> String {
//!     "4".into()
//! }
//!
//! /// Get the player's name.
//! #[tool]
//! async fn get_player_name(ctx: RunContext<String>) -> String {
//!     ctx.deps.clone()
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = Agent::builder(TestModel::default())
//!     .deps::<String>()
//!     .system_prompt("You're a dice game.")
//!     .tools([roll_dice, get_player_name])
//!     .build()?;
//! let result = agent.run("My guess is 4").deps("Anne".to_string()).run_sync()?;
//! assert_eq!(result.output(), r#"{"roll_dice":"4","get_player_name":"Anne"}"#);
//! # Ok(())
//! # }
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]
// Some pages link the types of optional integrations; with one of them off, those links have
// nothing to point at (docs.rs and CI build the docs with every integration, where they all hold).
#![cfg_attr(
    not(all(
        feature = "openai",
        feature = "anthropic",
        feature = "gemini",
        feature = "bedrock",
        feature = "mcp",
        feature = "web"
    )),
    allow(rustdoc::broken_intra_doc_links)
)]

extern crate self as toolsmith;

pub mod agent;
pub mod capability;
pub mod context;
pub mod deferred;
pub mod durable;
pub mod error;
pub mod execution;
#[cfg(feature = "mcp-server")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-server")))]
pub mod mcp_server;
pub mod messages;
pub mod model;
mod model_info;
pub mod native;
mod output_mode;
pub mod providers;
pub mod pyjson;
mod run;
pub mod search;
mod serde_secs;
pub mod settings;
mod suggest;
#[cfg(test)]
mod test_support;
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "bedrock",
    feature = "mcp",
    feature = "web"
))]
mod tls;
pub mod tool;
pub mod toolset;
pub mod usage;
pub mod validation;
/// Local web back ends: a guarded page fetcher and a key-less web search (feature `web`).
#[cfg(feature = "web")]
pub mod web;

pub use agent::{Agent, AgentBuilder, RunResult};
pub use context::RunContext;
pub use error::{AgentRunError, SharedError, ToolsetUnavailable, UserError};
pub use tool::{ModelRetry, Tool, ToolDefinition, ToolError, ToolReturn, ToolSpec};
pub use toolsmith_macros::tool;

/// The JSON Schema crate whose `JsonSchema` derive describes tool arguments and outputs, at the
/// version toolsmith uses. Deriving through this path needs the crate named:
/// `#[derive(toolsmith::schemars::JsonSchema)] #[schemars(crate = "toolsmith::schemars")]`.
///
/// ```
/// #[derive(serde::Deserialize, toolsmith::schemars::JsonSchema)]
/// #[schemars(crate = "toolsmith::schemars")]
/// struct City {
///     /// The city's name.
///     name: String,
/// }
/// let schema = toolsmith::schemars::schema_for!(City);
/// assert_eq!(schema.as_value()["properties"]["name"]["description"], "The city's name.");
/// ```
pub use schemars;

/// Everything a typical agent program needs, in one import.
pub mod prelude {
    pub use crate::agent::{Agent, Deferrable, EndStrategy, OutputMode, OutputSpec, RunResult};
    pub use crate::capability::{Capability, CapabilityOrdering, Hooks, ToolCallInfo};
    pub use crate::context::RunContext;
    pub use crate::deferred::{DeferredToolRequests, DeferredToolResults, ExternalResult, ToolApproval};
    pub use crate::error::{AgentRunError, UserError};
    pub use crate::execution::ParallelMode;
    pub use crate::messages::{
        ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, ModelResponsePart, TextPart, ToolCallPart,
        ToolReturnPart,
    };
    pub use crate::model::{AgentInfo, FunctionModel, Model, ModelSettings, TestModel, ToolChoice};
    pub use crate::tool::{ApprovalRequired, CallDeferred, ModelRetry, Tool, ToolDefinition, ToolError, ToolReturn};
    pub use crate::toolset::{FunctionToolset, Toolset, ToolsetExt};
    pub use crate::usage::{RunUsage, UsageLimits};
    pub use toolsmith_macros::tool;
}

#[doc(hidden)]
pub mod __private;
