//! Dispatch of hooks over an ordered list of capabilities (the first outermost).

use std::panic::AssertUnwindSafe;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;

use super::combined::spread_all;
use super::{
    AgentNode, DynCapability, EventBoxStream, HookStage, Instrumentation, ModelRequestContext, ModelRequestNext,
    NodeNext, NodeResult, OutputInfo, OutputNext, ReinjectSystemPrompt, RunNext, ThreadExecutor, ToolCallInfo,
    ToolExecuteNext, ToolValidateNext, ordering,
};
use crate::context::RunContext;
use crate::deferred::{DeferredToolRequests, DeferredToolResults};
use crate::error::{AgentRunError, UserError, panic_message};
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
///
/// Every call into a capability goes through a guard that catches its panic: a hook returning
/// `AgentRunError` gets `AgentRunError::CapabilityPanicked`; a tool or output hook (whose error
/// is a `ToolError`) gets `ToolError::Panicked` with the same message, and the typed error is
/// kept in `panics` for the step to end the run with ([`Capabilities::hook_panic`]).
pub(crate) struct Capabilities<D> {
    /// The chain, shared by the runs that use the agent's capabilities as they are.
    chain: Arc<Chain<D>>,
    /// The panics of tool and output hooks caught in this run, as the run's errors.
    panics: Arc<Mutex<Vec<AgentRunError>>>,
}

/// The capabilities in order, and each stage's.
struct Chain<D> {
    caps: Vec<Arc<dyn DynCapability<D>>>,
    /// Per [`HookStage`] (by its index), the capabilities that hook it, in order: a stage's
    /// dispatch skips the others.
    stages: Box<[Vec<Arc<dyn DynCapability<D>>>]>,
    /// What the built-ins that need it are told about the agent (also those a `for_run` makes).
    agent: Arc<AgentFacts>,
}

impl<D> Clone for Chain<D> {
    fn clone(&self) -> Self {
        Chain { caps: self.caps.clone(), stages: self.stages.clone(), agent: self.agent.clone() }
    }
}

/// The agent's name and system prompts, for [`ReinjectSystemPrompt`] and [`Instrumentation`].
#[derive(Default)]
struct AgentFacts {
    name: Option<String>,
    system_prompts: Arc<[String]>,
}

impl<D> Clone for Capabilities<D> {
    fn clone(&self) -> Self {
        Capabilities { chain: self.chain.clone(), panics: self.panics.clone() }
    }
}

impl<D> Default for Capabilities<D> {
    fn default() -> Self {
        let chain = Chain {
            caps: Vec::new(),
            stages: HookStage::ALL.iter().map(|_| Vec::new()).collect(),
            agent: Arc::default(),
        };
        Capabilities { chain: Arc::new(chain), panics: Arc::default() }
    }
}

impl OutputStage {
    fn hook_stage(self) -> HookStage {
        match self {
            OutputStage::Validate => HookStage::OutputValidate,
            OutputStage::Process => HookStage::OutputProcess,
        }
    }
}

/// Errors that pass through `on_tool_execute_error`: retries and deferrals are answers, not failures.
fn passes_through(e: &ToolError) -> bool {
    matches!(
        e,
        ToolError::Retry(_) | ToolError::ApprovalRequired(_) | ToolError::CallDeferred(_) | ToolError::Panicked { .. }
    )
}

/// The run's error for a panic caught in `cap`'s `hook`.
fn hook_panicked<D>(cap: &dyn DynCapability<D>, hook: &str, payload: Box<dyn std::any::Any + Send>) -> AgentRunError {
    let capability = std::panic::catch_unwind(AssertUnwindSafe(|| cap.name()))
        .unwrap_or_else(|_| "(a capability whose name() panics)".into());
    AgentRunError::CapabilityPanicked { capability, hook: hook.into(), message: panic_message(payload) }
}

/// A capability's panic while the agent is built, as the `UserError` of `build()`.
fn build_panic(index: usize, error: AgentRunError) -> UserError {
    match error {
        AgentRunError::CapabilityPanicked { capability, hook, message } => UserError::new(format!(
            "capability {} ('{capability}') panicked in `{hook}` while the agent was built: {message}. Fix the capability: `build()` calls its `name`, `ordering`, `apply`, `hooks_stage` and `toolset`",
            index + 1
        )),
        other => UserError::new(other.to_string()),
    }
}

/// Why `cap` (or a capability it holds) cannot be added to one run: the blocking pool, tool
/// search and bridge mode are the agent's, read when it is built.
fn agent_wide<D>(cap: &dyn DynCapability<D>) -> Result<Option<&'static str>, AgentRunError> {
    let mut refusal = None;
    sync_guard(cap, "apply", || {
        cap.apply(&mut |leaf| {
            if leaf.is::<ThreadExecutor>() {
                refusal = Some("a `ThreadExecutor` sets the agent's blocking pool: add it with `AgentBuilder::capability`");
            } else if leaf.is::<crate::search::ToolSearch>() {
                refusal = Some("`ToolSearch` configures the agent's tool search: add it with `AgentBuilder::capability` or `AgentBuilder::tool_search`");
            } else if leaf.is::<crate::search::bridge::BridgeConfig>() {
                refusal = Some("a `BridgeConfig` configures the agent's bridge mode: add it with `AgentBuilder::capability` or `AgentBuilder::tool_search_bridge`");
            }
        })
    })?;
    Ok(refusal)
}

/// Calls a plain method of `cap`, catching its panic.
fn sync_guard<D, T>(cap: &dyn DynCapability<D>, hook: &str, f: impl FnOnce() -> T) -> Result<T, AgentRunError> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).map_err(|p| hook_panicked(cap, hook, p))
}

/// Calls an async hook of `cap` (the call itself and its future), catching its panic.
async fn guard<'f, D, R>(
    cap: &dyn DynCapability<D>,
    hook: &str,
    call: impl FnOnce() -> BoxFuture<'f, R>,
) -> Result<R, AgentRunError> {
    let run = AssertUnwindSafe(async move { call().await }).catch_unwind();
    let outcome = match sync_guard(cap, "hook_timeout", || cap.hook_timeout(hook))? {
        None => run.await,
        Some(timeout) => match tokio::time::timeout(timeout, run).await {
            Ok(outcome) => outcome,
            Err(_) => {
                let capability = sync_guard(cap, "name", || cap.name())?;
                return Err(AgentRunError::HookTimeout { capability, hook: hook.into(), timeout });
            }
        },
    };
    outcome.map_err(|p| hook_panicked(cap, hook, p))
}

/// [`guard`] for a hook that returns `Result<_, AgentRunError>`.
async fn guard_run<'f, D, T>(
    cap: &dyn DynCapability<D>,
    hook: &str,
    call: impl FnOnce() -> BoxFuture<'f, Result<T, AgentRunError>>,
) -> Result<T, AgentRunError> {
    guard(cap, hook, call).await.and_then(|r| r)
}

impl<D: Send + Sync + 'static> Capabilities<D> {
    /// The chain of `caps` (in order), each stage's list made from what each capability says it
    /// hooks. A capability's panic in `hooks_stage` is returned with its index.
    fn assemble(caps: Vec<Arc<dyn DynCapability<D>>>, agent: Arc<AgentFacts>) -> Result<Self, (usize, AgentRunError)> {
        let mut stages: Vec<Vec<Arc<dyn DynCapability<D>>>> = HookStage::ALL.iter().map(|_| Vec::new()).collect();
        for (i, c) in caps.iter().enumerate() {
            for stage in HookStage::ALL {
                if sync_guard(&**c, "hooks_stage", || c.hooks_stage(stage)).map_err(|e| (i, e))? {
                    stages[stage.index()].push(c.clone());
                }
            }
        }
        Ok(Capabilities { chain: Arc::new(Chain { caps, stages: stages.into(), agent }), panics: Arc::default() })
    }

    /// The capabilities that hook `stage`, in order.
    fn stage(&self, stage: HookStage) -> &[Arc<dyn DynCapability<D>>] {
        &self.chain.stages[stage.index()]
    }

    /// Whether some capability has hooks at `stage` (without any, the step skips the chain).
    pub(crate) fn hooks(&self, stage: HookStage) -> bool {
        !self.stage(stage).is_empty()
    }

    /// Adds a capability (a combination's members, each in its place).
    pub(crate) fn push(&mut self, cap: Arc<dyn DynCapability<D>>) {
        Arc::make_mut(&mut self.chain).caps.extend(spread_all([cap]));
    }

    /// Adds boxed capabilities (a spec's), unwrapped.
    pub(crate) fn extend(&mut self, caps: Vec<super::BoxedCapability<D>>) {
        Arc::make_mut(&mut self.chain).caps.extend(spread_all(caps.into_iter().map(|c| c.0)));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.chain.caps.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.chain.caps.len()
    }

    /// The capabilities as an agent runs them: sorted to satisfy their ordering constraints
    /// (a cycle or a missing requirement is an error), and told the agent's name and system
    /// prompts.
    pub(crate) fn for_agent(self, name: Option<&str>, system_prompts: &[String]) -> Result<Self, UserError> {
        // `ordering` and `name` are the capabilities' own code: a panic there is a build error.
        for (i, c) in self.chain.caps.iter().enumerate() {
            sync_guard(&**c, "name", || c.name()).map_err(|e| build_panic(i, e))?;
            sync_guard(&**c, "ordering", || c.ordering()).map_err(|e| build_panic(i, e))?;
        }
        let caps = Arc::try_unwrap(self.chain).map_or_else(|shared| shared.caps.clone(), |chain| chain.caps);
        let caps = ordering::sort(caps)?;
        let agent = AgentFacts { name: name.map(String::from), system_prompts: Arc::from(system_prompts.to_vec()) };
        let out = Capabilities::assemble(caps, Arc::new(agent)).map_err(|(i, e)| build_panic(i, e))?;
        for (i, c) in out.chain.caps.iter().enumerate() {
            out.bind(std::slice::from_ref(c)).map_err(|e| build_panic(i, e))?;
        }
        Ok(out)
    }

    /// The agent's capabilities with `extra` ones added for one run, sorted together to satisfy
    /// their ordering constraints (without constraints, the agent's first, then the run's, in
    /// order). A `ThreadExecutor` among the extra ones is refused: the blocking pool is the
    /// agent's.
    pub(crate) fn with_run_capabilities(&self, extra: Vec<Arc<dyn DynCapability<D>>>) -> Result<Self, UserError> {
        let extra = spread_all(extra);
        let run_error = |i: usize, e: AgentRunError| match e {
            AgentRunError::CapabilityPanicked { capability, hook, message } => UserError::new(format!(
                "run capability {} ('{capability}') panicked in `{hook}` as the run started: {message}",
                i + 1
            )),
            other => UserError::new(other.to_string()),
        };
        for (i, c) in extra.iter().enumerate() {
            sync_guard(&**c, "name", || c.name()).map_err(|e| run_error(i, e))?;
            sync_guard(&**c, "ordering", || c.ordering()).map_err(|e| run_error(i, e))?;
            if let Some(refusal) = agent_wide(&**c).map_err(|e| run_error(i, e))? {
                return Err(UserError::new(format!("{refusal}, not to one run")));
            }
        }
        let mut caps = self.chain.caps.clone();
        caps.extend(extra.iter().cloned());
        let out =
            Capabilities::assemble(ordering::sort(caps)?, self.chain.agent.clone()).map_err(|(_, e)| match e {
                AgentRunError::CapabilityPanicked { capability, hook, message } => UserError::new(format!(
                    "run capability '{capability}' panicked in `{hook}` as the run started: {message}"
                )),
                other => UserError::new(other.to_string()),
            })?;
        for (i, c) in extra.iter().enumerate() {
            out.bind(std::slice::from_ref(c)).map_err(|e| run_error(i, e))?;
        }
        Ok(out)
    }

    /// Tells the `ReinjectSystemPrompt` and `Instrumentation` leaves of `caps` about the agent.
    fn bind(&self, caps: &[Arc<dyn DynCapability<D>>]) -> Result<(), AgentRunError> {
        for c in caps {
            sync_guard(&**c, "apply", || {
                c.apply(&mut |leaf| {
                    if let Some(r) = leaf.downcast_ref::<ReinjectSystemPrompt>() {
                        r.bind(&self.chain.agent.system_prompts);
                    } else if let Some(i) = leaf.downcast_ref::<Instrumentation>() {
                        i.bind(self.chain.agent.name.as_deref());
                    }
                })
            })?;
        }
        Ok(())
    }

    /// Every leaf capability of type `T` (see [`Capability::apply`](super::Capability::apply)), in order.
    pub(crate) fn leaves<T: Clone + 'static>(&self) -> Result<Vec<T>, UserError> {
        let mut found = Vec::new();
        for (i, c) in self.chain.caps.iter().enumerate() {
            sync_guard(&**c, "apply", || {
                c.apply(&mut |leaf| {
                    if let Some(t) = leaf.downcast_ref::<T>() {
                        found.push(t.clone());
                    }
                })
            })
            .map_err(|e| build_panic(i, e))?;
        }
        Ok(found)
    }

    /// The pool of the first [`ThreadExecutor`], if any: the agent runs blocking tools under it.
    pub(crate) fn blocking_pool(&self) -> Result<Option<Arc<crate::tool::pool::BlockingPool>>, UserError> {
        let mut pool = None;
        for (i, c) in self.chain.caps.iter().enumerate() {
            sync_guard(&**c, "apply", || {
                c.apply(&mut |leaf| {
                    if pool.is_none()
                        && let Some(t) = leaf.downcast_ref::<ThreadExecutor>()
                    {
                        pool = Some(t.pool());
                    }
                })
            })
            .map_err(|e| build_panic(i, e))?;
        }
        Ok(pool)
    }

    /// The toolsets the capabilities contribute.
    pub(crate) fn toolsets(&self) -> Result<Vec<crate::toolset::BoxedToolset<D>>, AgentRunError> {
        let mut out = Vec::new();
        for c in &self.chain.caps {
            out.extend(sync_guard(&**c, "toolset", || c.toolset())?);
        }
        Ok(out)
    }

    /// [`Capabilities::toolsets`] at build time: a panic is a `UserError` from `build()`.
    pub(crate) fn build_toolsets(&self) -> Result<Vec<crate::toolset::BoxedToolset<D>>, UserError> {
        let mut out = Vec::new();
        for (i, c) in self.chain.caps.iter().enumerate() {
            out.extend(sync_guard(&**c, "toolset", || c.toolset()).map_err(|e| build_panic(i, e))?);
        }
        Ok(out)
    }

    /// The run's toolset through every `wrapper_toolset` (the first capability's outermost);
    /// `None` when no capability wraps it.
    pub(crate) fn wrap_toolset(
        &self,
        toolset: crate::toolset::BoxedToolset<D>,
    ) -> Result<Option<crate::toolset::BoxedToolset<D>>, AgentRunError> {
        let mut current = toolset;
        let mut wrapped = false;
        for c in self.chain.caps.iter().rev() {
            if let Some(w) = sync_guard(&**c, "wrapper_toolset", || c.wrapper_toolset(current.clone()))? {
                current = w;
                wrapped = true;
            }
        }
        Ok(wrapped.then_some(current))
    }

    /// The capabilities for one run: each one's `for_run` instance, or itself; and whether any
    /// capability made a fresh instance.
    pub(crate) fn for_run(&self, ctx: &RunContext<D>) -> Result<(Self, bool), AgentRunError> {
        let mut fresh = Vec::new();
        // The run's own list, made once a capability makes a run instance (until then, the
        // agent's chain is the run's).
        let mut caps: Option<Vec<Arc<dyn DynCapability<D>>>> = None;
        for (i, c) in self.chain.caps.iter().enumerate() {
            match sync_guard(&**c, "for_run", || c.for_run(ctx))? {
                Some(b) => {
                    if let Some(refusal) = agent_wide(&*b.0)? {
                        let made_by = sync_guard(&**c, "name", || c.name())?;
                        return Err(AgentRunError::User(UserError::new(format!(
                            "{refusal}: '{made_by}' made it for one run (`for_run`)"
                        ))));
                    }
                    let members = spread_all([b.0]);
                    fresh.extend(members.iter().cloned());
                    caps.get_or_insert_with(|| self.chain.caps[..i].to_vec()).extend(members);
                }
                None => {
                    if let Some(caps) = caps.as_mut() {
                        caps.push(c.clone());
                    }
                }
            }
        }
        let Some(caps) = caps.filter(|_| !fresh.is_empty()) else {
            // The agent's own capabilities: their chain is the agent's (shared, not rebuilt per
            // run); the run's caught panics are its own (without capabilities, none is caught: the
            // agent's empty list is shared).
            let panics = if self.chain.caps.is_empty() { self.panics.clone() } else { Arc::default() };
            return Ok((Capabilities { chain: self.chain.clone(), panics }, false));
        };
        self.bind(&fresh)?;
        let out = Capabilities::assemble(caps, self.chain.agent.clone()).map_err(|(_, e)| e)?;
        Ok((out, true))
    }

    /// The run's error for a tool or output hook's panic, caught with this `message` (see
    /// [`Capabilities`]).
    pub(crate) fn hook_panic(&self, message: &str) -> Option<AgentRunError> {
        let panics = self.panics.lock().unwrap_or_else(|p| p.into_inner());
        panics.iter().find(|e| e.to_string() == message).cloned()
    }

    /// A tool or output hook's caught panic, as the `ToolError` it answers with.
    fn tool_panic(&self, error: AgentRunError) -> ToolError {
        let message = error.to_string();
        self.panics.lock().unwrap_or_else(|p| p.into_inner()).push(error);
        ToolError::Panicked { message }
    }

    /// [`guard`] for a tool or output hook, whose error is a `ToolError`.
    async fn guard_tool<'f, T>(
        &self,
        cap: &dyn DynCapability<D>,
        hook: &str,
        call: impl FnOnce() -> BoxFuture<'f, Result<T, ToolError>>,
    ) -> Result<T, ToolError> {
        match guard(cap, hook, call).await {
            Ok(r) => r,
            Err(e) => Err(self.tool_panic(e)),
        }
    }

    /// The native tools of every capability, in order.
    pub(crate) fn native_tools(&self) -> Result<Vec<crate::native::NativeTool>, AgentRunError> {
        let mut out = Vec::new();
        for c in &self.chain.caps {
            out.extend(sync_guard(&**c, "native_tools", || c.native_tools())?);
        }
        Ok(out)
    }

    /// The capabilities' instructions, in order.
    pub(crate) async fn instructions(&self, ctx: &RunContext<D>) -> Result<Vec<String>, AgentRunError> {
        let mut out = Vec::new();
        for c in &self.chain.caps {
            if let Some(i) = guard(&**c, "instructions", || c.instructions(ctx)).await? {
                out.push(i);
            }
        }
        Ok(out)
    }

    /// The capabilities' model settings for this step, merged in order over `base`.
    pub(crate) fn model_settings(
        &self,
        ctx: &RunContext<D>,
        base: Option<Arc<ModelSettings>>,
    ) -> Result<Option<Arc<ModelSettings>>, AgentRunError> {
        let mut settings = base;
        for c in &self.chain.caps {
            if let Some(s) = sync_guard(&**c, "model_settings", || c.model_settings(ctx))? {
                settings = Some(Arc::new(match settings {
                    Some(b) => b.merged(&s),
                    None => s,
                }));
            }
        }
        Ok(settings)
    }

    /// Offers deferred calls to each capability in order; returns the results they gave
    /// (possibly for only some of the calls).
    pub(crate) async fn handle_deferred(
        &self,
        ctx: &RunContext<D>,
        requests: &DeferredToolRequests,
    ) -> Result<DeferredToolResults, AgentRunError> {
        let mut results = DeferredToolResults::new();
        let mut remaining = requests.clone();
        for c in &self.chain.caps {
            if remaining.is_empty() {
                break;
            }
            let given = guard(&**c, "handle_deferred_tool_calls", || c.handle_deferred_tool_calls(ctx, &remaining));
            if let Some(r) = given.await? {
                remaining = remaining.remaining(&r);
                results.update(r);
            }
        }
        Ok(results)
    }

    pub(crate) async fn prepare_output_tools(
        &self,
        ctx: &RunContext<D>,
        mut tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        for c in &self.chain.caps {
            tools = guard_run(&**c, "prepare_output_tools", || c.prepare_output_tools(ctx, tools)).await?;
        }
        Ok(tools)
    }

    pub(crate) async fn before_run(&self, ctx: &RunContext<D>) -> Result<(), AgentRunError> {
        for c in self.stage(HookStage::Run) {
            guard_run(&**c, "before_run", || c.before_run(ctx)).await?;
        }
        Ok(())
    }

    pub(crate) async fn after_run(
        &self,
        ctx: &RunContext<D>,
        mut output: RunOutput,
    ) -> Result<RunOutput, AgentRunError> {
        for c in self.stage(HookStage::Run).iter().rev() {
            output = guard_run(&**c, "after_run", || c.after_run(ctx, output)).await?;
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
        for c in self.stage(HookStage::Run).iter().rev() {
            match outcome {
                Err(e) => outcome = guard_run(&**c, "on_run_error", || c.on_run_error(ctx, e)).await,
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
        match self.stage(HookStage::Run).get(i) {
            Some(cap) => Box::pin(guard_run(&**cap, "wrap_run", move || {
                cap.wrap_run(ctx, RunNext::new(move || self.run(i + 1, ctx, core)))
            })),
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
        if self.stage(HookStage::Node).is_empty() {
            return core(node);
        }
        Box::pin(async move {
            match self.stage(HookStage::Node).get(i) {
                Some(cap) => {
                    let next = NodeNext::new(move |n| self.node(i + 1, ctx, n, core));
                    guard_run(&**cap, "wrap_node_run", || cap.wrap_node_run(ctx, node, next)).await
                }
                None => {
                    let mut node = node;
                    for c in self.stage(HookStage::Node) {
                        node = guard_run(&**c, "before_node_run", || c.before_node_run(ctx, node)).await?;
                    }
                    let mut result = match core(node.clone()).await {
                        Ok(r) => r,
                        Err(error) => {
                            let mut outcome = Err(error);
                            for c in self.stage(HookStage::Node).iter().rev() {
                                match outcome {
                                    Err(e) => {
                                        outcome =
                                            guard_run(&**c, "on_node_run_error", || c.on_node_run_error(ctx, &node, e))
                                                .await
                                    }
                                    Ok(_) => break,
                                }
                            }
                            outcome?
                        }
                    };
                    for c in self.stage(HookStage::Node).iter().rev() {
                        result = guard_run(&**c, "after_node_run", || c.after_node_run(ctx, &node, result)).await?;
                    }
                    Ok(result)
                }
            }
        })
    }

    /// Whether any capability wraps the event stream.
    pub(crate) fn wraps_event_stream(&self) -> Result<bool, AgentRunError> {
        for c in &self.chain.caps {
            if sync_guard(&**c, "wraps_event_stream", || c.wraps_event_stream())? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The event stream through every `wrap_event_stream`, the first capability outermost. A
    /// panic while a capability's stream is polled ends that stream (and so the events' way to
    /// the handler); the error is kept for [`Capabilities::stream_panic`].
    pub(crate) fn wrap_event_stream(
        &self,
        ctx: &RunContext<D>,
        mut events: EventBoxStream,
    ) -> Result<EventBoxStream, AgentRunError> {
        use futures::StreamExt;
        for c in self.chain.caps.iter().rev() {
            if sync_guard(&**c, "wraps_event_stream", || c.wraps_event_stream())? {
                let wrapped = sync_guard(&**c, "wrap_event_stream", || c.wrap_event_stream(ctx, events))?;
                let cap = c.clone();
                let panics = self.panics.clone();
                events = AssertUnwindSafe(wrapped)
                    .catch_unwind()
                    .scan((), move |_, item| {
                        futures::future::ready(match item {
                            Ok(event) => Some(event),
                            Err(p) => {
                                let error = hook_panicked(&*cap, "wrap_event_stream", p);
                                panics.lock().unwrap_or_else(|p| p.into_inner()).push(error);
                                None
                            }
                        })
                    })
                    .boxed();
            }
        }
        Ok(events)
    }

    /// The first panic caught while the event stream was polled, if any.
    pub(crate) fn stream_panic(&self) -> Option<AgentRunError> {
        let panics = self.panics.lock().unwrap_or_else(|p| p.into_inner());
        panics
            .iter()
            .find(|e| matches!(e, AgentRunError::CapabilityPanicked { hook, .. } if hook == "wrap_event_stream"))
            .cloned()
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
        if self.stage(stage.hook_stage()).is_empty() {
            return core(value);
        }
        Box::pin(async move {
            let Some(cap) = self.stage(stage.hook_stage()).get(i) else {
                let mut value = value;
                for c in self.stage(stage.hook_stage()) {
                    value = match stage {
                        Validate => {
                            self.guard_tool(&**c, "before_output_validate", || {
                                c.before_output_validate(ctx, info, value)
                            })
                            .await?
                        }
                        Process => {
                            self.guard_tool(&**c, "before_output_process", || c.before_output_process(ctx, info, value))
                                .await?
                        }
                    };
                }
                let mut out = match core(value.clone()).await {
                    Ok(v) => v,
                    Err(e @ ToolError::Retry(_)) if stage == Process => return Err(e),
                    // A panic is not the output's failure: no error hook sees it.
                    Err(e @ ToolError::Panicked { .. }) => return Err(e),
                    Err(error) => {
                        let mut outcome = Err(error);
                        for c in self.stage(stage.hook_stage()).iter().rev() {
                            let Err(e) = outcome else { break };
                            if matches!(e, ToolError::Panicked { .. }) {
                                return Err(e);
                            }
                            outcome = match stage {
                                Validate => {
                                    self.guard_tool(&**c, "on_output_validate_error", || {
                                        c.on_output_validate_error(ctx, info, &value, e)
                                    })
                                    .await
                                }
                                Process => {
                                    self.guard_tool(&**c, "on_output_process_error", || {
                                        c.on_output_process_error(ctx, info, &value, e)
                                    })
                                    .await
                                }
                            };
                        }
                        outcome?
                    }
                };
                for c in self.stage(stage.hook_stage()).iter().rev() {
                    out = match stage {
                        Validate => {
                            self.guard_tool(&**c, "after_output_validate", || c.after_output_validate(ctx, info, out))
                                .await?
                        }
                        Process => {
                            self.guard_tool(&**c, "after_output_process", || c.after_output_process(ctx, info, out))
                                .await?
                        }
                    };
                }
                return Ok(out);
            };
            let next = OutputNext::new(move |v| self.output(stage, i + 1, ctx, info, v, core));
            match stage {
                Validate => {
                    self.guard_tool(&**cap, "wrap_output_validate", || cap.wrap_output_validate(ctx, info, value, next))
                        .await
                }
                Process => {
                    self.guard_tool(&**cap, "wrap_output_process", || cap.wrap_output_process(ctx, info, value, next))
                        .await
                }
            }
        })
    }

    /// Whether any capability's `prepare_tools` may change the tools.
    pub(crate) fn has_prepare_tools(&self) -> Result<bool, AgentRunError> {
        for c in &self.chain.caps {
            if sync_guard(&**c, "has_prepare_tools", || c.has_prepare_tools())? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    pub(crate) async fn prepare_tools(
        &self,
        ctx: &RunContext<D>,
        mut tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        for c in &self.chain.caps {
            tools = guard_run(&**c, "prepare_tools", || c.prepare_tools(ctx, tools)).await?;
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
        if self.stage(HookStage::ModelRequest).is_empty() {
            return core(request);
        }
        Box::pin(async move {
            match self.stage(HookStage::ModelRequest).get(i) {
                Some(cap) => {
                    let next = ModelRequestNext::new(move |r| self.model_request(i + 1, ctx, r, core));
                    guard_run(&**cap, "wrap_model_request", || cap.wrap_model_request(ctx, request, next)).await
                }
                None => {
                    let mut request = request;
                    for c in self.stage(HookStage::ModelRequest) {
                        request =
                            guard_run(&**c, "before_model_request", || c.before_model_request(ctx, request)).await?;
                    }
                    let mut response = match core(request.clone()).await {
                        Ok(r) => r,
                        Err(e @ AgentRunError::Retry(_)) => return Err(e),
                        Err(error) => {
                            let mut outcome = Err(error);
                            for c in self.stage(HookStage::ModelRequest).iter().rev() {
                                match outcome {
                                    Err(e @ AgentRunError::Retry(_)) => return Err(e),
                                    Err(e) => {
                                        outcome = guard_run(&**c, "on_model_request_error", || {
                                            c.on_model_request_error(ctx, &request, e)
                                        })
                                        .await
                                    }
                                    Ok(_) => break,
                                }
                            }
                            outcome?
                        }
                    };
                    for c in self.stage(HookStage::ModelRequest).iter().rev() {
                        response =
                            guard_run(&**c, "after_model_request", || c.after_model_request(ctx, &request, response))
                                .await?;
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
        if self.stage(HookStage::ToolValidate).is_empty() {
            return core(args);
        }
        Box::pin(async move {
            match self.stage(HookStage::ToolValidate).get(i) {
                Some(cap) => {
                    let next = ToolValidateNext::new(move |a| self.validate(i + 1, ctx, call, a, core));
                    self.guard_tool(&**cap, "wrap_tool_validate", || cap.wrap_tool_validate(ctx, call, args, next))
                        .await
                }
                None => {
                    let mut args = args;
                    for c in self.stage(HookStage::ToolValidate) {
                        args = self
                            .guard_tool(&**c, "before_tool_validate", || c.before_tool_validate(ctx, call, args))
                            .await?;
                    }
                    let mut validated = match core(args).await {
                        Ok(v) => v,
                        // A panic is not a validation failure: no error hook sees it.
                        Err(e @ ToolError::Panicked { .. }) => return Err(e),
                        Err(error) => {
                            let mut outcome = Err(error);
                            for c in self.stage(HookStage::ToolValidate).iter().rev() {
                                match outcome {
                                    Err(e @ ToolError::Panicked { .. }) => return Err(e),
                                    Err(e) => {
                                        outcome = self
                                            .guard_tool(&**c, "on_tool_validate_error", || {
                                                c.on_tool_validate_error(ctx, call, e)
                                            })
                                            .await
                                    }
                                    Ok(_) => break,
                                }
                            }
                            outcome?
                        }
                    };
                    for c in self.stage(HookStage::ToolValidate).iter().rev() {
                        validated = self
                            .guard_tool(&**c, "after_tool_validate", || c.after_tool_validate(ctx, call, validated))
                            .await?;
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
        ran: &'a AtomicBool,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        if self.stage(HookStage::ToolExecute).is_empty() {
            return core(args);
        }
        Box::pin(async move {
            match self.stage(HookStage::ToolExecute).get(i) {
                Some(cap) => {
                    let next = ToolExecuteNext::new(move |a| self.execute(i + 1, ctx, call, a, core, ran), Some(ran));
                    self.guard_tool(&**cap, "wrap_tool_execute", || cap.wrap_tool_execute(ctx, call, args, next)).await
                }
                None => {
                    let mut args = args;
                    for c in self.stage(HookStage::ToolExecute) {
                        args = self
                            .guard_tool(&**c, "before_tool_execute", || c.before_tool_execute(ctx, call, args))
                            .await?;
                    }
                    let mut output = match core(args.clone()).await {
                        Ok(o) => o,
                        Err(e) if passes_through(&e) => return Err(e),
                        Err(error) => {
                            let mut outcome = Err(error);
                            for c in self.stage(HookStage::ToolExecute).iter().rev() {
                                match outcome {
                                    Err(e @ ToolError::Panicked { .. }) => return Err(e),
                                    Err(e) => {
                                        outcome = self
                                            .guard_tool(&**c, "on_tool_execute_error", || {
                                                c.on_tool_execute_error(ctx, call, &args, e)
                                            })
                                            .await
                                    }
                                    Ok(_) => break,
                                }
                            }
                            outcome?
                        }
                    };
                    for c in self.stage(HookStage::ToolExecute).iter().rev() {
                        output = self
                            .guard_tool(&**c, "after_tool_execute", || c.after_tool_execute(ctx, call, &args, output))
                            .await?;
                    }
                    Ok(output)
                }
            }
        })
    }
}
