//! Deferred tool calls: calls that wait for a human's approval or run outside the agent.
//!
//! An approval approves one call, once: the one it was given for. Results built from the run's
//! [`DeferredToolRequests`] ([`DeferredToolRequests::results`],
//! [`DeferredToolRequests::build_results`]) are bound to its calls (id, tool name and
//! arguments); the resumed run refuses them ([`ResumeRefusal`]) when the message history's
//! pending calls are not exactly those: a call edited, added, removed, answered, or repeated
//! under one id. Each deferral is answered once ([`DeferralId`], [`DeferralStore`]): resuming
//! the same history again is refused.

mod consumed;
mod records;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::error::ResumeRefusal;
use crate::messages::ToolCallPart;
use crate::tool::{ModelRetry, ToolReturn};
pub(crate) use consumed::DynDeferralStore;
pub use consumed::{
    Consumption, DeferralId, DeferralStore, DeferralStoreError, MEMORY_STORE_CAPACITY, MemoryDeferralStore,
};
pub(crate) use records::{PendingRecords, check_bound};

/// The calls a run ended with, waiting for results: pass them to whoever decides or executes,
/// then resume the run with [`DeferredToolResults`] built from them
/// ([`results`](DeferredToolRequests::results) or
/// [`build_results`](DeferredToolRequests::build_results)).
///
/// To resume later (another request, another process), keep two things: these requests
/// (they serialise with serde) and the message history the run ended with
/// ([`RunResult::all_messages`](crate::agent::RunResult::all_messages)). Each decision applies
/// to the call as listed here, its id, tool name and arguments: the resumed run checks that the
/// history's pending calls are exactly these calls and refuses to run anything otherwise.
///
/// The requests are answered once: they have an identity ([`id`](DeferredToolRequests::id)),
/// which the first resume consumes (through the agent's [`DeferralStore`]); resuming the same
/// history again, with these results or with any other, is refused
/// ([`ResumeRefusal::AlreadyResumed`]). To go on after a resume, continue from the history
/// that resume returned.
///
/// ```
/// use serde_json::json;
/// use toolsmith::deferred::{ResumeRefusal, ToolApproval};
/// use toolsmith::messages::{ModelResponse, ModelResponsePart, ToolCallPart};
/// use toolsmith::prelude::*;
///
/// /// Delete a file.
/// #[tool(requires_approval)]
/// fn delete_file(path: String) -> String {
///     format!("deleted {path}")
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), AgentRunError> {
/// let model = FunctionModel::sync(|messages, _| match messages.len() {
///     1 => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
///         "delete_file", json!({"path": "a.txt"}), "c1"))]),
///     _ => ModelResponse::text("done"),
/// });
/// let agent = Agent::builder(model).tool(delete_file).allow_deferred().build()?;
/// let first = agent.run("clean up").await?;
/// let requests = first.output().deferred().expect("waiting for approval");
/// // Stored: the requests and the history.
/// let stored = (serde_json::to_string(requests).unwrap(), serde_json::to_string(first.all_messages()).unwrap());
///
/// // Later: the decision is bound to the call that was shown.
/// let requests: toolsmith::deferred::DeferredToolRequests = serde_json::from_str(&stored.0).unwrap();
/// let history = toolsmith::messages::parse_history(&stored.1).unwrap();
/// let results = requests.results().approve("c1", ToolApproval::approved());
/// let done = agent.resume().message_history(history.clone()).deferred_tool_results(results.clone()).await?;
/// assert_eq!(done.output().output().map(String::as_str), Some("done"));
///
/// // Once: the same decision again would delete the file again.
/// let again = agent.resume().message_history(history).deferred_tool_results(results).await;
/// let Err(AgentRunError::User(e)) = again else { panic!("resumed twice") };
/// assert!(matches!(e.refusal.as_deref(), Some(ResumeRefusal::AlreadyResumed { .. })));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DeferredToolRequests {
    /// Calls to be executed outside the agent.
    pub calls: Vec<ToolCallPart>,
    /// Calls waiting for approval.
    pub approvals: Vec<ToolCallPart>,
    /// Metadata attached by the tools, keyed by call id.
    pub metadata: BTreeMap<String, Value>,
    /// The identity of this deferral, set when a run ends with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<DeferralId>,
}

/// Which list a deferred call is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeferredKind {
    /// Waiting for approval.
    Approval,
    /// Waiting for an external result.
    External,
}

impl DeferredToolRequests {
    /// Whether there is nothing to decide or execute.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty() && self.approvals.is_empty()
    }

    /// Whether the call with this id waits for approval or for an external result.
    pub fn kind(&self, id: &str) -> Option<DeferredKind> {
        if self.approvals.iter().any(|c| c.tool_call_id == id) {
            Some(DeferredKind::Approval)
        } else if self.calls.iter().any(|c| c.tool_call_id == id) {
            Some(DeferredKind::External)
        } else {
            None
        }
    }

    /// The requests that `results` leaves unanswered.
    pub fn remaining(&self, results: &DeferredToolResults) -> DeferredToolRequests {
        let keep = |ids: &dyn Fn(&str) -> bool, calls: &[ToolCallPart]| -> Vec<ToolCallPart> {
            calls.iter().filter(|c| !ids(&c.tool_call_id)).cloned().collect()
        };
        let approvals = keep(&|id| results.approvals.contains_key(id), &self.approvals);
        let calls = keep(&|id| results.calls.contains_key(id), &self.calls);
        let metadata = self
            .metadata
            .iter()
            .filter(|(id, _)| approvals.iter().chain(&calls).any(|c| &c.tool_call_id == *id))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        // What is left is not the deferral the run ended with: a resume of it is identified by
        // the history it answers.
        DeferredToolRequests { calls, approvals, metadata, id: None }
    }

    /// The identity of this deferral (the calls a run ended with, in the response they belong
    /// to): what a resume consumes, so that the calls are answered once (see
    /// [`DeferralStore`]). `None` for requests a run did not end with (made by hand, or
    /// [`remaining`](Self::remaining)); a resume then derives it from the history.
    pub fn id(&self) -> Option<&DeferralId> {
        self.id.as_ref()
    }

    /// Sets the identity (when a run ends with these requests).
    pub(crate) fn set_id(&mut self, id: DeferralId) {
        self.id = Some(id);
    }

    /// Empty results bound to these requests: add decisions and results with
    /// [`approve`](DeferredToolResults::approve) and
    /// [`call_result`](DeferredToolResults::call_result). The resumed run checks each against
    /// the call as listed here (see [`DeferredToolRequests`]).
    pub fn results(&self) -> DeferredToolResults {
        DeferredToolResults { binding: self.binding(), ..DeferredToolResults::default() }
    }

    fn binding(&self) -> Binding {
        Binding::Calls { calls: self.pending_calls(), id: self.id.clone() }
    }

    /// The calls as they are pending, sorted by id.
    pub(crate) fn pending_calls(&self) -> Arc<[PendingCall]> {
        let mut calls: Vec<PendingCall> = self
            .approvals
            .iter()
            .map(|c| PendingCall::new(c, Some(DeferredKind::Approval)))
            .chain(self.calls.iter().map(|c| PendingCall::new(c, Some(DeferredKind::External))))
            .collect();
        calls.sort_by(|a, b| a.id.cmp(&b.id));
        calls.into()
    }

    /// Builds results for these requests, checking every id: `approvals` and `calls` must name
    /// pending calls of the right kind; with `approve_all`, every approval not given is
    /// approved. The results are bound to these requests, like [`DeferredToolRequests::results`].
    pub fn build_results(
        &self,
        approvals: impl IntoIterator<Item = (String, ToolApproval)>,
        calls: impl IntoIterator<Item = (String, ExternalResult)>,
        metadata: impl IntoIterator<Item = (String, Value)>,
        approve_all: bool,
    ) -> Result<DeferredToolResults, crate::error::UserError> {
        let mut results = self.results();
        for (id, a) in approvals {
            match self.kind(&id) {
                Some(DeferredKind::Approval) => {
                    results.approvals.insert(id, a);
                }
                Some(DeferredKind::External) => {
                    return Err(ResumeRefusal::ApprovalForExternal { tool_call_id: id }.into());
                }
                None => return Err(unknown_id(&id)),
            }
        }
        for (id, r) in calls {
            match self.kind(&id) {
                Some(DeferredKind::External) => {
                    results.calls.insert(id, r);
                }
                Some(DeferredKind::Approval) => {
                    return Err(ResumeRefusal::ResultForApproval { tool_call_id: id }.into());
                }
                None => return Err(unknown_id(&id)),
            }
        }
        for (id, m) in metadata {
            if self.kind(&id).is_none() {
                return Err(unknown_id(&id));
            }
            results.metadata.insert(id, m);
        }
        if approve_all {
            for c in &self.approvals {
                results.approvals.entry(c.tool_call_id.clone()).or_insert_with(ToolApproval::approved);
            }
        }
        Ok(results)
    }
}

fn unknown_id(id: &str) -> crate::error::UserError {
    crate::error::UserError::new(format!(
        "Tool call '{id}' is not among the deferred tool requests: results can only be given for pending calls."
    ))
}

/// A decision on a call that needed approval.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolApproval {
    /// Run the call, optionally with other arguments.
    Approved {
        /// Arguments to use instead of the model's.
        override_args: Option<Value>,
    },
    /// Do not run the call; the model is told why.
    Denied {
        /// What the model is told.
        message: String,
    },
}

impl ToolApproval {
    /// Approve as the model asked.
    pub fn approved() -> Self {
        ToolApproval::Approved { override_args: None }
    }

    /// Approve with other arguments.
    pub fn approved_with(args: Value) -> Self {
        ToolApproval::Approved { override_args: Some(args) }
    }

    /// Deny with the default message.
    pub fn denied() -> Self {
        ToolApproval::Denied { message: "The tool call was denied.".into() }
    }

    /// Deny with a message for the model.
    pub fn denied_with(message: impl Into<String>) -> Self {
        ToolApproval::Denied { message: message.into() }
    }
}

impl From<bool> for ToolApproval {
    fn from(approved: bool) -> Self {
        if approved { ToolApproval::approved() } else { ToolApproval::denied() }
    }
}

/// The result of a call executed outside the agent.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ExternalResult {
    /// A plain value.
    Value(Value),
    /// A rich return (value, content, metadata).
    Return(ToolReturn),
    /// Ask the model to try again.
    Retry(ModelRetry),
}

impl From<Value> for ExternalResult {
    fn from(v: Value) -> Self {
        ExternalResult::Value(v)
    }
}

/// Results for the calls a run ended with: pass them with
/// [`RunBuilder::deferred_tool_results`](crate::agent::RunBuilder::deferred_tool_results) on a
/// run that continues the same history, once.
///
/// Build them from the run's [`DeferredToolRequests`] ([`DeferredToolRequests::results`],
/// [`DeferredToolRequests::build_results`]): they are then bound to its calls, and the resumed
/// run refuses them if the history's pending calls are not exactly those (see
/// [`ResumeRefusal`]). Only a decision ([`approve`](Self::approve)) answers a call that waits
/// for approval; a result ([`call_result`](Self::call_result)) answers one that waits for an
/// external result. The calls are answered once: a second resume of the same history is refused
/// ([`ResumeRefusal::AlreadyResumed`]).
///
/// Results made with [`DeferredToolResults::new`] are bound to nothing: the resumed run
/// accepts them only when the agent (or a clone of it) recorded the history's pending calls
/// as a run of its own ended with them, unchanged since (a run that ended deferred, or failed
/// after the model made the calls; it remembers the last 1024 such endings, in memory); it
/// refuses them otherwise, unless
/// [`trust_history`](DeferredToolResults::trust_history) says to match them to the
/// history's calls by id alone.
///
/// ```
/// use toolsmith::prelude::*;
///
/// /// Refund an order.
/// #[tool(requires_approval)]
/// fn refund_order(order: String) -> String {
///     format!("refunded {order}")
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), AgentRunError> {
/// // TestModel calls every tool once, then answers with what they returned.
/// let agent = Agent::builder(TestModel::default()).tool(refund_order).allow_deferred().build()?;
/// let first = agent.run("refund my order").await?;
/// let requests = first.output().deferred().expect("waiting for approval");
/// let mut results = requests.results();
/// for call in &requests.approvals {
///     // Show the call (its arguments as an object: a provider may send a JSON string).
///     println!("{}({:?})?", call.tool_name, call.args_as_object());
///     results = results.approve(call.tool_call_id.clone(), ToolApproval::denied_with("Not today"));
/// }
/// assert_eq!(results.len(), 1);
/// assert!(results.is_bound());
/// let done = agent.resume().message_history(first.all_messages().to_vec()).deferred_tool_results(results).await?;
/// assert!(done.output().output().is_some());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct DeferredToolResults {
    /// Decisions on calls that needed approval, by call id.
    pub approvals: HashMap<String, ToolApproval>,
    /// Results of calls executed outside the agent, by call id.
    pub calls: HashMap<String, ExternalResult>,
    /// Metadata for the calls, by id, given to the tool as `ctx.tool_call_metadata`.
    pub metadata: HashMap<String, Value>,
    /// What the results were made for.
    pub(crate) binding: Binding,
}

/// What results were made for.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum Binding {
    /// Nothing said: checked against the agent's records.
    #[default]
    None,
    /// These calls, as they were pending, and the deferral they were (if known).
    Calls { calls: Arc<[PendingCall]>, id: Option<DeferralId> },
    /// Whatever the history holds under the ids (the caller's explicit choice).
    TrustHistory,
}

impl DeferredToolResults {
    /// Holds the values the application gave (built in memory, of any depth) to the depth of a
    /// history, before the run copies them: override arguments are cut (still past the
    /// arguments' limit, so the call is answered with a validation retry), results and metadata
    /// keep what lies deeper as its JSON text. Without recursion.
    pub(crate) fn bound_values(&mut self) {
        use crate::messages::{cut_deep, flatten_deep, flatten_deep_content};
        for approval in self.approvals.values_mut() {
            if let ToolApproval::Approved { override_args: Some(args) } = approval {
                cut_deep(args);
            }
        }
        for result in self.calls.values_mut() {
            match result {
                ExternalResult::Value(v) => flatten_deep(v),
                ExternalResult::Return(ret) => {
                    flatten_deep(&mut ret.return_value);
                    if let Some(metadata) = &mut ret.metadata {
                        flatten_deep(metadata);
                    }
                    if let Some(content) = &mut ret.content {
                        flatten_deep_content(content);
                    }
                }
                ExternalResult::Retry(retry) => flatten_deep(&mut retry.content),
            }
        }
        self.metadata.values_mut().for_each(flatten_deep);
    }

    /// No results yet, bound to nothing (see [`DeferredToolResults`]): prefer
    /// [`DeferredToolRequests::results`], which binds them to the calls that were shown.
    pub fn new() -> Self {
        Self::default()
    }

    /// Binds these results to `requests`, the calls the decisions were made for (as
    /// [`DeferredToolRequests::results`] does).
    pub fn bound_to(mut self, requests: &DeferredToolRequests) -> Self {
        self.binding = requests.binding();
        self
    }

    /// Matches these results to the history's pending calls by id alone, whatever tool and
    /// arguments the history holds under each id. Use it only for a history you trust as it
    /// is (one no one could have edited since the decisions were made), with results you take
    /// as given: an approval then runs the call the history has, which may not be the call that
    /// was shown, and a result given for a call that waits for approval answers it without
    /// running it (as Pydantic AI takes results). An approval for an external tool is still
    /// refused (the tool's kind tells), not for a call that raised `CallDeferred`. The calls are
    /// still answered once (the deferral is the one the history's response makes).
    pub fn trust_history(mut self) -> Self {
        self.binding = Binding::TrustHistory;
        self
    }

    /// Whether these results are bound to the calls they were made for (built from
    /// [`DeferredToolRequests`]).
    pub fn is_bound(&self) -> bool {
        matches!(self.binding, Binding::Calls { .. })
    }

    /// Adds a decision.
    pub fn approve(mut self, id: impl Into<String>, approval: impl Into<ToolApproval>) -> Self {
        self.approvals.insert(id.into(), approval.into());
        self
    }

    /// Adds an external result.
    pub fn call_result(mut self, id: impl Into<String>, result: impl Into<ExternalResult>) -> Self {
        self.calls.insert(id.into(), result.into());
        self
    }

    /// Adds metadata for a call.
    pub fn metadata(mut self, id: impl Into<String>, metadata: Value) -> Self {
        self.metadata.insert(id.into(), metadata);
        self
    }

    /// Adds the results of `other` (its entries win; these results keep their binding, or
    /// take `other`'s if they have none).
    pub fn update(&mut self, other: DeferredToolResults) {
        self.approvals.extend(other.approvals);
        self.calls.extend(other.calls);
        self.metadata.extend(other.metadata);
        if self.binding == Binding::None {
            self.binding = other.binding;
        }
    }

    /// How many calls have a decision or a result.
    pub fn len(&self) -> usize {
        self.approvals.len() + self.calls.len()
    }

    /// Whether there is nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A call as it was pending when a run ended: what a decision or a result is bound to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PendingCall {
    pub(crate) id: String,
    pub(crate) tool: String,
    pub(crate) args: Value,
    /// How the run ended with it: waiting for a decision or an external result, or `None`, left
    /// unanswered by a run that failed (any result may answer it).
    pub(crate) kind: Option<DeferredKind>,
}

impl PendingCall {
    pub(crate) fn new(call: &ToolCallPart, kind: Option<DeferredKind>) -> Self {
        PendingCall { id: call.tool_call_id.clone(), tool: call.tool_name.clone(), args: call.args.clone(), kind }
    }

    pub(crate) fn matches(&self, call: &ToolCallPart) -> bool {
        self.id == call.tool_call_id && self.tool == call.tool_name && self.args == call.args
    }
}
