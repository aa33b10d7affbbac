//! [`ProcessEventStream`]: hands the run's events to application code.

use std::future::Future;
use std::sync::Arc;

use futures::StreamExt;

use super::{Capability, EventBoxStream, HookStage};
use crate::context::RunContext;
use crate::run::AgentEvent;

type Processor = Arc<dyn Fn(EventBoxStream) -> EventBoxStream + Send + Sync>;

/// Forwards the run's event stream (model requests and responses, streamed deltas, tool calls
/// with `args_valid`, tool results, the final result) to application code, in one of two forms:
///
/// - a **handler** ([`ProcessEventStream::handler`]): an async closure called with each event,
///   in order; the events pass on unchanged, so several handlers (and the run's own event
///   handler) all see the same stream. The next event waits until the handler returns.
/// - a **processor** ([`ProcessEventStream::processor`]): a function from the stream to another
///   stream, which replaces it for the capabilities outside this one and for the run's event
///   handler: it may change, drop or add events. It is called for each ModelRequest and
///   CallTools node with that node's events, and the node waits for its stream to end.
///
/// With this capability a run produces its events even without an event handler of its own.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use toolsmith::agent::AgentEvent;
/// use toolsmith::capability::ProcessEventStream;
/// use toolsmith::prelude::*;
///
/// /// Add two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = seen.clone();
/// let agent = Agent::builder(TestModel::default())
///     .tool(add)
///     .capability(ProcessEventStream::handler(move |event: AgentEvent| {
///         if let AgentEvent::FunctionToolCall { call, args_valid } = &event {
///             log.lock().unwrap().push(format!("{} valid={args_valid}", call.tool_name));
///         }
///         async {}
///     }))
///     .build()?;
/// agent.run("1 + 1?").run_sync()?;
/// assert_eq!(*seen.lock().unwrap(), ["add valid=true"]);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct ProcessEventStream {
    processor: Processor,
}

impl std::fmt::Debug for ProcessEventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessEventStream").finish_non_exhaustive()
    }
}

impl ProcessEventStream {
    /// Calls `handler` with each event; the events pass on unchanged.
    pub fn handler<F, R>(handler: F) -> Self
    where
        F: Fn(AgentEvent) -> R + Send + Sync + 'static,
        R: Future<Output = ()> + Send + 'static,
    {
        let handler = Arc::new(handler);
        ProcessEventStream {
            processor: Arc::new(move |events: EventBoxStream| {
                let handler = handler.clone();
                events
                    .then(move |event| {
                        let seen = handler(event.clone());
                        async move {
                            seen.await;
                            event
                        }
                    })
                    .boxed()
            }),
        }
    }

    /// Replaces the stream with what `processor` makes of it.
    ///
    /// ```
    /// use futures::StreamExt;
    /// use toolsmith::agent::AgentEvent;
    /// use toolsmith::capability::ProcessEventStream;
    ///
    /// // Drops the streamed deltas, keeping the complete responses.
    /// let quiet = ProcessEventStream::processor(|events| {
    ///     events.filter(|e| std::future::ready(!matches!(e, AgentEvent::Stream(_)))).boxed()
    /// });
    /// # let _ = quiet;
    /// ```
    pub fn processor(processor: impl Fn(EventBoxStream) -> EventBoxStream + Send + Sync + 'static) -> Self {
        ProcessEventStream { processor: Arc::new(processor) }
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for ProcessEventStream {
    fn hooks_stage(&self, _: HookStage) -> bool {
        false
    }
    fn has_prepare_tools(&self) -> bool {
        false
    }

    fn wraps_event_stream(&self) -> bool {
        true
    }

    fn wrap_event_stream(&self, _ctx: &RunContext<D>, events: EventBoxStream) -> EventBoxStream {
        (self.processor)(events)
    }
}
