//! AG-UI (`pydantic_ai.ui.ag_ui`): a run's events as AG-UI events, and a `RunAgentInput` as a
//! run's input.
//!
//! ```
//! use toolsmith::prelude::*;
//! use toolsmith_ui::ag_ui::{AgUiEvent, AgUiStream, RunAgentInput};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let body = br#"{"threadId": "t1", "runId": "r1", "messages": [{"id": "m1", "role": "user", "content": "Hi"}]}"#;
//! let input = RunAgentInput::from_json(body)?.to_run_input()?;
//! let agent = Agent::builder(FunctionModel::sync(|_, _| ModelResponse::text("Hello!"))).build()?;
//!
//! let mut stream = AgUiStream::builder().thread_id("t1").run_id("r1").build();
//! let mut events = stream.start();
//! let (tx, rx) = std::sync::mpsc::channel();
//! let result = agent.run(input.prompt.unwrap_or_default()).event_handler(move |e| { let _ = tx.send(e); }).await;
//! events.extend(rx.try_iter().flat_map(|e| stream.event(&e)));
//! events.extend(stream.finish(result.as_ref().map(|_| None)));
//! assert!(matches!(events.first(), Some(AgUiEvent::RunStarted { .. })));
//! assert!(matches!(events.last(), Some(AgUiEvent::RunFinished { .. })));
//! # Ok(())
//! # }
//! ```

mod encoder;
mod events;
mod request;

pub use encoder::{INTERRUPT_ID_PREFIX, PROTOCOL_VERSION};
pub use events::{AgUiEvent, Interrupt, RunOutcome};
pub use request::{FunctionCall, Message, ResumeEntry, RunAgentInput, ToolCall};

use toolsmith::AgentRunError;
use toolsmith::agent::AgentEvent;
use toolsmith::deferred::DeferredToolRequests;

use crate::transform::Transformer;
use encoder::AgUiEncoder;

/// Turns one run's events into AG-UI events: [`start`](Self::start), then
/// [`event`](Self::event) for each of the run's events, then [`finish`](Self::finish).
#[derive(Debug)]
pub struct AgUiStream {
    inner: Transformer<AgUiEncoder>,
}

/// Builds an [`AgUiStream`].
#[derive(Default)]
#[must_use]
pub struct AgUiStreamBuilder {
    thread_id: Option<String>,
    run_id: Option<String>,
    ids: Option<Box<dyn FnMut() -> String + Send>>,
}

impl std::fmt::Debug for AgUiStreamBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgUiStreamBuilder").field("thread_id", &self.thread_id).field("run_id", &self.run_id).finish()
    }
}

impl AgUiStreamBuilder {
    /// The conversation (the request's `threadId`; a new id by default).
    pub fn thread_id(mut self, id: impl Into<String>) -> Self {
        self.thread_id = Some(id.into());
        self
    }

    /// The run (the request's `runId`; a new id by default).
    pub fn run_id(mut self, id: impl Into<String>) -> Self {
        self.run_id = Some(id.into());
        self
    }

    /// Where message ids come from (random UUIDs by default).
    pub fn message_ids(mut self, ids: impl FnMut() -> String + Send + 'static) -> Self {
        self.ids = Some(Box::new(ids));
        self
    }

    /// The stream.
    pub fn build(self) -> AgUiStream {
        let new_id = || uuid::Uuid::new_v4().to_string();
        let ids = self.ids.unwrap_or_else(|| Box::new(new_id));
        let thread_id = self.thread_id.unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
        let run_id = self.run_id.unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
        AgUiStream { inner: Transformer::new(AgUiEncoder::new(thread_id, run_id, ids)) }
    }
}

impl AgUiStream {
    /// A builder.
    pub fn builder() -> AgUiStreamBuilder {
        AgUiStreamBuilder::default()
    }

    /// The stream for a request: its thread and run ids, and the protocol version it declares.
    pub fn for_request(input: &RunAgentInput) -> Self {
        let mut stream = Self::builder().thread_id(&input.thread_id).run_id(&input.run_id).build();
        stream.inner.encoder.declares_1_0 = input.declares_1_0();
        stream
    }

    /// `RUN_STARTED` (also sent before the first event if not called).
    pub fn start(&mut self) -> Vec<AgUiEvent> {
        stamped(self.inner.start())
    }

    /// The AG-UI events for one of the run's events.
    pub fn event(&mut self, event: &AgentEvent) -> Vec<AgUiEvent> {
        stamped(self.inner.push(event))
    }

    /// The last events: `RUN_FINISHED` (with the calls waiting for approval as interrupts) for a
    /// run that ended, `RUN_ERROR` for one that failed.
    pub fn finish(&mut self, result: Result<Option<&DeferredToolRequests>, &AgentRunError>) -> Vec<AgUiEvent> {
        match result {
            Ok(deferred) => stamped(self.inner.finish_ok(deferred)),
            Err(e) => self.finish_with_error(&crate::error_message(e)),
        }
    }

    /// The calls whose results the client sent (calls it executed itself): a run resumed with
    /// them reports their results, which are not sent back (as Pydantic AI does not).
    pub fn client_answered(&mut self, tool_call_ids: impl IntoIterator<Item = String>) {
        self.inner.client_answered(tool_call_ids);
    }

    /// The last events of a run that failed with `message` (a run cut short, say).
    pub fn finish_with_error(&mut self, message: &str) -> Vec<AgUiEvent> {
        // As in Pydantic AI, what closes the open part and the running calls before the error
        // carries no timestamp (only `RUN_ERROR` does).
        self.inner.finish_err(message)
    }
}

/// Every event with a timestamp (milliseconds since the epoch), as the Python adapter sends them.
fn stamped(mut events: Vec<AgUiEvent>) -> Vec<AgUiEvent> {
    let now = encoder::now_ms();
    for ts in events.iter_mut().filter_map(AgUiEvent::timestamp_mut) {
        ts.get_or_insert(now);
    }
    events
}
