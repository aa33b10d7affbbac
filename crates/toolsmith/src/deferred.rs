//! Deferred tool calls: calls that wait for a human's approval or run outside the agent.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::messages::ToolCallPart;
use crate::tool::{ModelRetry, ToolReturn};

/// The calls a run ended with, waiting for results: pass them to whoever decides or executes,
/// then resume the run with [`DeferredToolResults`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DeferredToolRequests {
    /// Calls to be executed outside the agent.
    pub calls: Vec<ToolCallPart>,
    /// Calls waiting for approval.
    pub approvals: Vec<ToolCallPart>,
    /// Metadata attached by the tools, keyed by call id.
    pub metadata: BTreeMap<String, Value>,
}

/// Which list a deferred call is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
        DeferredToolRequests { calls, approvals, metadata }
    }

    /// Builds results for these requests, checking every id: `approvals` and `calls` must name
    /// pending calls of the right kind; with `approve_all`, every approval not given is
    /// approved.
    pub fn build_results(
        &self,
        approvals: impl IntoIterator<Item = (String, ToolApproval)>,
        calls: impl IntoIterator<Item = (String, ExternalResult)>,
        metadata: impl IntoIterator<Item = (String, Value)>,
        approve_all: bool,
    ) -> Result<DeferredToolResults, crate::error::UserError> {
        let mut results = DeferredToolResults::new();
        for (id, a) in approvals {
            match self.kind(&id) {
                Some(DeferredKind::Approval) => {
                    results.approvals.insert(id, a);
                }
                Some(DeferredKind::External) => {
                    return Err(crate::error::UserError::new(format!(
                        "Tool call '{id}' waits for an external result, not an approval: give it in `calls`."
                    )));
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
                    return Err(crate::error::UserError::new(format!(
                        "Tool call '{id}' waits for approval, not a result: give it in `approvals`."
                    )));
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
/// run that continues the same history.
///
/// ```
/// use toolsmith::deferred::{DeferredToolResults, ToolApproval};
/// use serde_json::json;
///
/// let results = DeferredToolResults::new()
///     .approve("call_1", ToolApproval::approved())
///     .approve("call_2", ToolApproval::denied_with("Not on Fridays"))
///     .call_result("call_3", json!(42));
/// assert_eq!(results.len(), 3);
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
}

impl DeferredToolResults {
    /// No results yet.
    pub fn new() -> Self {
        Self::default()
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

    /// Adds the results of `other` (its entries win).
    pub fn update(&mut self, other: DeferredToolResults) {
        self.approvals.extend(other.approvals);
        self.calls.extend(other.calls);
        self.metadata.extend(other.metadata);
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
