//! [`HandleDeferredToolCalls`]: settle deferred calls inline instead of ending the run.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::{Capability, HookStage};
use crate::context::RunContext;
use crate::deferred::{DeferredToolRequests, DeferredToolResults};

type Handler<D> =
    Arc<dyn Fn(RunContext<D>, DeferredToolRequests) -> BoxFuture<'static, Option<DeferredToolResults>> + Send + Sync>;

/// A capability that answers deferred calls (approvals, external calls) inline: the handler
/// returns results for some or all of them and the run goes on; calls it leaves unanswered pass
/// to the next capability, and end the run as deferred requests if nobody answers them.
///
/// ```
/// use toolsmith::capability::HandleDeferredToolCalls;
/// use toolsmith::deferred::ToolApproval;
///
/// // Approve every call whose arguments do not mention `/etc`.
/// let policy = HandleDeferredToolCalls::<()>::new(|_ctx, requests| {
///     let mut results = requests.results();
///     for call in &requests.approvals {
///         let safe = !call.args.to_string().contains("/etc");
///         results = results.approve(call.tool_call_id.clone(), if safe { ToolApproval::approved() } else { ToolApproval::denied_with("Not under /etc.") });
///     }
///     Some(results)
/// });
/// # let _ = policy;
/// ```
pub struct HandleDeferredToolCalls<D> {
    handler: Handler<D>,
}

impl<D: Clone + Send + Sync + 'static> HandleDeferredToolCalls<D> {
    /// From a synchronous handler.
    pub fn new<F>(f: F) -> Self
    where
        F: Fn(&RunContext<D>, &DeferredToolRequests) -> Option<DeferredToolResults> + Send + Sync + 'static,
    {
        HandleDeferredToolCalls {
            handler: Arc::new(move |ctx, requests| {
                let out = f(&ctx, &requests);
                Box::pin(async move { out })
            }),
        }
    }

    /// From an async handler (for example one that asks a person through another channel).
    pub fn new_async<F, Fut>(f: F) -> Self
    where
        F: Fn(RunContext<D>, DeferredToolRequests) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<DeferredToolResults>> + Send + 'static,
    {
        HandleDeferredToolCalls { handler: Arc::new(move |ctx, requests| Box::pin(f(ctx, requests))) }
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for HandleDeferredToolCalls<D> {
    fn hooks_stage(&self, _: HookStage) -> bool {
        false
    }
    fn has_prepare_tools(&self) -> bool {
        false
    }

    async fn handle_deferred_tool_calls(
        &self,
        ctx: &RunContext<D>,
        requests: &DeferredToolRequests,
    ) -> Option<DeferredToolResults> {
        (self.handler)(ctx.clone(), requests.clone()).await
    }
}
