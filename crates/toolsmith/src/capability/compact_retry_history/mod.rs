//! [`CompactRetryHistory`]: only the last failed attempts of a call kept in what the model is
//! sent.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::{Capability, HookStage, ModelRequestContext};
use crate::context::RunContext;
use crate::error::AgentRunError;
use crate::messages::{ModelMessage, ModelRequestPart, ModelResponsePart, ToolOutcome};

/// Drops the earlier failed attempts of a tool call from the messages sent to the model, keeping
/// the last `keep_last` (default 1) of each run of failures: a model that needed four tries to
/// get a call's arguments right is then sent one wrong attempt and its correction, not four.
///
/// A failed attempt is a tool call answered by a retry (a tool return with outcome `Retried`, or
/// an older history's retry prompt); the attempts of a tool up to its next success make one run
/// of failures. An attempt is dropped whole (its call and its retry), and only where that leaves
/// the messages alternating (a response made only of dropped calls goes with its request only
/// when that request held only their retries). Only what is sent changes (in
/// `before_model_request`): the run's message history keeps every attempt.
///
/// pydantic-ai-harness 0.62 has no capability of this name; this one follows the shape of its
/// history processors.
///
/// ```
/// use toolsmith::capability::CompactRetryHistory;
/// use toolsmith::prelude::*;
///
/// let agent = Agent::builder(TestModel::default()).capability(CompactRetryHistory::new()).build().unwrap();
/// # let _ = agent;
/// ```
#[derive(Debug, Clone)]
pub struct CompactRetryHistory {
    keep_last: usize,
    tools: Option<Arc<HashSet<String>>>,
}

impl Default for CompactRetryHistory {
    fn default() -> Self {
        CompactRetryHistory { keep_last: 1, tools: None }
    }
}

impl CompactRetryHistory {
    /// Keeps the last failed attempt of each call, for every tool.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many of the last failed attempts of a run of failures are kept (at least 1: the model
    /// keeps the correction it is working from).
    pub fn keep_last(mut self, keep_last: usize) -> Self {
        self.keep_last = keep_last.max(1);
        self
    }

    /// Only these tools' attempts are compacted (default: every tool's).
    pub fn tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = Some(Arc::new(tools.into_iter().map(Into::into).collect()));
        self
    }

    /// The messages with the earlier failed attempts dropped.
    pub fn compact(&self, messages: Vec<ModelMessage>) -> Vec<ModelMessage> {
        let drop = self.dropped_calls(&messages);
        if drop.is_empty() {
            return messages;
        }
        let mut out: Vec<ModelMessage> = Vec::with_capacity(messages.len());
        let mut skip_next_request = false;
        for message in messages {
            match message {
                ModelMessage::Response(mut r) => {
                    r.parts.retain(|p| !matches!(p, ModelResponsePart::ToolCall(c) if drop.contains(&c.tool_call_id)));
                    skip_next_request = r.parts.is_empty();
                    if !skip_next_request {
                        out.push(ModelMessage::Response(r));
                    }
                }
                ModelMessage::Request(mut r) => {
                    r.parts.retain(|p| retry_id(p).is_none_or(|id| !drop.contains(id)));
                    if !(skip_next_request || r.parts.is_empty()) {
                        out.push(ModelMessage::Request(r));
                    }
                    skip_next_request = false;
                }
            }
        }
        out
    }

    /// The ids of the calls to drop: failed attempts with `keep_last` later failures of the same
    /// tool in their run of failures, where dropping keeps the messages alternating.
    fn dropped_calls(&self, messages: &[ModelMessage]) -> HashSet<String> {
        // How each call ended (by id), from the requests.
        let mut retried: HashSet<&str> = HashSet::new();
        for m in messages {
            if let ModelMessage::Request(r) = m {
                retried.extend(r.parts.iter().filter_map(retry_id));
            }
        }
        // The runs of failures of each tool, in order; a success (any other answer) ends one.
        let mut runs: HashMap<&str, Vec<Vec<&str>>> = HashMap::new();
        for m in messages {
            let ModelMessage::Response(r) = m else { continue };
            for p in &r.parts {
                let ModelResponsePart::ToolCall(c) = p else { continue };
                if self.tools.as_ref().is_some_and(|t| !t.contains(&c.tool_name)) {
                    continue;
                }
                let tool_runs = runs.entry(c.tool_name.as_str()).or_insert_with(|| vec![Vec::new()]);
                if retried.contains(c.tool_call_id.as_str()) {
                    if let Some(run) = tool_runs.last_mut() {
                        run.push(c.tool_call_id.as_str());
                    }
                } else {
                    tool_runs.push(Vec::new());
                }
            }
        }
        let candidates: HashSet<&str> = runs
            .values()
            .flatten()
            .flat_map(|run| run[..run.len().saturating_sub(self.keep_last)].iter().copied())
            .collect();
        if candidates.is_empty() {
            return HashSet::new();
        }
        // A response made only of dropped calls may go only with a request made only of their retries.
        let mut keep: HashSet<&str> = HashSet::new();
        for pair in messages.windows(2) {
            let (ModelMessage::Response(resp), ModelMessage::Request(req)) = (&pair[0], &pair[1]) else { continue };
            let calls: Vec<&str> = resp
                .parts
                .iter()
                .filter_map(|p| match p {
                    ModelResponsePart::ToolCall(c) => Some(c.tool_call_id.as_str()),
                    _ => None,
                })
                .collect();
            let only_dropped = resp
                .parts
                .iter()
                .all(|p| matches!(p, ModelResponsePart::ToolCall(c) if candidates.contains(c.tool_call_id.as_str())));
            let request_only_retries = req.parts.iter().all(|p| retry_id(p).is_some_and(|id| candidates.contains(id)));
            if only_dropped && !request_only_retries {
                keep.extend(calls);
            }
        }
        candidates.difference(&keep).map(|s| s.to_string()).collect()
    }
}

/// The call id a request part retries, when it is a tool call's retry.
fn retry_id(part: &ModelRequestPart) -> Option<&str> {
    match part {
        ModelRequestPart::ToolReturn(t) if t.outcome == ToolOutcome::Retried => Some(&t.tool_call_id),
        ModelRequestPart::RetryPrompt(r) if r.tool_name.is_some() => r.tool_call_id.as_deref(),
        _ => None,
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for CompactRetryHistory {
    fn hooks_stage(&self, stage: HookStage) -> bool {
        stage == HookStage::ModelRequest
    }

    fn has_prepare_tools(&self) -> bool {
        false
    }

    async fn before_model_request(
        &self,
        _ctx: &RunContext<D>,
        mut request: ModelRequestContext,
    ) -> Result<ModelRequestContext, AgentRunError> {
        let messages = Arc::unwrap_or_clone(request.messages);
        request.messages = Arc::new(self.compact(messages));
        Ok(request)
    }
}
