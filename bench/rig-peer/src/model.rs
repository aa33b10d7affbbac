//! BENCH.md's scripted model in rig's terms: a completion runtime behind rig's scripted wire.
//!
//! rig 0.44 has a public scripted model, `rig_core::test_utils::MockCompletionModel` (feature
//! `test-utils`), but it is a queue of turns, not a function of the history: every request pops
//! the next turn (a run of W + N + 1 runs needs its 2 × (W + N + 1) turns queued in advance and
//! fails past them), it keeps a copy of every request it was sent for the life of the model (a
//! memory that grows with every run), and it serializes each turn into the response's `raw`
//! document. None of that is the tool layer's work, and the first makes 10,000 concurrent runs
//! on one agent depend on the order in which their requests arrive.
//!
//! BENCH.md's scripted model is an async function of the history instead (Pydantic AI's
//! `FunctionModel`). rig's own example of a local model (`rig-agent`'s `retry_on_truncation`)
//! is a [`Transport`] of the scripted wire [`MockScript`]: the wire hands the request over as it
//! is, and the runtime answers with frames that rig's decoder writes through the ordinary
//! completion path. [`Scripted`] is that runtime: it calls a function of the request (which holds
//! the history) and answers with one whole response, after an optional delay (`concurrent_10k`).

use std::sync::Arc;
use std::time::Duration;

use rig_core::Model;
use rig_core::completion::{CompletionRequest, CompletionResponse, Usage};
use rig_core::driver::{Exchange, Opened, Opening, Transport};
use rig_core::message::{AssistantContent, Origin, ToolName};
use rig_core::test_utils::{MOCK_API, MOCK_PROVIDER, MockFrame, MockScript};

/// What the scripted model answers to one request.
pub type Respond = dyn Fn(&CompletionRequest) -> Vec<AssistantContent> + Send + Sync;

/// The runtime of a scripted model: `respond` picks the answer from the request.
#[derive(Clone)]
pub struct Scripted {
    respond: Arc<Respond>,
    delay: Option<Duration>,
}

impl Scripted {
    /// A model answering each request with `respond(request)`, at once.
    pub fn new(respond: impl Fn(&CompletionRequest) -> Vec<AssistantContent> + Send + Sync + 'static) -> Self {
        Scripted { respond: Arc::new(respond), delay: None }
    }

    /// The same model, answering each request after `delay` (`tokio::time::sleep`).
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// The model as rig takes it: the scripted wire bound to this runtime.
    pub fn model(self) -> Model<MockScript, Scripted> {
        Model::new(MockScript::default(), self)
    }
}

impl Transport<MockScript> for Scripted {
    fn send(&self, request: CompletionRequest, _exchange: Exchange) -> Opening<MockFrame> {
        let respond = self.respond.clone();
        let delay = self.delay;
        Opening::new(async move {
            if let Some(delay) = delay {
                tokio::time::sleep(delay).await;
            }
            let choice = respond(&request);
            let origin = Origin::new(MOCK_API, MOCK_PROVIDER, "");
            // No provider document: a function model has none (`raw` is `null`).
            let response = CompletionResponse::new(choice, Usage::default(), origin, serde_json::Value::Null);
            Ok(Opened::new(futures::stream::iter([Ok(MockFrame::Response(Box::new(response)))])))
        })
    }
}

/// The number of messages the model is sent (the prompt included), as BENCH.md's scripted model
/// counts them: 1 on the first request of a run.
pub fn history_len(request: &CompletionRequest) -> usize {
    request.chat_history.len()
}

/// A tool name known to be valid.
pub fn tool_name(name: impl Into<String>) -> ToolName {
    ToolName::new(name).expect("a non-empty tool name")
}

/// The text answer `text`.
pub fn text(text: &str) -> Vec<AssistantContent> {
    vec![AssistantContent::text(text)]
}
