//! Durable toolsmith agents on [Restate](https://restate.dev): runs that survive crashes and
//! deploys, approvals that wait for days, one session per conversation.
//!
//! Wrap an [`Agent`](toolsmith::Agent) in a [`DurableAgent`] and serve it from a Restate
//! virtual object keyed by conversation id (the ready-made [`AgentSession`], or one of your
//! own). Each turn then runs inside a Restate invocation:
//!
//! - every model request and every tool call (MCP calls included) is a journaled step: when
//!   the invocation is retried after a crash, the steps whose results are in the journal are
//!   replayed from it, so the model is not asked again and the tool is not called again. The
//!   calls of one response run in parallel, and each is journaled as soon as it finishes,
//!   whatever order they finish in;
//! - the run's clock and its fresh ids (run id, conversation id, the tool-call ids it makes)
//!   come from the invocation ([`toolsmith::durable`]): a replay builds the same history;
//! - calls that need approval, or that run outside the agent, wait on Restate awakeables that a
//!   [`Decision`] (an HTTP call to the `decide` handler, or any Restate client) resolves,
//!   minutes or days later, across restarts;
//! - the conversation's history lives in the object's state; Restate runs one turn at a time
//!   per conversation and many conversations in parallel.
//!
//! ```no_run
//! use toolsmith::prelude::*;
//! use toolsmith_restate::restate_sdk::prelude::*;
//! use toolsmith_restate::{AgentSession, DurableAgent};
//!
//! /// Refund an order.
//! #[tool(requires_approval)]
//! fn refund(order: String) -> String {
//!     format!("refunded {order}")
//! }
//!
//! # async fn serve() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = Agent::builder(TestModel::default()).tool(refund).allow_deferred().build()?;
//! HttpServer::new(Endpoint::builder().bind(AgentSession::new(DurableAgent::new(agent))).build())
//!     .listen_and_serve("127.0.0.1:9080".parse()?)
//!     .await;
//! # Ok(())
//! # }
//! ```
//!
//! What the guarantees are: a step whose result is in the journal never runs again; a step
//! interrupted before its result was journaled (the process died during the model request or
//! the tool, or between the tool's return and the journal's acknowledgement, one round trip to
//! the Restate server) runs again when the invocation is retried: at least once. A step's
//! failure is recorded like its success: a model request that failed after the model's own
//! retries is replayed as the same failure, and the turn ends with a terminal error (the
//! conversation's history stays as it was). Streaming runs are not durable (a turn answers when
//! it ends).

mod capability;
mod codec;
mod decision;
mod journal;
mod object;
mod session;
mod source;
mod spills;

pub use decision::{Decision, PENDING_KEY, PendingCall, PendingKind, Settle, decide, pending, settle};
pub use object::AgentSession;
/// The Restate SDK this crate is built on: serve an [`AgentSession`] with its `HttpServer` and
/// `Endpoint` without matching the SDK's version by hand.
pub use restate_sdk;
pub use session::{DurableAgent, HISTORY_KEY, TurnReply, TurnRequest, history};
pub use spills::{JournaledStore, SPILLS_KEY};

/// `value` read as `T` when it is a JSON object; anything else (an array, which serde would
/// read into a struct field by field, a string, a number) is refused first.
pub(crate) fn object_only<T: serde::de::DeserializeOwned>(what: &str, value: serde_json::Value) -> Result<T, String> {
    let kind = match &value {
        serde_json::Value::Object(_) => return serde_json::from_value(value).map_err(|e| format!("{what}: {e}")),
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Null => "null",
    };
    Err(format!("{what} is a JSON object, not {kind}"))
}
