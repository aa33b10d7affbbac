//! Events of a run, for progress displays and streaming user interfaces.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::messages::{ModelResponse, ToolCallPart, ToolReturnPart};
use crate::model::ModelStreamEvent;

/// Something that happened during a run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AgentEvent {
    /// A request is being sent to the model (`step` counts the run's requests from 1).
    ModelRequest {
        /// The run step.
        step: u32,
    },
    /// A piece of the response as the model streams it (text and thinking deltas, tool-call
    /// starts and argument fragments); only for models built with
    /// [`Agent::builder_streaming`](crate::Agent::builder_streaming).
    Stream(ModelStreamEvent),
    /// The model's complete response.
    ModelResponse {
        /// The response.
        response: ModelResponse,
    },
    /// A call to a function tool, after its arguments were validated.
    FunctionToolCall {
        /// The call.
        call: ToolCallPart,
        /// Whether the arguments were valid (an invalid call is answered with a retry).
        args_valid: bool,
    },
    /// The result of a tool call: a return, a retry or a denial.
    FunctionToolResult {
        /// The part sent back to the model.
        result: ToolReturnPart,
    },
    /// The output so far, while the model streams it: validated as partial output (see
    /// [`RunContext::partial_output`](crate::RunContext::partial_output)), structured or text.
    /// Only for runs started with
    /// [`RunBuilder::stream_output`](crate::agent::RunBuilder::stream_output) on a streaming model.
    PartialOutput {
        /// The output so far.
        output: crate::run::RunOutput,
    },
    /// A request to the model's provider failed and is about to be tried again (an HTTP 429 or
    /// 5xx answer, a connection failure, no answer within the idle timeout): which retry, after
    /// what, and the wait before it. Only for the provider adapters' models, which also report
    /// retries to their own observer (the provider builders' `.on_retry(...)`).
    ProviderRetry(crate::model::ProviderRetry),
    /// The run has its output (`tool_name` is the output tool, for structured output).
    FinalResult {
        /// The output tool, when the output came through one.
        tool_name: Option<String>,
    },
}

/// Where a run sends its events.
pub(crate) type EventSink = Arc<dyn Fn(AgentEvent) + Send + Sync>;

tokio::task_local! {
    /// The events of the run polling a model request: where the provider adapters report
    /// their retries.
    static REQUEST_EVENTS: EventSink;
}

/// Polls a model request with the provider retries made inside it sent to `sink` as
/// [`AgentEvent::ProviderRetry`] events.
pub(crate) async fn with_provider_retries<F: std::future::Future>(sink: EventSink, fut: F) -> F::Output {
    REQUEST_EVENTS.scope(sink, fut).await
}

/// Reports a provider retry to the run polling the request, if any.
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini", feature = "bedrock"))]
pub(crate) fn report_provider_retry(retry: &crate::model::ProviderRetry) {
    let _ = REQUEST_EVENTS.try_with(|sink| sink(AgentEvent::ProviderRetry(retry.clone())));
}

/// The events of a run as a stream (see [`RunBuilder::stream`](crate::agent::RunBuilder::stream)).
#[derive(Debug)]
pub struct EventStream {
    pub(crate) rx: tokio::sync::mpsc::UnboundedReceiver<AgentEvent>,
}

impl futures::Stream for EventStream {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        self.rx.poll_recv(cx)
    }
}
