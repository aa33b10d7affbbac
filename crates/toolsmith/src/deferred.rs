//! Deferred tool calls: calls that wait for a human's approval or run outside the agent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::messages::ToolCallPart;

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

impl DeferredToolRequests {
    /// Whether there is nothing to decide or execute.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty() && self.approvals.is_empty()
    }
}
