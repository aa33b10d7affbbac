//! [`PrepareTools`]: filter or edit the tool definitions offered each step.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::{Capability, HookStage};
use crate::context::RunContext;
use crate::error::AgentRunError;
use crate::tool::ToolDefinition;

type PrepareFn<D> =
    Arc<dyn Fn(RunContext<D>, Vec<ToolDefinition>) -> BoxFuture<'static, Vec<ToolDefinition>> + Send + Sync>;

/// A capability that passes the function tool definitions of each step through a function,
/// after each tool's own `prepare`. Returning an empty list hides every tool.
///
/// ```
/// use toolsmith::capability::PrepareTools;
/// use toolsmith::prelude::*;
///
/// // Everything strict.
/// let strict = PrepareTools::<()>::new(|_ctx, defs| {
///     defs.into_iter().map(|d| d.strict(true)).collect()
/// });
/// # let _ = strict;
/// ```
pub struct PrepareTools<D> {
    f: PrepareFn<D>,
}

impl<D: Clone + Send + Sync + 'static> PrepareTools<D> {
    /// From a synchronous function.
    pub fn new<F>(f: F) -> Self
    where
        F: Fn(&RunContext<D>, Vec<ToolDefinition>) -> Vec<ToolDefinition> + Send + Sync + 'static,
    {
        PrepareTools {
            f: Arc::new(move |ctx, defs| {
                let out = f(&ctx, defs);
                Box::pin(async move { out })
            }),
        }
    }

    /// From an async function.
    pub fn new_async<F, Fut>(f: F) -> Self
    where
        F: Fn(RunContext<D>, Vec<ToolDefinition>) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Vec<ToolDefinition>> + Send + 'static,
    {
        PrepareTools { f: Arc::new(move |ctx, defs| Box::pin(f(ctx, defs))) }
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for PrepareTools<D> {
    fn hooks_stage(&self, _: HookStage) -> bool {
        false
    }
    async fn prepare_tools(
        &self,
        ctx: &RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        Ok((self.f)(ctx.clone(), tools).await)
    }
}
