//! toolsmith agents in a web page: a run's events as **AG-UI** events ([`ag_ui`]) and as the
//! **Vercel AI** data stream ([`vercel_ai`], SDK v5 and v6), the protocols' requests as a run's
//! input with approvals bound to the calls they approve ([`UiRunInput`]), and, with the `axum`
//! feature, handlers that serve an agent over either protocol (`axum` module).
//!
//! The wire is Pydantic AI's (`pydantic_ai.ui.ag_ui`, `pydantic_ai.ui.vercel_ai`): the same
//! events, in the same order, with the same fields, for the same run (checked against them by
//! `tests/ui-differential`).

pub mod ag_ui;
mod error;
mod history;
mod input;
mod store;
mod transform;
pub mod vercel_ai;

#[cfg(feature = "axum")]
pub mod axum;

pub use error::UiError;
pub use input::{ApprovalDecision, UiRunInput};
pub use store::{Conversation, HistoryStore, MemoryHistoryStore};

/// What a client is told of a failed run, as Pydantic AI tells it (the exception's text): a
/// model's or a tool's error as it was raised, anything else as the error reads.
pub(crate) fn error_message(e: &toolsmith::AgentRunError) -> String {
    match e {
        toolsmith::AgentRunError::Model(m) => m.message.clone(),
        toolsmith::AgentRunError::ToolFailed { message, .. } => message.clone(),
        other => other.to_string(),
    }
}
