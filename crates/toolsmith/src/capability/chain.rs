//! Dispatch of hooks over an ordered list of capabilities (the first outermost).

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::{
    AgentNode, DynCapability, EventBoxStream, Instrumentation, ModelRequestContext, ModelRequestNext, NodeNext,
    NodeResult, OutputInfo, OutputNext, ReinjectSystemPrompt, RunNext, ThreadExecutor, ToolCallInfo, ToolExecuteNext,
    ToolValidateNext, ordering,
};
use crate::context::RunContext;
use crate::deferred::{DeferredToolRequests, DeferredToolResults};
use crate::error::{AgentRunError, UserError};
use crate::messages::ModelResponse;
use crate::model::ModelSettings;
use crate::run::RunOutput;
use crate::tool::{ToolDefinition, ToolError, ToolOutput};

/// The model request at the centre of the chain.
pub(crate) type ModelCore<'a> =
    dyn Fn(ModelRequestContext) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>> + Send + Sync + 'a;
/// The validation at the centre of the chain.
pub(crate) type ValidateCore<'a> = dyn Fn(Value) -> BoxFuture<'a, Result<Value, ToolError>> + Send + Sync + 'a;
/// The tool execution at the centre of the chain.
pub(crate) type ExecuteCore<'a> = dyn Fn(Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> + Send + Sync + 'a;

/// The whole run at the centre of the `wrap_run` chain.
pub(crate) type RunCore<'a> = dyn Fn() -> BoxFuture<'a, Result<RunOutput, AgentRunError>> + Send + Sync + 'a;
/// One node of the run at the centre of the `wrap_node_run` chain.
pub(crate) type NodeCore<'a> = dyn Fn(AgentNode) -> BoxFuture<'a, Result<NodeResult, AgentRunError>> + Send + Sync + 'a;

/// The two stages of an output's hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutputStage {
    /// Raw output to validated value.
    Validate,
    /// Validated value to the run's output.
    Process,
}

/// The capabilities of an agent, in order.
pub(crate) struct Capabilities<D> {
    caps: Vec<Arc<dyn DynCapability<D>>>,
    /// What the built-ins that need it are told about the agent (also those a `for_run` makes).
    agent: Arc<AgentFacts>,
}

/// The agent's name and system prompts, for [`ReinjectSystemPrompt`] and [`Instrumentation`].
#[derive(Default)]
struct AgentFacts {
    name: Option<String>,
    system_prompts: Arc<[String]>,
}

impl<D> Clone for Capabilities<D> {
    fn clone(&self) -> Self {
        Capabilities { caps: self.caps.clone(), agent: self.agent.clone() }
    }
}

impl<D> Default for Capabilities<D> {
    fn default() -> Self {
        Capabilities { caps: Vec::new(), agent: Arc::default() }
    }
}

/// Errors that pass through `on_tool_execute_error`: retries and deferrals are answers, not failures.
fn passes_through(e: &ToolError) -> bool {
    matches!(
        e,
        ToolError::Retry(_) | ToolError::ApprovalRequired(_) | ToolError::CallDeferred(_) | ToolError::Panicked { .. }
    )
}

impl<D: Send + Sync + 'static> Capabilities<D> {
    pub(crate) fn push(&mut self, cap: Arc<dyn DynCapability<D>>) {
        self.caps.push(cap);
    }

    /// Adds boxed capabilities (a spec's), unwrapped.
    pub(crate) fn extend(&mut self, caps: Vec<super::BoxedCapability<D>>) {
        self.caps.extend(caps.into_iter().map(|c| c.0));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.caps.is_empty()
    }

    /// The capabilities as an agent runs them: sorted to satisfy their ordering constraints
    /// (a cycle or a missing requirement is an error), and told the agent's name and system
    /// prompts.
    pub(crate) fn for_agent(self, name: Option<&str>, system_prompts: &[String]) -> Result<Self, UserError> {
        let caps = ordering::sort(self.caps)?;
        let agent = AgentFacts { name: name.map(String::from), system_prompts: Arc::from(system_prompts.to_vec()) };
        let out = Capabilities { caps, agent: Arc::new(agent) };
        out.bind(&out.caps);
        Ok(out)
    }

    /// Tells the `ReinjectSystemPrompt` and `Instrumentation` leaves of `caps` about the agent.
    fn bind(&self, caps: &[Arc<dyn DynCapability<D>>]) {
        for c in caps {
            c.apply(&mut |leaf| {
                if let Some(r) = leaf.downcast_ref::<ReinjectSystemPrompt>() {
                    r.bind(&self.agent.system_prompts);
                } else if let Some(i) = leaf.downcast_ref::<Instrumentation>() {
                    i.bind(self.agent.name.as_deref());
                }
            });
        }
    }

    /// The pool of the first [`ThreadExecutor`], if any: the agent runs blocking tools under it.
    pub(crate) fn blocking_pool(&self) -> Option<Arc<crate::tool::pool::BlockingPool>> {
        let mut pool = None;
        for c in &self.caps {
            c.apply(&mut |leaf| {
                if pool.is_none()
                    && let Some(t) = leaf.downcast_ref::<ThreadExecutor>()
                {
                    pool = Some(t.pool());
                }
            });
        }
        pool
    }

    /// The toolsets the capabilities contribute.
    pub(crate) fn toolsets(&self) -> Vec<crate::toolset::BoxedToolset<D>> {
        self.caps.iter().filter_map(|c| c.toolset()).collect()
    }

    /// The run's toolset through every `wrapper_toolset` (the first capability's outermost);
    /// `None` when no capability wraps it.
    pub(crate) fn wrap_toolset(
        &self,
        toolset: crate::toolset::BoxedToolset<D>,
    ) -> Option<crate::toolset::BoxedToolset<D>> {
        let mut current = toolset;
        let mut wrapped = false;
        for c in self.caps.iter().rev() {
            if let Some(w) = c.wrapper_toolset(current.clone()) {
                current = w;
                wrapped = true;
            }
        }
        wrapped.then_some(current)
    }

    /// The capabilities for one run: each one's `for_run` instance, or itself; and whether any
    /// capability made a fresh instance.
    pub(crate) fn for_run(&self, ctx: &RunContext<D>) -> (Self, bool) {
        let mut fresh = Vec::new();
        let caps = self
            .caps
            .iter()
            .map(|c| match c.for_run(ctx) {
                Some(b) => {
                    fresh.push(b.0.clone());
                    b.0
                }
                None => c.clone(),
            })
            .collect();
        self.bind(&fresh);
        (Capabilities { caps, agent: self.agent.clone() }, !fresh.is_empty())
    }

    /// The capabilities' instructions, in order.
    pub(crate) async fn instructions(&self, ctx: &RunContext<D>) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.caps {
            if let Some(i) = c.instructions(ctx).await {
                out.push(i);
            }
        }
        out
    }

    /// The capabilities' model settings for this step, merged in order over `base`.
    pub(crate) fn model_settings(&self, ctx: &RunContext<D>, base: Option<ModelSettings>) -> Option<ModelSettings> {
        let mut settings = base;
        for c in &self.caps {
            if let Some(s) = c.model_settings(ctx) {
                settings = Some(match settings {
                    Some(b) => b.merged(&s),
                    None => s,
                });
            }
        }
        settings
    }

    /// Offers deferred calls to each capability in order; returns the results they gave
    /// (possibly for only some of the calls).
    pub(crate) async fn handle_deferred(
        &self,
        ctx: &RunContext<D>,
        requests: &DeferredToolRequests,
    ) -> DeferredToolResults {
        let mut results = DeferredToolResults::new();
        let mut remaining = requests.clone();
        for c in &self.caps {
            if remaining.is_empty() {
                break;
            }
            if let Some(r) = c.handle_deferred_tool_calls(ctx, &remaining).await {
                remaining = remaining.remaining(&r);
                results.update(r);
            }
        }
        results
    }

    pub(crate) async fn prepare_output_tools(
        &self,
        ctx: &RunContext<D>,
        mut tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        for c in &self.caps {
            tools = c.prepare_output_tools(ctx, tools).await?;
        }
        Ok(tools)
    }

    pub(crate) async fn before_run(&self, ctx: &RunContext<D>) -> Result<(), AgentRunError> {
        for c in &self.caps {
            c.before_run(ctx).await?;
        }
        Ok(())
    }

    pub(crate) async fn after_run(
        &self,
        ctx: &RunContext<D>,
        mut output: RunOutput,
    ) -> Result<RunOutput, AgentRunError> {
        for c in self.caps.iter().rev() {
            output = c.after_run(ctx, output).await?;
        }
        Ok(output)
    }

    /// Offers a run's error to each `on_run_error` (the last capability first) until one
    /// recovers.
    pub(crate) async fn on_run_error(
        &self,
        ctx: &RunContext<D>,
        error: AgentRunError,
    ) -> Result<RunOutput, AgentRunError> {
        let mut outcome = Err(error);
        for c in self.caps.iter().rev() {
            match outcome {
                Err(e) => outcome = c.on_run_error(ctx, e).await,
                Ok(_) => break,
            }
        }
        outcome
    }

    /// The run through every `wrap_run`.
    pub(crate) fn run<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        core: &'a RunCore<'a>,
    ) -> BoxFuture<'a, Result<RunOutput, AgentRunError>> {
        match self.caps.get(i) {
            Some(cap) => cap.wrap_run(ctx, RunNext::new(move || self.run(i + 1, ctx, core))),
            None => core(),
        }
    }

    /// One node through every `wrap_node_run`, then the before / after / error hooks.
    pub(crate) fn node<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        node: AgentNode,
        core: &'a NodeCore<'a>,
    ) -> BoxFuture<'a, Result<NodeResult, AgentRunError>> {
        Box::pin(async move {
            match self.caps.get(i) {
                Some(cap) => {
                    let next = NodeNext::new(move |n| self.node(i + 1, ctx, n, core));
                    cap.wrap_node_run(ctx, node, next).await
                }
                None => {
                    let mut node = node;
                    for c in &self.caps {
                        node = c.before_node_run(ctx, node).await?;
                    }
                    let mut result = match core(node.clone()).await {
                        Ok(r) => r,
                        Err(error) => {
                            let mut outcome = Err(error);
                            for c in self.caps.iter().rev() {
                                match outcome {
                                    Err(e) => outcome = c.on_node_run_error(ctx, &node, e).await,
                                    Ok(_) => break,
                                }
                            }
                            outcome?
                        }
                    };
                    for c in self.caps.iter().rev() {
                        result = c.after_node_run(ctx, &node, result).await?;
                    }
                    Ok(result)
                }
            }
        })
    }

    /// Whether any capability wraps the event stream.
    pub(crate) fn wraps_event_stream(&self) -> bool {
        self.caps.iter().any(|c| c.wraps_event_stream())
    }

    /// The event stream through every `wrap_event_stream`, the first capability outermost.
    pub(crate) fn wrap_event_stream(&self, ctx: &RunContext<D>, mut events: EventBoxStream) -> EventBoxStream {
        for c in self.caps.iter().rev() {
            if c.wraps_event_stream() {
                events = c.wrap_event_stream(ctx, events);
            }
        }
        events
    }

    /// The validation (`stage` Validate) or the processing (Process) of the output through
    /// every `wrap_output_*`, then the before / error / after hooks of that stage. A retry from
    /// the processing is an answer, not a failure: it skips `on_output_process_error`.
    pub(crate) fn output<'a>(
        &'a self,
        stage: OutputStage,
        i: usize,
        ctx: &'a RunContext<D>,
        info: OutputInfo<'a>,
        value: Value,
        core: &'a ValidateCore<'a>,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        use OutputStage::{Process, Validate};
        Box::pin(async move {
            let Some(cap) = self.caps.get(i) else {
                let mut value = value;
                for c in &self.caps {
                    value = match stage {
                        Validate => c.before_output_validate(ctx, info, value).await?,
                        Process => c.before_output_process(ctx, info, value).await?,
                    };
                }
                let mut out = match core(value.clone()).await {
                    Ok(v) => v,
                    Err(e @ ToolError::Retry(_)) if stage == Process => return Err(e),
                    Err(error) => {
                        let mut outcome = Err(error);
                        for c in self.caps.iter().rev() {
                            let Err(e) = outcome else { break };
                            outcome = match stage {
                                Validate => c.on_output_validate_error(ctx, info, &value, e).await,
                                Process => c.on_output_process_error(ctx, info, &value, e).await,
                            };
                        }
                        outcome?
                    }
                };
                for c in self.caps.iter().rev() {
                    out = match stage {
                        Validate => c.after_output_validate(ctx, info, out).await?,
                        Process => c.after_output_process(ctx, info, out).await?,
                    };
                }
                return Ok(out);
            };
            let next = OutputNext::new(move |v| self.output(stage, i + 1, ctx, info, v, core));
            match stage {
                Validate => cap.wrap_output_validate(ctx, info, value, next).await,
                Process => cap.wrap_output_process(ctx, info, value, next).await,
            }
        })
    }

    /// Whether any capability's `prepare_tools` may change the tools.
    pub(crate) fn has_prepare_tools(&self) -> bool {
        self.caps.iter().any(|c| c.has_prepare_tools())
    }

    pub(crate) async fn prepare_tools(
        &self,
        ctx: &RunContext<D>,
        mut tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        for c in &self.caps {
            tools = c.prepare_tools(ctx, tools).await?;
        }
        Ok(tools)
    }

    /// The model request through every `wrap_model_request`, then the before / after hooks.
    pub(crate) fn model_request<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        request: ModelRequestContext,
        core: &'a ModelCore<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>> {
        if self.caps.is_empty() {
            return core(request);
        }
        Box::pin(async move {
            match self.caps.get(i) {
                Some(cap) => {
                    let next = ModelRequestNext::new(move |r| self.model_request(i + 1, ctx, r, core));
                    cap.wrap_model_request(ctx, request, next).await
                }
                None => {
                    let mut request = request;
                    for c in &self.caps {
                        request = c.before_model_request(ctx, request).await?;
                    }
                    let mut response = match core(request.clone()).await {
                        Ok(r) => r,
                        Err(e @ AgentRunError::Retry(_)) => return Err(e),
                        Err(error) => {
                            let mut outcome = Err(error);
                            for c in self.caps.iter().rev() {
                                match outcome {
                                    Err(e @ AgentRunError::Retry(_)) => return Err(e),
                                    Err(e) => outcome = c.on_model_request_error(ctx, &request, e).await,
                                    Ok(_) => break,
                                }
                            }
                            outcome?
                        }
                    };
                    for c in self.caps.iter().rev() {
                        response = c.after_model_request(ctx, &request, response).await?;
                    }
                    Ok(response)
                }
            }
        })
    }

    /// The validation of one call through every `wrap_tool_validate`, then the other hooks.
    pub(crate) fn validate<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        core: &'a ValidateCore<'a>,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        if self.caps.is_empty() {
            return core(args);
        }
        Box::pin(async move {
            match self.caps.get(i) {
                Some(cap) => {
                    let next = ToolValidateNext::new(move |a| self.validate(i + 1, ctx, call, a, core));
                    cap.wrap_tool_validate(ctx, call, args, next).await
                }
                None => {
                    let mut args = args;
                    for c in &self.caps {
                        args = c.before_tool_validate(ctx, call, args).await?;
                    }
                    let mut validated = match core(args).await {
                        Ok(v) => v,
                        Err(error) => {
                            let mut outcome = Err(error);
                            for c in self.caps.iter().rev() {
                                match outcome {
                                    Err(e) => outcome = c.on_tool_validate_error(ctx, call, e).await,
                                    Ok(_) => break,
                                }
                            }
                            outcome?
                        }
                    };
                    for c in self.caps.iter().rev() {
                        validated = c.after_tool_validate(ctx, call, validated).await?;
                    }
                    Ok(validated)
                }
            }
        })
    }

    /// The execution of one call through every `wrap_tool_execute`, then the other hooks.
    pub(crate) fn execute<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        core: &'a ExecuteCore<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        if self.caps.is_empty() {
            return core(args);
        }
        Box::pin(async move {
            match self.caps.get(i) {
                Some(cap) => {
                    let next = ToolExecuteNext::new(move |a| self.execute(i + 1, ctx, call, a, core));
                    cap.wrap_tool_execute(ctx, call, args, next).await
                }
                None => {
                    let mut args = args;
                    for c in &self.caps {
                        args = c.before_tool_execute(ctx, call, args).await?;
                    }
                    let mut output = match core(args.clone()).await {
                        Ok(o) => o,
                        Err(e) if passes_through(&e) => return Err(e),
                        Err(error) => {
                            let mut outcome = Err(error);
                            for c in self.caps.iter().rev() {
                                match outcome {
                                    Err(e) => outcome = c.on_tool_execute_error(ctx, call, &args, e).await,
                                    Ok(_) => break,
                                }
                            }
                            outcome?
                        }
                    };
                    for c in self.caps.iter().rev() {
                        output = c.after_tool_execute(ctx, call, &args, output).await?;
                    }
                    Ok(output)
                }
            }
        })
    }
}
