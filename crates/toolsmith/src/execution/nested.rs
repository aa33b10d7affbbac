//! Calls a tool makes to other tools of the run (code mode's `run_code`): each goes through the
//! run's own path for a call, its hooks and its usage count.

use super::*;
use std::borrow::Cow;
use std::sync::atomic::AtomicU32;

/// What holds the step's configuration (the agent), shared with the calls.
pub(crate) trait StepSource<D>: Send + Sync {
    fn step(&self) -> &StepConfig<D>;
}

/// The run's path for calls that a tool makes to other tools while it runs, as a code-execution
/// tool does for the functions its snippet calls: arguments validated (every error at once)
/// through the capabilities' validate hooks, the tool run through their execute hooks under its
/// timeout (the tool's, else its toolset's), on the blocking pool for a synchronous tool, with
/// panics caught; each call whose tool returned is counted in the run's
/// [`RunUsage::tool_calls`](crate::usage::RunUsage) when the step ends.
///
/// A tool finds it in its context with [`NestedCalls::of`]: the agent puts it in the context of
/// every tool call of a run. What the called tool returns or raises comes back as it
/// is: a [`ToolError::Retry`] or [`ToolError::Validation`] is the calling tool's to report (it
/// is not a retry of the run). A tool that needs approval is refused with
/// [`ToolError::ApprovalRequired`] unless `ctx` says the call is approved
/// ([`RunContext::tool_call_approved`], which the called tool then sees), and an external tool
/// with [`ToolError::CallDeferred`]: the calling tool decides what waiting means for it.
pub struct NestedCalls<D> {
    caps: Capabilities<D>,
    agent: Arc<dyn StepSource<D>>,
    counted: Arc<AtomicU32>,
}

impl<D> Clone for NestedCalls<D> {
    fn clone(&self) -> Self {
        NestedCalls { caps: self.caps.clone(), agent: self.agent.clone(), counted: self.counted.clone() }
    }
}

impl<D> std::fmt::Debug for NestedCalls<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NestedCalls").finish_non_exhaustive()
    }
}

impl<D: 'static> NestedCalls<D> {
    /// The run's nested calls, from the context of a tool call; `None` outside an agent run (a
    /// context made with [`RunContext::with_deps`], for one).
    pub fn of(ctx: &RunContext<D>) -> Option<&NestedCalls<D>>
    where
        D: Send + Sync,
    {
        ctx.nested.as_deref().and_then(|n| n.downcast_ref::<NestedCalls<D>>())
    }

    pub(crate) fn new(caps: Capabilities<D>, agent: Arc<dyn StepSource<D>>) -> Self {
        NestedCalls { caps, agent, counted: Arc::new(AtomicU32::new(0)) }
    }

    /// The calls that returned since the last time this was asked (the run adds them to its
    /// usage after each step).
    pub(crate) fn take_counted(&self) -> u32 {
        self.counted.swap(0, Ordering::Relaxed)
    }
}

impl<D: Clone + Send + Sync + 'static> NestedCalls<D> {
    /// Calls `tool` (one of the tools the calling tool was given, e.g. by the toolset its
    /// capability wraps) for `call`, from inside the tool whose context is `ctx`.
    ///
    /// The called tool's context is `ctx` with the call's name and id, its retry count and
    /// budget. The result is the tool's output, or the error the run would have turned into a
    /// retry or a failure.
    pub async fn call(
        &self,
        ctx: &RunContext<D>,
        tool: &ToolsetTool<D>,
        call: &ToolCallPart,
    ) -> Result<ToolOutput, ToolError> {
        match tool.def.kind {
            ToolKind::External => return Err(ToolError::CallDeferred(crate::tool::CallDeferred::default())),
            ToolKind::Unapproved if !ctx.tool_call_approved => {
                return Err(ToolError::ApprovalRequired(crate::tool::ApprovalRequired::default()));
            }
            _ if tool.requires_approval && !ctx.tool_call_approved => {
                return Err(ToolError::ApprovalRequired(crate::tool::ApprovalRequired::default()));
            }
            _ => {}
        }
        let inner = self.agent.step();
        let max_retries = tool.max_retries.unwrap_or(inner.retries);
        let ready = Ready {
            index: 0,
            call: Call::Borrowed(call),
            tool,
            raw: None,
            args: None,
            max_retries,
            timeout: tool.def.timeout.or(tool.toolset_timeout),
            base: ctx,
            retry: ctx.retries.get(&call.tool_name).copied().unwrap_or(0),
            approved: ctx.tool_call_approved,
            metadata: None,
        };
        let validated = validate_call(&self.caps, &ready).await?;
        let args = match validated {
            Some(args) => Cow::Owned(args),
            None => Cow::Borrowed(ready.raw_args()),
        };
        let (result, ran_ok) = start_call(inner, &self.caps, &ready, args).await;
        if ran_ok {
            self.counted.fetch_add(1, Ordering::Relaxed);
        }
        result
    }
}
