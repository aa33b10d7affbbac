//! What a tool can answer besides a value: a retry request, a deferral, or a failure.

use serde_json::Value;

pub use crate::error::ModelRetry;

/// Raised by a tool to say that this call needs a human's approval before it runs.
///
/// The run ends with the call in its deferred requests; resume it with the decision.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ApprovalRequired {
    /// Metadata returned with the deferred request, e.g. why approval is needed.
    pub metadata: Option<Value>,
}

impl ApprovalRequired {
    /// Approval required, with metadata for the approver.
    pub fn with_metadata(metadata: Value) -> Self {
        ApprovalRequired { metadata: Some(metadata) }
    }
}

/// Raised by a tool to say that this call will be executed elsewhere (another process, a
/// queue, the client); the run ends with the call in its deferred requests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallDeferred {
    /// Metadata returned with the deferred request, e.g. a task id.
    pub metadata: Option<Value>,
}

impl CallDeferred {
    /// A deferral with metadata.
    pub fn with_metadata(metadata: Value) -> Self {
        CallDeferred { metadata: Some(metadata) }
    }
}

/// Everything a tool call can end with other than a value.
///
/// A tool returns `Result<T, E>` for any `E` that converts into it ([`ModelRetry`],
/// [`ApprovalRequired`], [`CallDeferred`], strings, `std::io::Error`...) or is any
/// `std::error::Error` (a failure that ends the run, kept as its source).
///
/// ```
/// use toolsmith::prelude::*;
///
/// /// Transfers money.
/// #[tool]
/// fn transfer(cents: u64) -> Result<String, ToolError> {
///     if cents == 0 {
///         // The model is told, and may try again.
///         return Err(ModelRetry::new("The amount must be positive.").into());
///     }
///     if cents > 100_000 {
///         // The run ends with the call in its deferred requests, for a human to approve.
///         return Err(ApprovalRequired::default().into());
///     }
///     Ok(format!("sent {cents}"))
/// }
/// # let _ = transfer;
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The model should try again (see [`ModelRetry`]).
    #[error("{0}")]
    Retry(ModelRetry),
    /// The arguments did not validate; the errors are sent back to the model.
    #[error("{} validation error(s)", .0.len())]
    Validation(Vec<crate::validation::ErrorDetail>),
    /// The call needs approval (see [`ApprovalRequired`]).
    #[error("approval required")]
    ApprovalRequired(ApprovalRequired),
    /// The call is executed elsewhere (see [`CallDeferred`]).
    #[error("call deferred")]
    CallDeferred(CallDeferred),
    /// The tool panicked; the panic was caught and the run ends with this error.
    #[error("the tool panicked: {message}")]
    Panicked {
        /// The panic message.
        message: String,
    },
    /// The tool asked for a retry (or timed out) with its retry budget spent: the run ends
    /// with [`AgentRunError::UnexpectedModelBehavior`](crate::AgentRunError::UnexpectedModelBehavior).
    /// The capabilities' execute hooks see it as the tool's error (`on_tool_execute_error` may
    /// still recover with a result).
    #[error(
        "Tool '{tool}' exceeded max retries count of {max_retries}. Consider raising the retry limit (`Tool::retries`, `#[tool(retries = N)]`, or the agent's `AgentBuilder::retries`)"
    )]
    RetriesExhausted {
        /// The tool.
        tool: String,
        /// Its retry budget.
        max_retries: u32,
    },
    /// The tool failed in a way the model cannot fix: the run ends with this error.
    #[error("{message}")]
    Failed {
        /// The error's type name, as shown in the run's error.
        kind: String,
        /// What went wrong.
        message: String,
        /// The error the tool failed with, when it was an error value (reported by
        /// [`source`](std::error::Error::source) here and on the run's error).
        #[source]
        source: Option<crate::error::SharedError>,
    },
}

impl ToolError {
    /// A failure that ends the run, with a message.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed { kind: "ToolError".into(), message: message.into(), source: None }
    }

    /// A failure from any error value; its text becomes the message.
    pub fn from_error(error: &(dyn std::error::Error + 'static)) -> Self {
        ToolError::failed(error.to_string())
    }

    /// A failure caused by `error`: its text becomes the message, and the error stays reachable
    /// as the [`source`](std::error::Error::source) of this error and of the run's
    /// [`AgentRunError::ToolFailed`](crate::AgentRunError::ToolFailed).
    pub fn caused_by(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        ToolError::Failed {
            kind: "ToolError".into(),
            message: error.to_string(),
            source: Some(crate::error::SharedError::new(error)),
        }
    }
}

impl From<ModelRetry> for ToolError {
    fn from(e: ModelRetry) -> Self {
        ToolError::Retry(e)
    }
}
impl From<ApprovalRequired> for ToolError {
    fn from(e: ApprovalRequired) -> Self {
        ToolError::ApprovalRequired(e)
    }
}
impl From<CallDeferred> for ToolError {
    fn from(e: CallDeferred) -> Self {
        ToolError::CallDeferred(e)
    }
}
impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::failed(message)
    }
}
impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::failed(message)
    }
}
impl From<Box<dyn std::error::Error + Send + Sync>> for ToolError {
    fn from(e: Box<dyn std::error::Error + Send + Sync>) -> Self {
        ToolError::Failed { kind: "ToolError".into(), message: e.to_string(), source: Some(e.into()) }
    }
}
impl From<std::io::Error> for ToolError {
    fn from(e: std::io::Error) -> Self {
        ToolError::caused_by(e)
    }
}
impl From<serde_json::Error> for ToolError {
    fn from(e: serde_json::Error) -> Self {
        ToolError::caused_by(e)
    }
}
impl From<std::convert::Infallible> for ToolError {
    fn from(e: std::convert::Infallible) -> Self {
        match e {}
    }
}
