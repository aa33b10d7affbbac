//! The [`Agent`]: a model, tools and settings, run on a prompt.

pub(crate) mod output;
mod output_mode;
pub(crate) mod run;
mod run_model;

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use crate::execution::{EndStrategy, ParallelMode};
pub use crate::run::{
    AgentEvent, DEFAULT_PROMPTED_OUTPUT_TEMPLATE, EventStream, OUTPUT_TOOL_NAME, OutputMode, OutputObject, OutputSpec,
    RunOutput,
};
pub use output::Deferrable;
pub use run::{AgentRun, Node, OutputStream, RunBuilder, RunRecord, RunResult};
pub use run_model::OverrideGuard;

use crate::capability::{Capabilities, Capability};
use crate::deferred::{DeferralStore, DynDeferralStore};
use crate::error::UserError;
use crate::execution::StepConfig;
use crate::model::{
    DynModel, DynStreamingModel, Model, ModelSettings, SharedModel, StreamingModel, check_static_tool_choice,
};
use crate::search::ToolSearch;
use crate::search::bridge::{BridgeCache, BridgeConfig};
use crate::tool::Tool;
use crate::toolset::{DynToolset, FunctionToolset, Toolset};
use crate::usage::UsageLimits;
use output::Converter;

pub(crate) struct AgentInner<D> {
    /// The agent's model, as every run that keeps it holds it (shared).
    pub(crate) model: Arc<run_model::RunModel>,
    pub(crate) capabilities: Capabilities<D>,
    pub(crate) system_prompts: Vec<String>,
    pub(crate) instructions: Option<String>,
    pub(crate) toolsets: Vec<Arc<dyn DynToolset<D>>>,
    /// Where the capabilities' toolsets start in `toolsets` (a run whose capabilities make
    /// fresh instances uses theirs instead).
    pub(crate) capability_toolsets_from: usize,
    /// What the step executor needs: retry budgets, timeouts, the end strategy, the output,
    /// tool search and bridge mode.
    pub(crate) step: StepConfig<D>,
    /// Shared with every run that does not merge settings of its own.
    pub(crate) model_settings: Option<Arc<ModelSettings>>,
    /// The limits of every run that sets none of its own (shared).
    pub(crate) usage_limits: Arc<UsageLimits>,
    pub(crate) default_deps: Option<D>,
    pub(crate) name: Option<String>,
    /// The pending calls of this agent's last runs that ended with deferred calls, against
    /// which deferred results bound to nothing are checked.
    pub(crate) deferred_records: Arc<crate::deferred::PendingRecords>,
    /// Where the deferrals resumed are remembered, so that each is answered once.
    pub(crate) deferral_store: Arc<dyn DynDeferralStore>,
    /// The model overrides in place ([`Agent::override_model`]), shared by the agent's clones.
    pub(crate) overrides: Arc<run_model::Overrides<run_model::ModelChoice>>,
    /// The dependency overrides in place ([`Agent::override_deps`]).
    pub(crate) deps_overrides: Arc<run_model::Overrides<D>>,
}

impl<D: Send + Sync> crate::execution::StepSource<D> for AgentInner<D> {
    fn step(&self) -> &crate::execution::StepConfig<D> {
        &self.step
    }
}

/// An agent: a model, a system prompt, tools and settings. Cheap to clone and safe to share
/// between tasks; every run has its own state.
///
/// `D` is the type of the dependencies tools receive through [`RunContext`](crate::RunContext);
/// `O` is the output type (`String` for text).
///
/// ```
/// use toolsmith::prelude::*;
///
/// /// Adds two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // TestModel calls every tool once, then answers with what they returned.
/// let agent = Agent::builder(TestModel::default()).instructions("Be brief.").tool(add).build()?;
/// let result = agent.run("What is 1 + 2?").await?;
/// assert_eq!(result.output(), r#"{"add":0}"#);
/// assert_eq!(result.usage().tool_calls, 1);
/// // The agent is cheap to clone and every run has its own state.
/// let again = agent.clone().run("And again?").await?;
/// assert_eq!(again.output(), result.output());
/// # Ok(())
/// # }
/// ```
pub struct Agent<D = (), O = String> {
    pub(crate) inner: Arc<AgentInner<D>>,
    pub(crate) convert: Converter<O>,
}

impl<D, O> Clone for Agent<D, O> {
    fn clone(&self) -> Self {
        Agent { inner: self.inner.clone(), convert: self.convert.clone() }
    }
}

impl<D, O> std::fmt::Debug for Agent<D, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent").field("name", &self.inner.name).finish_non_exhaustive()
    }
}

impl Agent<(), String> {
    /// Starts building an agent around a model.
    pub fn builder<M: Model>(model: M) -> AgentBuilder<(), String> {
        AgentBuilder::new(Arc::new(model), None)
    }

    /// Starts building an agent around a model that can stream its responses: runs with an
    /// event handler (or [`RunBuilder::stream`]) then see text and tool-call deltas as they arrive.
    pub fn builder_streaming<M: StreamingModel>(model: M) -> AgentBuilder<(), String> {
        let model = Arc::new(model);
        let streaming: Arc<dyn DynStreamingModel> = model.clone();
        AgentBuilder::new(model, Some(streaming))
    }
}

impl<D: Clone + Send + Sync + 'static, O: Send + 'static> Agent<D, O> {
    /// Starts a run on a prompt; set options on the returned builder, then `.await` it (or
    /// call [`RunBuilder::run_sync`]).
    pub fn run(&self, prompt: impl Into<crate::messages::UserPromptContent>) -> RunBuilder<'_, D, O> {
        RunBuilder::new(self, Some(prompt.into()))
    }

    /// Starts a run without a new prompt: it continues from the message history given to the
    /// builder (for example to execute calls the history ends with).
    pub fn resume(&self) -> RunBuilder<'_, D, O> {
        RunBuilder::new(self, None)
    }

    /// The output specification.
    pub fn output_spec(&self) -> &OutputSpec {
        &self.inner.step.output
    }
}

/// The blocking pool's bound of an agent that sets none (and with no executor installed).
const DEFAULT_BLOCKING_THREADS: usize = 16;

/// Builds an [`Agent`]. Configuration mistakes are collected and returned by
/// [`AgentBuilder::build`] as a [`UserError`]; nothing here panics.
///
/// The dependency type comes first ([`deps`](AgentBuilder::deps)), then tools, toolsets and
/// capabilities that use it, then the output type ([`output_type`](AgentBuilder::output_type)).
///
/// ```
/// use toolsmith::prelude::*;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct City {
///     name: String,
///     country: String,
/// }
///
/// /// The user's home town.
/// #[tool]
/// fn home_town(ctx: RunContext<String>) -> String {
///     ctx.deps.clone()
/// }
///
/// let agent = Agent::builder(TestModel::default())
///     .deps::<String>()
///     .system_prompt("You answer with a city.")
///     .tool(home_town)
///     .retries(2)
///     .output_type::<City>()
///     .build()?;
/// # let _ = agent;
///
/// // A mistake is an error from `build()`, never a panic or a silent drop.
/// let twice = Agent::builder(TestModel::default()).tool(home_town).tool(home_town).deps::<String>().build();
/// assert!(twice.is_err());
/// # Ok::<(), toolsmith::UserError>(())
/// ```
pub struct AgentBuilder<D, O> {
    model: SharedModel,
    streaming: Option<Arc<dyn DynStreamingModel>>,
    system_prompts: Vec<String>,
    instructions: Option<String>,
    tools: FunctionToolset<D>,
    toolsets: Vec<Arc<dyn DynToolset<D>>>,
    capabilities: Capabilities<D>,
    retries: u32,
    output_retries: Option<u32>,
    tool_timeout: Option<Duration>,
    end_strategy: EndStrategy,
    parallel_mode: ParallelMode,
    output: OutputSpec,
    output_options: crate::run::OutputOptions,
    convert: Converter<O>,
    model_settings: Option<ModelSettings>,
    usage_limits: Option<UsageLimits>,
    blocking_threads: Option<usize>,
    default_deps: Option<D>,
    name: Option<String>,
    tool_search: Option<ToolSearch>,
    bridge: Option<BridgeConfig>,
    context_window: Option<u64>,
    deferral_store: Option<Arc<dyn DynDeferralStore>>,
    problems: Vec<String>,
    _o: PhantomData<O>,
}

impl AgentBuilder<(), String> {
    fn new(model: SharedModel, streaming: Option<Arc<dyn DynStreamingModel>>) -> Self {
        AgentBuilder {
            model,
            streaming,
            system_prompts: Vec::new(),
            instructions: None,
            tools: FunctionToolset::new(),
            toolsets: Vec::new(),
            capabilities: Capabilities::default(),
            retries: 1,
            output_retries: None,
            tool_timeout: None,
            end_strategy: EndStrategy::default(),
            parallel_mode: ParallelMode::default(),
            output: OutputSpec::Text,
            output_options: Default::default(),
            convert: output::text_converter(),
            model_settings: None,
            usage_limits: None,
            blocking_threads: None,
            default_deps: None,
            name: None,
            tool_search: None,
            bridge: None,
            context_window: None,
            deferral_store: None,
            problems: Vec::new(),
            _o: PhantomData,
        }
    }

    /// Sets the dependency type; tools taking `RunContext<T>` need `T` here. Call it first: tools,
    /// toolsets and capabilities are typed by the dependency type, so any added before it could
    /// not be kept, and `build()` reports them as a [`UserError`] rather than dropping them.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    ///
    /// #[tool]
    /// fn ping() -> String { "pong".into() }
    ///
    /// let err = Agent::builder(TestModel::default()).tool(ping).deps::<String>().build().unwrap_err();
    /// assert!(err.to_string().contains("deps::<T>() must come before"));
    /// ```
    pub fn deps<T: Clone + Send + Sync + 'static>(self) -> AgentBuilder<T, String> {
        let mut problems = self.problems;
        let lost = [
            (self.tools.tool_names().len(), "tool"),
            (self.toolsets.len(), "toolset"),
            (self.capabilities.len(), "capability"),
        ];
        let lost: Vec<String> = lost
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| match (n, *what) {
                (1, w) => format!("1 {w}"),
                (n, "capability") => format!("{n} capabilities"),
                (n, w) => format!("{n} {w}s"),
            })
            .collect();
        if !lost.is_empty() {
            problems.push(format!(
                "AgentBuilder::deps::<T>() must come before the tools, toolsets and capabilities: {} added before it would be lost (their dependency type is `()`); call deps() right after Agent::builder()",
                lost.join(", ")
            ));
        }
        AgentBuilder {
            model: self.model,
            streaming: self.streaming,
            system_prompts: self.system_prompts,
            instructions: self.instructions,
            tools: FunctionToolset::new(),
            toolsets: Vec::new(),
            capabilities: Capabilities::default(),
            retries: self.retries,
            output_retries: self.output_retries,
            tool_timeout: self.tool_timeout,
            end_strategy: self.end_strategy,
            parallel_mode: self.parallel_mode,
            output: self.output,
            output_options: self.output_options,
            convert: self.convert,
            model_settings: self.model_settings,
            usage_limits: self.usage_limits,
            blocking_threads: self.blocking_threads,
            default_deps: None,
            name: self.name,
            tool_search: self.tool_search,
            bridge: self.bridge,
            context_window: self.context_window,
            deferral_store: self.deferral_store,
            problems,
            _o: PhantomData,
        }
    }
}

impl<D: Clone + Send + Sync + 'static, O: Send + 'static> AgentBuilder<D, O> {
    fn with_output<P>(self, output: OutputSpec, convert: Converter<P>) -> AgentBuilder<D, P> {
        AgentBuilder {
            model: self.model,
            streaming: self.streaming,
            system_prompts: self.system_prompts,
            instructions: self.instructions,
            tools: self.tools,
            toolsets: self.toolsets,
            capabilities: self.capabilities,
            retries: self.retries,
            output_retries: self.output_retries,
            tool_timeout: self.tool_timeout,
            end_strategy: self.end_strategy,
            parallel_mode: self.parallel_mode,
            output,
            output_options: self.output_options,
            convert,
            model_settings: self.model_settings,
            usage_limits: self.usage_limits,
            blocking_threads: self.blocking_threads,
            default_deps: self.default_deps,
            name: self.name,
            tool_search: self.tool_search,
            bridge: self.bridge,
            context_window: self.context_window,
            deferral_store: self.deferral_store,
            problems: self.problems,
            _o: PhantomData,
        }
    }

    /// Adds a system prompt (sent at the start of a conversation, not when continuing a history).
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompts.push(prompt.into());
        self
    }

    /// Sets instructions, sent with every request of this agent's runs.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Names the agent.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Default dependencies for runs that do not pass their own.
    pub fn default_deps(mut self, deps: D) -> Self {
        self.default_deps = Some(deps);
        self
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: impl Into<Tool<D>>) -> Self {
        self.tools.add(tool);
        self
    }

    /// Adds several tools.
    pub fn tools<I, T>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<Tool<D>>,
    {
        for t in tools {
            self.tools.add(t);
        }
        self
    }

    /// Adds a toolset; its tools come after the agent's own tools and earlier toolsets'.
    pub fn toolset(mut self, toolset: impl Toolset<D>) -> Self {
        self.toolsets.push(Arc::new(toolset));
        self
    }

    /// Adds a capability (hooks around the run, model requests and tool calls). Capabilities
    /// apply in the order they are added, the first outermost, unless their
    /// [ordering constraints](crate::capability::CapabilityOrdering) say otherwise.
    pub fn capability(mut self, capability: impl Capability<D>) -> Self {
        self.capabilities.push(Arc::new(capability));
        self
    }

    /// Adds the capabilities of a [spec](crate::capability::spec) (JSON or YAML), built with
    /// `registry`, after those added so far; a `ToolSearch` entry configures tool search. A bad
    /// entry is reported by [`AgentBuilder::build`], with its path in the spec.
    pub fn capabilities_from_spec(
        mut self,
        spec: &crate::capability::CapabilitySpec,
        registry: &crate::capability::CapabilityRegistry<D>,
    ) -> Self {
        // The registry's builders are application code: a panic is reported by `build()`.
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| registry.load(spec))) {
            Ok(Ok(loaded)) => self.capabilities.extend(loaded.capabilities),
            Ok(Err(e)) => self.problems.push(e.message),
            Err(p) => self.problems.push(format!(
                "a capability builder of the registry panicked while the spec was loaded: {}",
                crate::error::panic_message(p)
            )),
        }
        self
    }

    /// Turns on PraisonAI-style bridge mode: deferrable tools (MCP tools, tools marked
    /// `"deferrable": true`, `mcp_...` names) hide behind `tool_search`, `tool_describe` and
    /// `tool_call` — always, or (`auto`) when their schemas would take too much of the context
    /// window. Accepts a [`BridgeConfig`], `true`/`false`, or a parsed `"auto"`/`"on"`/`"off"`.
    pub fn tool_search_bridge(mut self, config: impl Into<BridgeConfig>) -> Self {
        self.bridge = Some(config.into());
        self
    }

    /// Sets the model's context window in tokens, over what the model reports (by default the
    /// window of its family, [`ModelProfile`](crate::model::ModelProfile)): for fine-tunes,
    /// deployments with another limit, or models the table does not know. Bridge mode's `auto`
    /// setting compares the tool schemas with it; tools see it in `RunContext::model`.
    pub fn context_window(mut self, tokens: u64) -> Self {
        self.context_window = Some(tokens);
        self
    }

    /// Filters or edits the function tool definitions of every step (after each tool's own
    /// `prepare`): a shorthand for the [`PrepareTools`](crate::capability::PrepareTools) capability.
    pub fn prepare_tools<F>(self, f: F) -> Self
    where
        F: Fn(&crate::context::RunContext<D>, Vec<crate::tool::ToolDefinition>) -> Vec<crate::tool::ToolDefinition>
            + Send
            + Sync
            + 'static,
    {
        self.capability(crate::capability::PrepareTools::new(f))
    }

    /// Configures tool search over the tools marked `defer_loading` (it is on, with the default
    /// configuration, whenever such tools exist).
    pub fn tool_search(mut self, config: ToolSearch) -> Self {
        self.tool_search = Some(config);
        self
    }

    /// The retry budget of tools that set none (default 1).
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// The retry budget of output validation (default: the tool retry budget).
    pub fn output_retries(mut self, retries: u32) -> Self {
        self.output_retries = Some(retries);
        self
    }

    /// A default timeout for the agent's own tools (those added with [`tool`](Self::tool) and
    /// [`tools`](Self::tools)) that set none; a call that takes longer is a retry. Toolsets keep
    /// their own ([`FunctionToolset::timeout`](crate::toolset::FunctionToolset::timeout), an MCP
    /// toolset's), as in Pydantic AI, where an agent's `tool_timeout` is its function toolset's.
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        if timeout.is_zero() {
            self.problems.push("tool_timeout must be greater than 0".to_string());
        }
        self.tool_timeout = Some(timeout);
        self
    }

    /// What to do with other calls once a final result is found.
    pub fn end_strategy(mut self, strategy: EndStrategy) -> Self {
        self.end_strategy = strategy;
        self
    }

    /// Runs every response's calls one after another instead of concurrently.
    pub fn parallel_mode(mut self, mode: ParallelMode) -> Self {
        self.parallel_mode = mode;
        self
    }

    /// How many synchronous tool calls may run at once on the blocking pool (default: the
    /// executor installed with
    /// [`ThreadExecutor::install_default`](crate::capability::ThreadExecutor::install_default),
    /// else 16). A [`ThreadExecutor`](crate::capability::ThreadExecutor) capability wins.
    pub fn blocking_threads(mut self, n: usize) -> Self {
        self.blocking_threads = Some(n.max(1));
        self
    }

    /// Default model settings.
    pub fn model_settings(mut self, settings: ModelSettings) -> Self {
        self.model_settings = Some(settings);
        self
    }

    /// Default usage limits for runs.
    pub fn usage_limits(mut self, limits: UsageLimits) -> Self {
        self.usage_limits = Some(limits);
        self
    }

    /// Where the agent remembers the deferrals that were resumed, so that the calls a run ended
    /// with are answered once (see [`DeferralStore`]). The default is a
    /// [`MemoryDeferralStore`](crate::deferred::MemoryDeferralStore) of the agent's own, shared
    /// by its clones; give a persistent one (or one shared by several agents, as an
    /// `Arc<impl DeferralStore>`) when histories are resumed elsewhere or later.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::deferred::MemoryDeferralStore;
    /// use toolsmith::prelude::*;
    ///
    /// // Two agents serving the same conversations: a deferral resumed by one is not resumed
    /// // again by the other.
    /// let store = Arc::new(MemoryDeferralStore::new());
    /// let a = Agent::builder(TestModel::default()).deferral_store(store.clone()).allow_deferred().build()?;
    /// let b = Agent::builder(TestModel::default()).deferral_store(store).allow_deferred().build()?;
    /// # let _ = (a, b);
    /// # Ok::<(), UserError>(())
    /// ```
    pub fn deferral_store(mut self, store: impl DeferralStore) -> Self {
        self.deferral_store = Some(Arc::new(store));
        self
    }

    /// Structured output of a Rust type: the model answers through the `final_result` output
    /// tool, whose schema is the type's.
    pub fn output_type<T: DeserializeOwned + JsonSchema + Send + 'static>(self) -> AgentBuilder<D, T> {
        let (schema, description) = crate::tool::schema::model_schema::<T>();
        let display = crate::tool::schema::return_schema::<T>();
        let type_name = std::any::type_name::<T>().rsplit("::").next().unwrap_or_default();
        match OutputSpec::structured(schema, description, display, type_name) {
            Ok(spec) => self.with_output(spec, output::typed_converter::<T>()),
            Err(e) => {
                let mut b = self.with_output(OutputSpec::Text, output::typed_converter::<T>());
                b.problems.push(e.message);
                b
            }
        }
    }

    /// Structured output described by a JSON schema; the output is the validated JSON value.
    pub fn output_schema(self, schema: Value) -> AgentBuilder<D, Value> {
        let description = schema.get("description").and_then(Value::as_str).map(String::from);
        match OutputSpec::structured(schema.clone(), description, schema, "") {
            Ok(spec) => self.with_output(spec, output::value_converter()),
            Err(e) => {
                let mut b = self.with_output(OutputSpec::Text, output::value_converter());
                b.problems.push(e.message);
                b
            }
        }
    }

    /// Lets runs end with deferred tool requests (calls waiting for approval or external
    /// execution) instead of an output.
    ///
    /// Without it, tools whose every call waits (`requires_approval`, external tools) are a
    /// mistake `build()` reports, unless a capability may settle the calls inline (such as
    /// [`HandleDeferredToolCalls`](crate::capability::HandleDeferredToolCalls)); a toolset's,
    /// known only when a run starts, fail that run before its first request when they are
    /// offered to the model.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    ///
    /// /// Refund an order.
    /// #[tool(requires_approval)]
    /// fn refund_order(order: String) -> String {
    ///     format!("refunded {order}")
    /// }
    ///
    /// let err = Agent::builder(TestModel::default()).tool(refund_order).build().unwrap_err();
    /// assert!(err.message.contains("'refund_order'"), "{err}");
    /// assert!(Agent::builder(TestModel::default()).tool(refund_order).allow_deferred().build().is_ok());
    /// ```
    pub fn allow_deferred(self) -> AgentBuilder<D, Deferrable<O>> {
        let convert = output::deferrable(self.convert.clone());
        let spec = self.output.clone().with_deferred();
        self.with_output(spec, convert)
    }

    /// Builds the agent, or reports the first configuration mistake. Code of the
    /// application's that `build()` calls (a capability's `name`, `ordering`, `apply`, `hooks_stage` and
    /// `toolset`, a toolset's `check`, the model's `name`) is a `UserError` if it panics, not a
    /// panic.
    pub fn build(self) -> Result<Agent<D, O>, UserError> {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.build_agent())) {
            Ok(built) => built,
            Err(p) => Err(UserError::new(format!(
                "building the agent panicked: {}. A toolset's `check` or other application code called by `build()` panicked; fix it or return an error instead",
                crate::error::panic_message(p)
            ))),
        }
    }

    fn build_agent(mut self) -> Result<Agent<D, O>, UserError> {
        if let Some(p) = self.problems.first() {
            return Err(UserError::new(p.clone()));
        }
        self.output = self.output.with_options(&self.output_options)?;
        self.tools.check()?;
        // Tools whose every call defers, on an agent that cannot end deferred nor settle calls
        // inline (any capability may): a mistake at build, not at the model's first call.
        if !self.output.allows_deferred() && self.capabilities.is_empty() {
            let deferring: Vec<&str> = self.tools.deferring_tools().collect();
            if !deferring.is_empty() {
                return Err(output::deferring_tools_not_allowed(deferring, "the tools"));
            }
        }
        for ts in &self.toolsets {
            ts.check()?;
        }
        let output_names: Vec<&str> = self.output.output_tool().map(|t| t.name.as_str()).into_iter().collect();
        check_static_tool_choice(self.model_settings.as_ref().and_then(|s| s.tool_choice.as_ref()), &output_names)?;
        // Capabilities sorted by their ordering constraints (a cycle or a missing requirement is
        // an error); a `ThreadExecutor` among them brings the blocking pool.
        let capabilities = self.capabilities.for_agent(self.name.as_deref(), &self.system_prompts)?;
        // Tool search and bridge mode, from the builder's shortcuts or the capabilities: one each.
        let tool_search = one_of("tool search (`ToolSearch`)", self.tool_search, capabilities.leaves::<ToolSearch>()?)?;
        let bridge = one_of("bridge mode (`BridgeConfig`)", self.bridge, capabilities.leaves::<BridgeConfig>()?)?;
        if let Some(config) = &tool_search {
            config.check_context::<D>()?;
            config.check_semantic()?;
        }
        let blocking = capabilities
            .blocking_pool()?
            .or_else(|| self.blocking_threads.map(crate::tool::pool::BlockingPool::new))
            .or_else(|| crate::capability::ThreadExecutor::installed_default().map(|e| e.pool()))
            .unwrap_or_else(|| crate::tool::pool::BlockingPool::new(DEFAULT_BLOCKING_THREADS));
        let mut toolsets: Vec<Arc<dyn DynToolset<D>>> = Vec::with_capacity(self.toolsets.len() + 1);
        // The agent's timeout is its own tools' (their toolset's), not the other toolsets'.
        let mut tools = self.tools;
        if let Some(t) = self.tool_timeout {
            tools.timeout = Some(tools.timeout.unwrap_or(t));
        }
        toolsets.push(Arc::new(tools));
        toolsets.extend(self.toolsets);
        let capability_toolsets_from = toolsets.len();
        for ts in capabilities.build_toolsets()? {
            Toolset::check(&ts)?;
            toolsets.push(Arc::new(ts));
        }
        let model: Arc<dyn DynModel> = self.model;
        // The model's own code (what it says about itself): a panic is a build error.
        let mut model_info = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| model.info())).map_err(|p| {
            UserError::new(format!(
                "the model panicked in `name`, `system` or `context_window` while the agent was built: {}",
                crate::error::panic_message(p)
            ))
        })?;
        model_info.context_window = self.context_window.or(model_info.context_window);
        output_mode::check_support(&self.output, &model_info)?;
        if let Some(config) = &tool_search {
            config.check_model(&model_info)?;
        }
        crate::native::check_support(
            &capabilities.native_tools().map_err(|e| UserError::new(e.to_string()))?,
            &model_info,
        )?;
        Ok(Agent {
            inner: Arc::new(AgentInner {
                model: Arc::new(run_model::RunModel {
                    choice: run_model::ModelChoice { model, streaming: self.streaming },
                    info: Arc::new(model_info),
                }),
                capabilities,
                system_prompts: self.system_prompts,
                instructions: self.instructions,
                toolsets,
                capability_toolsets_from,
                model_settings: self.model_settings.map(Arc::new),
                usage_limits: Arc::new(self.usage_limits.unwrap_or_default()),
                default_deps: self.default_deps,
                name: self.name,
                deferred_records: Arc::default(),
                deferral_store: self
                    .deferral_store
                    .unwrap_or_else(|| Arc::new(crate::deferred::MemoryDeferralStore::new())),
                overrides: Arc::default(),
                deps_overrides: Arc::default(),
                step: StepConfig {
                    retries: self.retries,
                    output_retries: self.output_retries.unwrap_or(self.retries),
                    end_strategy: self.end_strategy,
                    parallel_mode: self.parallel_mode,
                    output: self.output,
                    blocking,
                    tool_search,
                    tool_layout: Default::default(),
                    bridge,
                    bridge_cache: BridgeCache::default(),
                },
            }),
            convert: self.convert,
        })
    }
}

/// The one configuration of `what`: the builder's, or the one capability's. Two is a mistake.
fn one_of<T>(what: &str, from_builder: Option<T>, from_capabilities: Vec<T>) -> Result<Option<T>, UserError> {
    let count = usize::from(from_builder.is_some()) + from_capabilities.len();
    if count > 1 {
        return Err(UserError::new(format!(
            "{what} is configured {count} times (by the builder's shortcut and the capabilities): keep one"
        )));
    }
    Ok(from_builder.or(from_capabilities.into_iter().next()))
}
