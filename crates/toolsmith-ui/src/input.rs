//! A protocol request turned into a run's input: the new prompt, the client's earlier messages
//! and the approval decisions, bound to the calls they approve.

use serde_json::Value;
use toolsmith::deferred::{DeferredToolRequests, DeferredToolResults, ToolApproval};
use toolsmith::messages::ModelMessage;

use crate::error::UiError;
use crate::transform::args_value;

/// A person's decision on a call waiting for approval, as the client sent it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ApprovalDecision {
    /// The call.
    pub tool_call_id: String,
    /// Approved or denied.
    pub approved: bool,
    /// Why it was denied (the model is told).
    pub reason: Option<String>,
    /// Other arguments to run the call with (AG-UI's `editedArgs`).
    pub edited_args: Option<Value>,
    /// The arguments the client showed when the decision was made, when it says (Vercel AI's
    /// `input`, the assistant message's tool call in AG-UI): checked against the call's.
    pub shown_args: Option<Value>,
}

impl ApprovalDecision {
    /// A decision on `tool_call_id`.
    pub fn new(tool_call_id: impl Into<String>, approved: bool) -> Self {
        ApprovalDecision {
            tool_call_id: tool_call_id.into(),
            approved,
            reason: None,
            edited_args: None,
            shown_args: None,
        }
    }

    /// The reason for a denial.
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// The arguments the person saw.
    pub fn with_shown_args(mut self, args: Value) -> Self {
        self.shown_args = Some(args);
        self
    }
}

/// What a protocol request asks of a run.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct UiRunInput {
    /// The conversation (AG-UI `threadId`, Vercel AI chat `id`).
    pub conversation_id: String,
    /// The new user message, when the request ends with one.
    pub prompt: Option<String>,
    /// The client's messages before it, as a message history.
    pub history: Vec<ModelMessage>,
    /// Decisions on calls waiting for approval.
    pub decisions: Vec<ApprovalDecision>,
    /// The results the client's messages carry, by call id (AG-UI tool messages, Vercel AI tool
    /// parts with their output): those of calls waiting to be executed outside answer them.
    pub tool_results: Vec<(String, Value)>,
    /// The application's state (AG-UI `state`).
    pub state: Option<Value>,
    /// Whatever else the client forwarded (AG-UI `forwardedProps`).
    pub forwarded_props: Option<Value>,
}

impl UiRunInput {
    /// The decisions and results as results bound to `pending`, the calls the run ended with:
    /// each decision must name a call waiting for approval, with the arguments the call has
    /// (when the client says which it saw); a result answers a call waiting to be executed
    /// outside (never one waiting for approval); every pending call must be answered.
    pub fn deferred_results(&self, pending: &DeferredToolRequests) -> Result<DeferredToolResults, UiError> {
        let mut results = pending.results();
        for (id, content) in &self.tool_results {
            if pending.calls.iter().any(|c| &c.tool_call_id == id) {
                results = results.call_result(id.clone(), content.clone());
            } else if pending.approvals.iter().any(|c| &c.tool_call_id == id) {
                // A result would answer the call without running it, and without a decision.
                return Err(UiError::ResultForApproval { tool_call_id: id.clone() });
            }
        }
        for d in &self.decisions {
            let Some(call) = pending.approvals.iter().find(|c| c.tool_call_id == d.tool_call_id) else {
                return Err(UiError::NotPending { tool_call_id: d.tool_call_id.clone() });
            };
            if let Some(shown) = &d.shown_args
                && args_value(shown) != args_value(&call.args)
            {
                return Err(UiError::ArgumentsChanged { tool_call_id: d.tool_call_id.clone() });
            }
            let approval = match (d.approved, &d.edited_args, &d.reason) {
                (true, Some(args), _) => ToolApproval::approved_with(args.clone()),
                (true, None, _) => ToolApproval::approved(),
                (false, _, Some(reason)) => ToolApproval::denied_with(reason.clone()),
                (false, _, None) => ToolApproval::denied(),
            };
            results = results.approve(d.tool_call_id.clone(), approval);
        }
        if let Some(call) = pending.approvals.iter().find(|c| !results.approvals.contains_key(&c.tool_call_id)) {
            return Err(UiError::Undecided { tool_call_id: call.tool_call_id.clone() });
        }
        if let Some(call) = pending.calls.iter().find(|c| !results.calls.contains_key(&c.tool_call_id)) {
            return Err(UiError::Undecided { tool_call_id: call.tool_call_id.clone() });
        }
        Ok(results)
    }

    /// Whether the request answers any of `pending`'s calls (a decision, or a result for one of
    /// them): the run resumes them rather than take a new prompt (and a result for a call that
    /// waits for approval is refused by [`deferred_results`](Self::deferred_results)).
    pub fn answers(&self, pending: &DeferredToolRequests) -> bool {
        !self.decisions.is_empty()
            || self
                .tool_results
                .iter()
                .any(|(id, _)| pending.calls.iter().chain(&pending.approvals).any(|c| &c.tool_call_id == id))
    }
}
