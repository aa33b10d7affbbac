//! Dispatch of hooks over an ordered list of capabilities (the first outermost).

use std::panic::AssertUnwindSafe;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;

use super::combined::spread_all;
use super::{
    AgentNode, Delivery, DeliveryPoint, DynCapability, EventBoxStream, HookStage, Instrumentation, ModelRequestContext,
    ModelRequestNext, NodeNext, NodeResult, OutputInfo, OutputNext, ReinjectSystemPrompt, RunNext, ThreadExecutor,
    ToolCallInfo, ToolExecuteNext, ToolValidateNext, ordering,
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
}

mod calls;
mod run;
