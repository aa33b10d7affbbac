//! The mutable state of one run: its history, usage, retry counts and event sink, shared by the
//! agent's state machine and the step executor.

use std::collections::HashMap;
use std::sync::Arc;

use crate::messages::{ModelMessage, ModelRequest, ModelRequestPart, SoundPrefix};
use crate::run::{AgentEvent, EventSink};
use crate::usage::RunUsage;

/// The state of one run.
pub(crate) struct RunState {
    /// Where the run's events go, if anywhere.
    pub(crate) events: Option<EventSink>,
    /// The run's history. It only grows, but for its last message (through [`Self::pop_last`] and
    /// [`Self::last_request_mut`]), which is what [`Self::sound`] counts on.
    pub(crate) messages: Arc<Vec<ModelMessage>>,
    /// What earlier requests found of the history's soundness, so that each request checks only
    /// what was appended since (see [`crate::messages::sendable_known`]).
    pub(crate) sound: SoundPrefix,
    pub(crate) new_start: usize,
    pub(crate) usage: RunUsage,
    pub(crate) retries: Arc<HashMap<String, u32>>,
    pub(crate) output_retries: u32,
    pub(crate) run_step: u32,
    /// Whether the output is validated as it streams, each partial output sent as an
    /// [`AgentEvent::PartialOutput`](super::AgentEvent::PartialOutput).
    pub(crate) partial_output: bool,
    /// Hidden tools already refused once in this run (the first refusal is free); boxed, as
    /// most runs refuse none.
    #[allow(clippy::box_collection, reason = "a pointer in the run's state, not a 48-byte set")]
    pub(crate) refused: Option<Box<std::collections::HashSet<String>>>,
    /// The message of the event handler's panic, once it panicked (see [`guard_sink`]); only a
    /// run with a handler has the slot.
    pub(crate) handler_panic: Option<Arc<std::sync::Mutex<Option<String>>>>,
    /// What code inside the run reported spending on model calls of its own
    /// (`RunContext::add_usage`), not yet in `usage`; made as the run begins.
    pub(crate) spent: Option<crate::context::UsageSink>,
}

/// The retry counts of a run that has retried nothing: one empty map every such run shares (a
/// step that counts a retry copies it).
pub(crate) fn no_retries() -> Arc<HashMap<String, u32>> {
    static EMPTY: std::sync::LazyLock<Arc<HashMap<String, u32>>> = std::sync::LazyLock::new(Default::default);
    EMPTY.clone()
}

/// The user's event handler with its panics caught: the first panic is kept in `slot` (the run
/// ends with it at its next step) and the handler is not called again.
pub(crate) fn guard_sink(sink: EventSink, slot: Arc<std::sync::Mutex<Option<String>>>) -> EventSink {
    Arc::new(move |event| {
        let mut panicked = slot.lock().unwrap_or_else(|p| p.into_inner());
        if panicked.is_some() {
            return;
        }
        // The lock is not held while the handler runs (it may emit from another thread).
        drop(panicked);
        if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink(event))) {
            panicked = slot.lock().unwrap_or_else(|p| p.into_inner());
            panicked.get_or_insert_with(|| crate::error::panic_message(p));
        }
    })
}

impl RunState {
    /// Adds what code inside the run reported spending (`RunContext::add_usage`) to the usage.
    pub(crate) fn absorb_spent(&mut self) {
        if let Some(spent) = &self.spent {
            self.usage += &spent.take();
        }
    }

    /// The run's error for the event handler's panic, if it panicked.
    pub(crate) fn handler_panicked(&self) -> Option<crate::error::AgentRunError> {
        let slot = self.handler_panic.as_ref()?.lock().unwrap_or_else(|p| p.into_inner());
        slot.as_ref().map(|message| crate::error::AgentRunError::Panicked {
            during: "the run's event handler".into(),
            message: message.clone(),
        })
    }

    /// Sends an event to the run's handler, if it has one.
    pub(crate) fn emit(&self, event: impl FnOnce() -> AgentEvent) {
        if let Some(sink) = &self.events {
            sink(event());
        }
    }

    pub(crate) fn push(&mut self, message: impl Into<ModelMessage>) {
        let messages = Arc::make_mut(&mut self.messages);
        // The history doubles, from room for two messages (a request and its answer): a run
        // that calls tools then holds room for its fourth message while it waits on its second
        // answer, and ends without moving its history. Growing by less holds less while runs
        // wait, but every run moves its history as it ends, between the state other runs still
        // hold: at 10,000 runs in flight that left 4.8 KiB of RSS per run against 4.3.
        if messages.len() == messages.capacity() {
            messages.reserve_exact(messages.len().max(2));
        }
        messages.push(message.into());
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
        self.sound.last_may_change(self.messages.len());
    }

    /// Drops the last message if it is a request without parts.
    pub(crate) fn pop_empty_request(&mut self) {
        if matches!(self.messages.last(), Some(ModelMessage::Request(r)) if r.parts.is_empty()) {
            self.pop_last();
        }
    }

    /// Drops the user prompt that ends the last request, if it does.
    pub(crate) fn drop_trailing_prompt(&mut self) {
        if let Some(ModelMessage::Request(r)) = self.messages.last()
            && matches!(r.parts.last(), Some(ModelRequestPart::UserPrompt(_)))
            && let Some(r) = self.last_request_mut()
        {
            r.parts.pop();
        }
    }

    pub(crate) fn last_request_mut(&mut self) -> Option<&mut ModelRequest> {
        self.sound.last_may_change(self.messages.len());
        match Arc::make_mut(&mut self.messages).last_mut() {
            Some(ModelMessage::Request(r)) => Some(r),
            _ => None,
        }
    }
}
