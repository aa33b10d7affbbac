//! [`ProcessHistory`]: change the messages sent to the model.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::{Capability, HookStage, ModelRequestContext};
use crate::context::RunContext;
use crate::error::{AgentRunError, UserError};
use crate::messages::ModelMessage;

type AsyncFn<D> = Arc<dyn Fn(RunContext<D>, Vec<ModelMessage>) -> BoxFuture<'static, Vec<ModelMessage>> + Send + Sync>;

type SyncFn<D> = Arc<dyn Fn(&RunContext<D>, Vec<ModelMessage>) -> Vec<ModelMessage> + Send + Sync>;

enum Processor<D> {
    Sync(SyncFn<D>),
    Async(AsyncFn<D>),
}

/// A capability that passes the messages of every model request through a function before they
/// are sent (in `before_model_request`): keep the last few, drop tool chatter, summarise old
/// turns. Only what is sent changes; the run's message history keeps every message.
///
/// The result must not be empty and must end with a request (the model answers the last
/// request); otherwise the run ends with a [`UserError`].
///
/// ```
/// use toolsmith::capability::ProcessHistory;
/// use toolsmith::prelude::*;
///
/// // Send only the last five messages.
/// let recent = ProcessHistory::<()>::new(|_ctx, messages| {
///     let skip = messages.len().saturating_sub(5);
///     messages.into_iter().skip(skip).collect()
/// });
/// # let _ = recent;
/// ```
pub struct ProcessHistory<D> {
    f: Processor<D>,
}

impl<D: Clone + Send + Sync + 'static> ProcessHistory<D> {
    /// From a synchronous function of the run context and the messages.
    pub fn new<F>(f: F) -> Self
    where
        F: Fn(&RunContext<D>, Vec<ModelMessage>) -> Vec<ModelMessage> + Send + Sync + 'static,
    {
        ProcessHistory { f: Processor::Sync(Arc::new(f)) }
    }

    /// From an async function (for example one that asks a model for a summary).
    pub fn new_async<F, Fut>(f: F) -> Self
    where
        F: Fn(RunContext<D>, Vec<ModelMessage>) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Vec<ModelMessage>> + Send + 'static,
    {
        ProcessHistory { f: Processor::Async(Arc::new(move |ctx, messages| Box::pin(f(ctx, messages)))) }
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for ProcessHistory<D> {
    fn hooks_stage(&self, stage: HookStage) -> bool {
        stage == HookStage::ModelRequest
    }
    fn has_prepare_tools(&self) -> bool {
        false
    }

    async fn before_model_request(
        &self,
        ctx: &RunContext<D>,
        mut request: ModelRequestContext,
    ) -> Result<ModelRequestContext, AgentRunError> {
        let messages = Arc::unwrap_or_clone(request.messages);
        let processed = match &self.f {
            Processor::Sync(f) => f(ctx, messages),
            Processor::Async(f) => f(ctx.clone(), messages).await,
        };
        match processed.last() {
            None => {
                return Err(UserError::new(
                    "ProcessHistory returned no messages: the processed history cannot be empty; keep at least the last request",
                )
                .into());
            }
            Some(ModelMessage::Response(_)) => {
                return Err(UserError::new(
                    "ProcessHistory returned a history that ends with a response: the processed history must end with a `ModelRequest`; keep the last request when you drop or summarise messages",
                )
                .into());
            }
            Some(ModelMessage::Request(_)) => {}
        }
        request.messages = Arc::new(processed);
        Ok(request)
    }
}
