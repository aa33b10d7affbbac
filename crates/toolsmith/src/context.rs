//! [`RunContext`]: what a tool, a `prepare` function or a capability knows about the run.

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::messages::ModelMessage;
pub use crate::model_info::ModelInfo;
use crate::settings::ModelSettings;
use crate::usage::RunUsage;

/// Information about the current call to a tool, a `prepare` function or a capability hook.
///
/// A tool receives it by value as its first parameter. `D` is the agent's dependency type; a tool
/// that does not read dependencies can take `RunContext` (which is `RunContext<()>`) and then works
/// with an agent of any dependency type.
///
/// Everything except `deps` is cheap to clone: the message list and the retry table are shared.
///
/// ```
/// use toolsmith::prelude::*;
///
/// /// Report how many times this call has been retried.
/// #[tool]
/// fn retries_so_far(ctx: RunContext) -> String {
///     format!("retry {} of {}", ctx.retry, ctx.max_retries)
/// }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunContext<D = ()> {
    /// The dependencies given to the run.
    pub deps: D,
    /// The model used in this run.
    pub model: ModelInfo,
    /// Usage of the run so far.
    pub usage: RunUsage,
    /// The prompt the run was started with, if any.
    pub prompt: Option<Arc<str>>,
    /// The messages exchanged in the run so far, history included.
    pub messages: Arc<Vec<ModelMessage>>,
    /// Retries used so far, per tool name, in this run.
    pub retries: Arc<HashMap<String, u32>>,
    /// The id of the tool call being handled, when a tool is called.
    pub tool_call_id: Option<String>,
    /// The name of the tool being handled, when there is one.
    pub tool_name: Option<String>,
    /// How many times the current tool has been retried in a row.
    pub retry: u32,
    /// The retry budget of the current tool.
    pub max_retries: u32,
    /// The number of model requests made in this run (1 during the first request's tools).
    pub run_step: u32,
    /// Whether the current call was approved by a human (deferred tool approval).
    pub tool_call_approved: bool,
    /// Metadata attached to the current call when it was resumed with deferred results.
    pub tool_call_metadata: Option<Value>,
    /// A unique id of this run (UUIDv7).
    pub run_id: Arc<str>,
    /// The id of the conversation this run belongs to (UUIDv7), shared by runs that continue a history.
    pub conversation_id: Arc<str>,
    /// Metadata attached to the run.
    pub metadata: Option<Value>,
    /// The model settings in force for this run.
    pub model_settings: Option<ModelSettings>,
    /// Whether the output the output hooks are looking at is partial: the output so far, while
    /// the model streams it to a [`RunBuilder::stream_output`](crate::agent::RunBuilder::stream_output)
    /// (the final output is validated once more, with `false`). Skip expensive checks on
    /// partial output; a partial output that fails validation is not shown and costs no retry.
    pub partial_output: bool,
    /// Where [`RunContext::add_usage`] adds to the run's usage (`None` outside a run).
    pub(crate) spent: Option<UsageSink>,
    /// The run's path for calls a tool makes to other tools: a
    /// [`NestedCalls<D>`](crate::execution::NestedCalls), read with
    /// [`NestedCalls::of`](crate::execution::NestedCalls::of) (held as `Any`: the context does
    /// not depend on the executor).
    pub(crate) nested: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

/// What code inside a run spends on model calls of its own, added to the run's usage at its next
/// step (see [`RunContext::add_usage`]).
#[derive(Clone, Default)]
pub(crate) struct UsageSink(Arc<std::sync::Mutex<RunUsage>>);

impl UsageSink {
    /// Adds one model request's usage.
    pub(crate) fn add_request(&self, usage: &crate::usage::RequestUsage) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).add_request(usage);
    }

    /// What was added since the last take.
    pub(crate) fn take(&self) -> RunUsage {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl std::fmt::Debug for UsageSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UsageSink")
    }
}

impl<D> RunContext<D> {
    /// Whether the current attempt is the last one before the retry budget runs out.
    pub fn last_attempt(&self) -> bool {
        self.retry >= self.max_retries
    }

    /// Adds `usage` to the run's usage: for a capability or a tool that calls a model of its own
    /// (a judge, a summariser, a sub-agent), as Pydantic AI counts a nested run in the run's usage.
    /// The run adds it at its next step, where the run's limits apply to it, and to the usage of
    /// its result. `ctx.usage` is a snapshot: it does not change. Outside a run it does nothing.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    /// use toolsmith::usage::{RequestUsage, RunUsage};
    ///
    /// /// Ask a second model (here: pretend to).
    /// #[tool]
    /// async fn consult(ctx: RunContext) -> String {
    ///     let mut spent = RunUsage::default();
    ///     spent.add_request(&RequestUsage::new(120, 30));
    ///     ctx.add_usage(&spent);
    ///     "the second opinion".into()
    /// }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let agent = Agent::builder(TestModel::default()).tool(consult).build().unwrap();
    /// let result = agent.run("ask").await.unwrap();
    /// // TestModel's two requests, and the one the tool reported.
    /// assert_eq!(result.usage().requests, 3);
    /// # });
    /// ```
    pub fn add_usage(&self, usage: &RunUsage) {
        if let Some(sink) = &self.spent {
            *sink.0.lock().unwrap_or_else(|p| p.into_inner()) += usage;
        }
    }

    /// The same context with other dependencies.
    pub fn map_deps<E>(self, f: impl FnOnce(D) -> E) -> RunContext<E> {
        RunContext {
            deps: f(self.deps),
            model: self.model,
            usage: self.usage,
            prompt: self.prompt,
            messages: self.messages,
            retries: self.retries,
            tool_call_id: self.tool_call_id,
            tool_name: self.tool_name,
            retry: self.retry,
            max_retries: self.max_retries,
            run_step: self.run_step,
            tool_call_approved: self.tool_call_approved,
            tool_call_metadata: self.tool_call_metadata,
            run_id: self.run_id,
            conversation_id: self.conversation_id,
            metadata: self.metadata,
            model_settings: self.model_settings,
            partial_output: self.partial_output,
            spent: self.spent,
            nested: None,
        }
    }

    /// The same context without dependencies.
    pub fn without_deps(&self) -> RunContext<()> {
        RunContext {
            deps: (),
            model: self.model.clone(),
            usage: self.usage.clone(),
            prompt: self.prompt.clone(),
            messages: self.messages.clone(),
            retries: self.retries.clone(),
            tool_call_id: self.tool_call_id.clone(),
            tool_name: self.tool_name.clone(),
            retry: self.retry,
            max_retries: self.max_retries,
            run_step: self.run_step,
            tool_call_approved: self.tool_call_approved,
            tool_call_metadata: self.tool_call_metadata.clone(),
            run_id: self.run_id.clone(),
            conversation_id: self.conversation_id.clone(),
            metadata: self.metadata.clone(),
            model_settings: self.model_settings.clone(),
            partial_output: self.partial_output,
            spent: self.spent.clone(),
            nested: None,
        }
    }
}

impl RunContext<()> {
    /// A context for calling a tool outside an agent run (tests, benchmarks, direct use).
    pub fn detached() -> Self {
        RunContext::with_deps(())
    }
}

impl<D> RunContext<D> {
    /// A context with the given dependencies for calling a tool outside an agent run.
    pub fn with_deps(deps: D) -> Self {
        RunContext {
            deps,
            model: ModelInfo::default(),
            usage: RunUsage::default(),
            prompt: None,
            messages: Arc::new(Vec::new()),
            retries: Arc::new(HashMap::new()),
            tool_call_id: None,
            tool_name: None,
            retry: 0,
            max_retries: 1,
            run_step: 0,
            tool_call_approved: false,
            tool_call_metadata: None,
            run_id: Arc::from(crate::durable::new_v7().to_string()),
            conversation_id: Arc::from(crate::durable::new_v7().to_string()),
            metadata: None,
            model_settings: None,
            partial_output: false,
            spent: None,
            nested: None,
        }
    }
}

/// A [`RunContext`] whose dependency type is known only at run time.
///
/// Tools made by [`macro@crate::tool`] are compiled without knowing the agent's dependency type; they
/// receive the context through this trait and recover the typed context they asked for.
pub trait AnyRunContext: Send + Sync {
    /// The context as `&dyn Any`, to downcast to `RunContext<T>`.
    fn as_any(&self) -> &dyn Any;
    /// The context without dependencies.
    fn unit(&self) -> RunContext<()>;
    /// The name of the dependency type, for error messages.
    fn deps_type_name(&self) -> &'static str;
}

impl<D: Clone + Send + Sync + 'static> AnyRunContext for RunContext<D> {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn unit(&self) -> RunContext<()> {
        self.without_deps()
    }
    fn deps_type_name(&self) -> &'static str {
        std::any::type_name::<D>()
    }
}
