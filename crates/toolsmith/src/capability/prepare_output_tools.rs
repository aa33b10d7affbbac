//! [`PrepareOutputTools`]: filter or edit the output tool definitions offered each step.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::{Capability, HookStage};
use crate::context::RunContext;
use crate::error::AgentRunError;
use crate::tool::ToolDefinition;

type PrepareFn<D> =
    Arc<dyn Fn(RunContext<D>, Vec<ToolDefinition>) -> BoxFuture<'static, Vec<ToolDefinition>> + Send + Sync>;

type SyncFn<D> = Arc<dyn Fn(&RunContext<D>, Vec<ToolDefinition>) -> Vec<ToolDefinition> + Send + Sync>;

enum Prepare<D> {
    Sync(SyncFn<D>),
    Async(PrepareFn<D>),
}

/// A capability that passes the output tool definitions of each step (the `final_result` tool
/// of structured output) through a function; [`PrepareTools`](super::PrepareTools) is the same
/// for function tools. Returning an empty list hides the output tools for that step, so the
/// model cannot end the run with them.
///
/// ```
/// use toolsmith::capability::PrepareOutputTools;
/// use toolsmith::prelude::*;
///
/// // The structured answer is only offered from the second step on.
/// let later = PrepareOutputTools::<()>::new(|ctx, defs| if ctx.run_step > 1 { defs } else { Vec::new() });
/// # let _ = later;
/// ```
pub struct PrepareOutputTools<D> {
    f: Prepare<D>,
}

impl<D: Clone + Send + Sync + 'static> PrepareOutputTools<D> {
    /// From a synchronous function.
    pub fn new<F>(f: F) -> Self
    where
        F: Fn(&RunContext<D>, Vec<ToolDefinition>) -> Vec<ToolDefinition> + Send + Sync + 'static,
    {
        PrepareOutputTools { f: Prepare::Sync(Arc::new(f)) }
    }

    /// From an async function.
    pub fn new_async<F, Fut>(f: F) -> Self
    where
        F: Fn(RunContext<D>, Vec<ToolDefinition>) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Vec<ToolDefinition>> + Send + 'static,
    {
        PrepareOutputTools { f: Prepare::Async(Arc::new(move |ctx, defs| Box::pin(f(ctx, defs)))) }
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for PrepareOutputTools<D> {
    fn hooks_stage(&self, _: HookStage) -> bool {
        false
    }
    fn has_prepare_tools(&self) -> bool {
        false
    }

    async fn prepare_output_tools(
        &self,
        ctx: &RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        Ok(match &self.f {
            Prepare::Sync(f) => f(ctx, tools),
            Prepare::Async(f) => f(ctx.clone(), tools).await,
        })
    }
}
