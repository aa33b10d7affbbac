//! The Vercel AI SDK's UI message stream (`pydantic_ai.ui.vercel_ai`): a run's events as
//! data-stream chunks for SDK v5 or v6 (v6 adds tool approval requests and denials), and a chat
//! request as a run's input.
//!
//! ```
//! use toolsmith::prelude::*;
//! use toolsmith_ui::vercel_ai::{Chunk, SdkVersion, VercelAiStream, VercelRequest};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let body = br#"{"id": "chat1", "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "Hi"}]}]}"#;
//! let input = VercelRequest::from_json(body)?.to_run_input()?;
//! let agent = Agent::builder(FunctionModel::sync(|_, _| ModelResponse::text("Hello!"))).build()?;
//!
//! let mut stream = VercelAiStream::builder().sdk_version(SdkVersion::V6).build();
//! let mut chunks = stream.start();
//! let (tx, rx) = std::sync::mpsc::channel();
//! let result = agent.run(input.prompt.unwrap_or_default()).event_handler(move |e| { let _ = tx.send(e); }).await;
//! chunks.extend(rx.try_iter().flat_map(|e| stream.event(&e)));
//! chunks.extend(stream.finish(result.as_ref().map(|_| None)));
//! assert!(chunks.contains(&Chunk::TextDelta { id: match &chunks[2] { Chunk::TextStart { id } => id.clone(), _ => unreachable!() }, delta: "Hello!".into() }));
//! assert_eq!(chunks.last(), Some(&Chunk::Done));
//! # Ok(())
//! # }
//! ```

mod chunks;
mod encoder;
mod request;

pub use chunks::Chunk;
pub use request::{UiMessage, VercelRequest};

use toolsmith::AgentRunError;
use toolsmith::agent::AgentEvent;
use toolsmith::deferred::DeferredToolRequests;

use crate::transform::Transformer;
use encoder::VercelEncoder;

/// The header a UI message stream response carries.
pub const STREAM_HEADER: (&str, &str) = ("x-vercel-ai-ui-message-stream", "v1");

/// Which SDK the stream is for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum SdkVersion {
    /// AI SDK 5 (no approvals on the wire).
    #[default]
    V5,
    /// AI SDK 6: approval requests and denials.
    V6,
}

/// Turns one run's events into Vercel AI chunks: [`start`](Self::start), then
/// [`event`](Self::event) for each of the run's events, then [`finish`](Self::finish).
#[derive(Debug)]
pub struct VercelAiStream {
    inner: Transformer<VercelEncoder>,
}

/// Builds a [`VercelAiStream`].
#[derive(Default)]
#[must_use]
pub struct VercelAiStreamBuilder {
    version: SdkVersion,
    ids: Option<Box<dyn FnMut() -> String + Send>>,
}

impl std::fmt::Debug for VercelAiStreamBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VercelAiStreamBuilder").field("version", &self.version).finish_non_exhaustive()
    }
}

impl VercelAiStreamBuilder {
    /// The SDK version (v5 by default).
    pub fn sdk_version(mut self, version: SdkVersion) -> Self {
        self.version = version;
        self
    }

    /// Where part ids come from (random UUIDs by default).
    pub fn part_ids(mut self, ids: impl FnMut() -> String + Send + 'static) -> Self {
        self.ids = Some(Box::new(ids));
        self
    }

    /// The stream.
    pub fn build(self) -> VercelAiStream {
        let ids = self.ids.unwrap_or_else(|| Box::new(|| uuid::Uuid::new_v4().to_string()));
        VercelAiStream { inner: Transformer::new(VercelEncoder::new(self.version, ids)) }
    }
}

impl VercelAiStream {
    /// A builder.
    pub fn builder() -> VercelAiStreamBuilder {
        VercelAiStreamBuilder::default()
    }

    /// The `start` chunk (also sent before the first event if not called).
    pub fn start(&mut self) -> Vec<Chunk> {
        self.inner.start()
    }

    /// The chunks for one of the run's events.
    pub fn event(&mut self, event: &AgentEvent) -> Vec<Chunk> {
        self.inner.push(event)
    }

    /// The last chunks: message metadata, the approval requests (v6), `finish` and `[DONE]`; or,
    /// for a failed run, `error` before them.
    pub fn finish(&mut self, result: Result<Option<&DeferredToolRequests>, &AgentRunError>) -> Vec<Chunk> {
        match result {
            Ok(deferred) => self.inner.finish_ok(deferred),
            Err(e) => self.inner.finish_err(&crate::error_message(e)),
        }
    }

    /// The calls whose results the client sent (calls it executed itself): a run resumed with
    /// them reports their results, which are not sent back (as Pydantic AI does not).
    pub fn client_answered(&mut self, tool_call_ids: impl IntoIterator<Item = String>) {
        self.inner.client_answered(tool_call_ids);
    }

    /// The last chunks of a run that failed with `message`.
    pub fn finish_with_error(&mut self, message: &str) -> Vec<Chunk> {
        self.inner.finish_err(message)
    }
}
