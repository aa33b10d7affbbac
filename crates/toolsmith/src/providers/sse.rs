//! Server-sent events: the events of a streamed response, and [`drive`], which runs a provider's
//! [`StreamProcessor`] over them to make a [`ModelStream`].

use std::collections::VecDeque;

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;

use crate::messages::ModelResponse;
use crate::model::{ModelError, ModelStream, ModelStreamEvent};
use crate::providers::http::error_chain;

pub(crate) fn sse_error_text(e: &eventsource_stream::EventStreamError<reqwest::Error>) -> String {
    match e {
        // URLs never carry a key here (keys travel in headers), so the transport error is shown as is.
        eventsource_stream::EventStreamError::Transport(t) => error_chain(t),
        other => other.to_string(),
    }
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field (`message` when absent).
    pub(crate) event: String,
    /// The `data:` field.
    pub(crate) data: String,
}

pub(crate) type SseStream = BoxStream<'static, Result<SseEvent, ModelError>>;

/// A provider's streaming state machine: SSE events in, stream events out.
pub(crate) trait StreamProcessor: Send + 'static {
    /// Handles one event, pushing what it produces; returns `true` when the stream is complete.
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<ModelStreamEvent>) -> Result<bool, ModelError>;
    /// Builds the final response (pushing the last `ToolCallEnd` events first).
    fn finish(&mut self, out: &mut Vec<ModelStreamEvent>) -> Result<ModelResponse, ModelError>;
}

struct DriveState<P> {
    sse: SseStream,
    processor: P,
    queue: VecDeque<Result<ModelStreamEvent, ModelError>>,
    finished: bool,
}

impl<P: StreamProcessor> DriveState<P> {
    fn complete(&mut self) {
        let mut out = Vec::new();
        let result = self.processor.finish(&mut out);
        self.queue.extend(out.into_iter().map(Ok));
        match result {
            Ok(response) => self.queue.push_back(Ok(ModelStreamEvent::Final(response))),
            Err(e) => self.queue.push_back(Err(e)),
        }
        self.finished = true;
    }
}

/// Runs a processor over an SSE stream.
pub(crate) fn drive<P: StreamProcessor>(sse: SseStream, processor: P) -> ModelStream {
    let state = DriveState { sse, processor, queue: VecDeque::new(), finished: false };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(item) = state.queue.pop_front() {
                return Some((item, state));
            }
            if state.finished {
                return None;
            }
            match state.sse.next().await {
                None => state.complete(),
                Some(Err(e)) => {
                    state.queue.push_back(Err(e));
                    state.finished = true;
                }
                Some(Ok(event)) => {
                    let mut out = Vec::new();
                    match state.processor.on_event(&event, &mut out) {
                        Ok(done) => {
                            state.queue.extend(out.into_iter().map(Ok));
                            if done {
                                state.complete();
                            }
                        }
                        Err(e) => {
                            state.queue.extend(out.into_iter().map(Ok));
                            state.queue.push_back(Err(e));
                            state.finished = true;
                        }
                    }
                }
            }
        }
    })
    .boxed()
}

/// Parses an SSE data field as JSON, or says which provider sent what.
pub(crate) fn parse_event_json(provider: &str, data: &str) -> Result<Value, ModelError> {
    serde_json::from_str(data).map_err(|e| {
        let snippet: String = data.chars().take(200).collect();
        ModelError::new(
            "UnexpectedModelBehavior",
            format!("the {provider} stream sent an event that is not JSON ({e}): {snippet}"),
        )
    })
}
