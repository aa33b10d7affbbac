//! The mutable state of one run: its history, usage, retry counts and event sink, shared by the
//! agent's state machine and the step executor.

use std::collections::HashMap;
use std::sync::Arc;

use crate::messages::{ModelMessage, ModelRequest};
use crate::run::{AgentEvent, EventSink};
use crate::usage::RunUsage;

/// The state of one run.
pub(crate) struct RunState {
    /// Where the run's events go, if anywhere.
    pub(crate) events: Option<EventSink>,
    pub(crate) messages: Arc<Vec<ModelMessage>>,
    pub(crate) new_start: usize,
    pub(crate) usage: RunUsage,
    pub(crate) retries: Arc<HashMap<String, u32>>,
    pub(crate) output_retries: u32,
    pub(crate) run_step: u32,
    /// Hidden tools already refused once in this run (the first refusal is free).
    pub(crate) refused: std::collections::HashSet<String>,
    pub(crate) run_id: String,
    pub(crate) conversation_id: String,
}

impl RunState {
    /// Sends an event to the run's handler, if it has one.
    pub(crate) fn emit(&self, event: impl FnOnce() -> AgentEvent) {
        if let Some(sink) = &self.events {
            sink(event());
        }
    }

    pub(crate) fn push(&mut self, message: impl Into<ModelMessage>) {
        Arc::make_mut(&mut self.messages).push(message.into());
    }

    /// Sets the `tool_kind` of a call in the latest response that has it.
    pub(crate) fn mark_call_kind(&mut self, tool_call_id: &str, kind: &str) {
        let messages = Arc::make_mut(&mut self.messages);
        for m in messages.iter_mut().rev() {
            if let ModelMessage::Response(r) = m {
                for p in r.parts.iter_mut() {
                    if let crate::messages::ModelResponsePart::ToolCall(c) = p
                        && c.tool_call_id == tool_call_id
                    {
                        c.tool_kind = Some(kind.to_string());
                        return;
                    }
                }
            }
        }
    }

    pub(crate) fn pop_last(&mut self) {
        Arc::make_mut(&mut self.messages).pop();
    }

    pub(crate) fn last_request_mut(&mut self) -> Option<&mut ModelRequest> {
        match Arc::make_mut(&mut self.messages).last_mut() {
            Some(ModelMessage::Request(r)) => Some(r),
            _ => None,
        }
    }
}
