//! [`RunBuilder`]: the options of one run; and what a run returns ([`RunResult`], [`RunRecord`]).

use super::output_stream::OutputStream;
use super::{AgentRun, Extras, Pending};
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;

use crate::agent::{Agent, AgentEvent, EventStream};
use crate::capability::{Capability, DynCapability};
use crate::run::{EventSink, RunState};

use crate::agent::run_model::{ModelChoice, RunModel, check_run_model};
use crate::deferred::DeferredToolResults;
use crate::error::{AgentRunError, UserError};
use crate::messages::{ModelMessage, UserPromptContent};
use crate::model::{Model, ModelSettings, StreamingModel};
use crate::usage::{RunUsage, UsageLimits};

/// Options for one run; `.await` it to run to the end.
///
/// ```
/// use toolsmith::prelude::*;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = Agent::builder(TestModel::default().custom_output_text("Bonjour")).build()?;
/// let first = agent.run("Say hello in French").await?;
/// // A second run that continues the conversation, with a request limit.
/// let second = agent
///     .run("Again")
///     .message_history(first.all_messages().to_vec())
///     .usage_limits(UsageLimits::default().request_limit(1))
///     .await?;
/// assert_eq!(second.output(), "Bonjour");
/// assert_eq!(second.all_messages().len(), 4);
/// assert_eq!(second.new_messages().len(), 2);
/// # Ok(())
/// # }
/// ```
#[must_use = "a run does nothing until it is awaited"]
pub struct RunBuilder<'a, D, O> {
    agent: &'a Agent<D, O>,
    prompt: Option<UserPromptContent>,
    deps: Option<D>,
    history: Option<Vec<ModelMessage>>,
    settings: Option<ModelSettings>,
    limits: Option<UsageLimits>,
    usage: Option<RunUsage>,
    metadata: Option<serde_json::Value>,
    deferred: Option<DeferredToolResults>,
    events: Option<EventSink>,
    capabilities: Vec<Arc<dyn DynCapability<D>>>,
    partial_output: bool,
    model: Option<ModelChoice>,
}

impl<'a, D: Clone + Send + Sync + 'static, O: Send + 'static> RunBuilder<'a, D, O> {
    pub(crate) fn new(agent: &'a Agent<D, O>, prompt: Option<UserPromptContent>) -> Self {
        RunBuilder {
            agent,
            prompt,
            deps: None,
            history: None,
            settings: None,
            limits: None,
            usage: None,
            metadata: None,
            deferred: None,
            events: None,
            capabilities: Vec::new(),
            partial_output: false,
            model: None,
        }
    }

    /// Adds a capability for this run only, ordered with the agent's (after them unless an
    /// ordering constraint says otherwise). Its `for_run` instance and toolset are used as an
    /// agent capability's would be. A [`ThreadExecutor`](crate::capability::ThreadExecutor) is
    /// refused (the blocking pool is the agent's).
    ///
    /// ```
    /// use toolsmith::capability::SetToolMetadata;
    /// use toolsmith::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), AgentRunError> {
    /// let agent = Agent::builder(TestModel::default()).build()?;
    /// let tagged = agent.run("hi").capability(SetToolMetadata::new(serde_json::json!({"audit": true}))).await?;
    /// assert_eq!(tagged.output(), "success (no tool calls)");
    /// # Ok(())
    /// # }
    /// ```
    pub fn capability(mut self, capability: impl Capability<D>) -> Self {
        self.capabilities.push(Arc::new(capability));
        self
    }

    /// The dependencies tools receive.
    pub fn deps(mut self, deps: D) -> Self {
        self.deps = Some(deps);
        self
    }

    /// Continues from a message history (the messages of an earlier run, or a history written
    /// by Pydantic AI). The run starts from it made sendable (see
    /// [`repair_messages`](crate::messages::repair_messages); the last response's calls are left
    /// for the run to answer). Without a prompt, the run goes on from where the history ends: it
    /// sends the last request, runs the last response's calls, or takes the last response again.
    /// A new prompt on a history whose last response has calls without results is refused, and
    /// so is a history nested deeper than [`MAX_HISTORY_DEPTH`](crate::messages::MAX_HISTORY_DEPTH)
    /// (which could not be written).
    pub fn message_history(mut self, history: Vec<ModelMessage>) -> Self {
        self.history = Some(history);
        self
    }

    /// Runs with `model` instead of the agent's, without streaming (as with
    /// [`Agent::builder`](crate::Agent::builder); see [`model_streaming`](Self::model_streaming)),
    /// as Pydantic AI's `agent.run(..., model=...)`. An override in place
    /// ([`Agent::override_model`](crate::Agent::override_model)) wins over it, as in Pydantic AI.
    ///
    /// What the agent derives from its model is derived from this one for the run: the
    /// [`RunContext::model`](crate::RunContext::model) tools and capabilities see, native tools
    /// or their local fallbacks ([`NativeTool::runs_on`](crate::native::NativeTool::runs_on)),
    /// provider-side tool search ([`Model::tool_search_support`]) and bridge mode's context
    /// window (the model's own: [`AgentBuilder::context_window`](crate::AgentBuilder::context_window)
    /// is the agent's model's). A model that cannot run the agent's configuration (a native
    /// tool without a local fallback it does not run, a provider-side search strategy it lacks)
    /// fails the run at its start with [`AgentRunError::User`], before anything is sent.
    ///
    /// ```
    /// use toolsmith::model::FunctionModel;
    /// use toolsmith::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), AgentRunError> {
    /// let agent = Agent::builder(TestModel::default()).build()?;
    /// let other = FunctionModel::sync(|_, _| ModelResponse::text("another model"));
    /// let result = agent.run("hi").model(other.clone()).await?;
    /// assert_eq!(result.output(), "another model");
    /// assert!(other.last_model_request_parameters().is_some());
    /// // The next run uses the agent's model again.
    /// assert_eq!(agent.run("hi").await?.output(), "success (no tool calls)");
    /// # Ok(())
    /// # }
    /// ```
    pub fn model<M: Model>(mut self, model: M) -> Self {
        self.model = Some(ModelChoice::plain(model));
        self
    }

    /// [`model`](Self::model) with a model that streams: with an event handler (or
    /// [`stream`](Self::stream), [`stream_output`](Self::stream_output)) the run sees its deltas.
    ///
    /// ```
    /// use futures::{StreamExt, stream};
    /// use toolsmith::model::{FunctionModel, StreamDelta};
    /// use toolsmith::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), AgentRunError> {
    /// let agent = Agent::builder(TestModel::default()).build()?;
    /// let model = FunctionModel::stream(|_, _| stream::iter([StreamDelta::text("a"), StreamDelta::text("b")]));
    /// let (events, run) = agent.run("hi").model_streaming(model).stream();
    /// let (result, events) = tokio::join!(run, events.collect::<Vec<_>>());
    /// assert_eq!(result?.output(), "ab");
    /// assert!(events.len() > 3);
    /// # Ok(())
    /// # }
    /// ```
    pub fn model_streaming<M: StreamingModel>(mut self, model: M) -> Self {
        self.model = Some(ModelChoice::streaming(model));
        self
    }

    /// Model settings for this run, merged over the agent's (each setting given here replaces
    /// the agent's, the others are kept; see [`ModelSettings::merged`]), as Pydantic AI merges a
    /// run's `model_settings`. They apply to whichever model the run uses.
    ///
    /// ```
    /// use toolsmith::model::FunctionModel;
    /// use toolsmith::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), AgentRunError> {
    /// let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    /// let s = seen.clone();
    /// let model = FunctionModel::sync(move |_, info| {
    ///     *s.lock().unwrap() = info.model_settings.clone();
    ///     ModelResponse::text("ok")
    /// });
    /// let agent = Agent::builder(model).model_settings(ModelSettings::new().temperature(0.2).max_tokens(100)).build()?;
    /// agent.run("hi").model_settings(ModelSettings::new().temperature(0.9)).await?;
    /// let settings = seen.lock().unwrap().clone().unwrap();
    /// assert_eq!((settings.temperature, settings.max_tokens), (Some(0.9), Some(100)));
    /// # Ok(())
    /// # }
    /// ```
    pub fn model_settings(mut self, settings: ModelSettings) -> Self {
        self.settings = Some(settings);
        self
    }

    /// Usage limits for this run, instead of the agent's.
    pub fn usage_limits(mut self, limits: UsageLimits) -> Self {
        self.limits = Some(limits);
        self
    }

    /// The usage so far, which this run starts from and adds to, as Pydantic AI's
    /// `agent.run(..., usage=...)`: the run's [`UsageLimits`] then bound the whole
    /// conversation, not this run alone, and its [`RunResult::usage`] is the total. Give it the
    /// usage of the runs before, a run resumed after a pause (deferred calls) included.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = Agent::builder(TestModel::default()).build()?;
    /// let limits = UsageLimits::new().request_limit(2);
    /// let first = agent.run("hi").usage_limits(limits.clone()).await?;
    /// let second = agent
    ///     .run("again")
    ///     .message_history(first.all_messages().to_vec())
    ///     .usage(first.usage().clone())
    ///     .usage_limits(limits.clone())
    ///     .await?;
    /// assert_eq!(second.usage().requests, 2);
    /// // A third request would cross the conversation's limit.
    /// let third = agent.run("and again").usage(second.usage().clone()).usage_limits(limits).await;
    /// assert!(matches!(third, Err(AgentRunError::UsageLimitExceeded { .. })));
    /// # Ok(())
    /// # }
    /// ```
    pub fn usage(mut self, usage: RunUsage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// Results for the deferred calls the history ends with (approvals and external results):
    /// the run settles those calls first, then continues.
    ///
    /// Build them from the run's [`DeferredToolRequests`](crate::deferred::DeferredToolRequests)
    /// (`requests.results()`, `requests.build_results(...)`) and resume the history that run
    /// ended with: each decision then applies to the call it was given for, and the run is
    /// refused, before anything runs, if the history's pending calls are not exactly those
    /// (see [`ResumeRefusal`](crate::deferred::ResumeRefusal)). The calls are answered once: a
    /// second resume of the same history is refused
    /// ([`ResumeRefusal::AlreadyResumed`](crate::deferred::ResumeRefusal::AlreadyResumed)); go
    /// on from the history the first one returned.
    pub fn deferred_tool_results(mut self, results: DeferredToolResults) -> Self {
        self.deferred = Some(results);
        self
    }

    /// Calls `handler` with every event of the run, as it happens (see [`AgentEvent`]).
    pub fn event_handler(mut self, handler: impl Fn(AgentEvent) + Send + Sync + 'static) -> Self {
        self.events = Some(Arc::new(handler));
        self
    }

    /// The run's events as a stream, and the run itself: drive both, e.g. with `tokio::join!`.
    ///
    /// ```
    /// use futures::StreamExt;
    /// use toolsmith::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), AgentRunError> {
    /// let agent = Agent::builder(TestModel::default()).build()?;
    /// let (events, run) = agent.run("hi").stream();
    /// let (result, events) = tokio::join!(run, events.collect::<Vec<_>>());
    /// assert_eq!(result?.output(), "success (no tool calls)");
    /// assert!(events.len() >= 3);
    /// # Ok(())
    /// # }
    /// ```
    pub fn stream(mut self) -> (EventStream, impl Future<Output = Result<RunResult<O>, AgentRunError>> + Send + 'a) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        self.events = Some(Arc::new(move |e| {
            let _ = tx.send(e);
        }));
        (EventStream { rx }, self.into_future())
    }

    /// The run's output as the model streams it, then its final output (see [`OutputStream`]):
    /// the output tool's arguments (or the text, for text output or JSON text) are read as
    /// partial JSON as they arrive and go through the output hooks with
    /// [`RunContext::partial_output`](crate::RunContext::partial_output) set; each new output
    /// that validates is an item. The final output is validated as usual and is the last item.
    ///
    /// Partial outputs come from models that stream (agents built with
    /// [`Agent::builder_streaming`](crate::Agent::builder_streaming)); with another model the
    /// stream has the final output only. An event handler set on the run still gets every event.
    ///
    /// ```
    /// use futures::{StreamExt, stream};
    /// use serde::Deserialize;
    /// use toolsmith::model::{FunctionModel, StreamDelta};
    /// use toolsmith::prelude::*;
    ///
    /// #[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
    /// struct City {
    ///     name: String,
    ///     #[serde(default)]
    ///     landmarks: Vec<String>,
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// // A model that streams its output tool call in three pieces.
    /// let model = FunctionModel::stream(|_, info| {
    ///     let tool = info.output_tools[0].name.clone();
    ///     stream::iter([
    ///         StreamDelta::tool_call(0, tool, r#"{"name": "Par"#),
    ///         StreamDelta::tool_args(0, r#"is", "landmarks": ["Louvre""#),
    ///         StreamDelta::tool_args(0, r#", "Orsay"]}"#),
    ///     ])
    /// });
    /// let agent = Agent::builder_streaming(model).output_type::<City>().build()?;
    /// let outputs: Vec<City> = agent.run("a city").stream_output().map(|o| o.unwrap()).collect().await;
    /// let seen: Vec<(&str, usize)> = outputs.iter().map(|c| (c.name.as_str(), c.landmarks.len())).collect();
    /// // Three partial outputs, then the final one.
    /// assert_eq!(seen, [("Par", 0), ("Paris", 1), ("Paris", 2), ("Paris", 2)]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn stream_output(mut self) -> OutputStream<'a, O> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let handler = self.events.take();
        self.events = Some(Arc::new(move |e: AgentEvent| {
            if matches!(e, AgentEvent::PartialOutput { .. }) {
                let _ = tx.send(e.clone());
            }
            if let Some(h) = &handler {
                h(e);
            }
        }));
        self.partial_output = true;
        let convert = self.agent.convert.clone();
        OutputStream::new(rx, self.into_future(), convert)
    }

    /// Metadata attached to the run, readable by tools (nested at most
    /// [`MAX_HISTORY_DEPTH`](crate::messages::MAX_HISTORY_DEPTH) levels: deeper is refused).
    pub fn metadata(mut self, metadata: serde_json::Value) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// The run as a state machine, to step through its nodes with [`AgentRun::next`].
    pub fn iter(mut self) -> Result<AgentRun<D, O>, AgentRunError> {
        // A history built in memory may hold values of any depth: one nested deeper than a
        // history is written is refused (and dropped without recursion) before anything copies
        // or walks it.
        if let Some(history) = &self.history
            && let Some(i) = crate::messages::first_too_deep(history)
        {
            crate::messages::dispose_messages(self.history.take().unwrap_or_default());
            return Err(AgentRunError::User(UserError::new(format!(
                "the message history nests arrays and objects more than {} levels deep (in message {i}): toolsmith reads and writes histories up to that depth",
                crate::messages::MAX_HISTORY_DEPTH
            ))));
        }
        if let Some(results) = &mut self.deferred {
            results.bound_values();
        }
        // The run's metadata is copied into every context the run makes.
        if let Some(metadata) = &self.metadata
            && crate::validation::depth::too_deep(metadata, crate::messages::MAX_HISTORY_DEPTH).is_some()
        {
            crate::validation::depth::dispose(self.metadata.take().unwrap_or_default());
            return Err(AgentRunError::User(UserError::new(format!(
                "the run's metadata nests arrays and objects more than {} levels deep: toolsmith keeps values up to that depth",
                crate::messages::MAX_HISTORY_DEPTH
            ))));
        }
        let inner = &self.agent.inner;
        let has_run_capabilities = !self.capabilities.is_empty();
        let deps = match inner.deps_overrides.current().or(self.deps).or_else(|| inner.default_deps.clone()) {
            Some(d) => d,
            None => match default_unit::<D>() {
                Some(d) => d,
                None => {
                    return Err(AgentRunError::User(UserError::new(format!(
                        "this agent's tools need dependencies of type {}: pass them with `.deps(...)` on the run, or set `default_deps` on the builder",
                        std::any::type_name::<D>()
                    ))));
                }
            },
        };
        let caps = if self.capabilities.is_empty() {
            inner.capabilities.clone()
        } else {
            inner.capabilities.with_run_capabilities(self.capabilities).map_err(AgentRunError::User)?
        };
        // An override in place wins over the run's model, as in Pydantic AI.
        let model = match inner.overrides.current().or(self.model) {
            None => inner.model.clone(),
            Some(choice) => {
                let info = choice.info().map_err(AgentRunError::User)?;
                check_run_model(&info, inner.step.tool_search.as_ref(), &caps.native_tools()?, &inner.step.output)
                    .map_err(AgentRunError::User)?;
                Arc::new(RunModel { choice, info: Arc::new(info) })
            }
        };
        // With capabilities, the run's own settings are kept apart too: a request layers the
        // agent's, then each capability's, then the run's (Pydantic AI's order).
        let run_settings = (!caps.is_empty()).then(|| self.settings.clone()).flatten();
        let settings = match (&inner.model_settings, self.settings) {
            (Some(a), Some(b)) => Some(Arc::new(a.merged(&b))),
            (a, b) => b.map(Arc::new).or_else(|| a.clone()),
        };
        // The history a run starts from is made sendable (orphaned results dropped, calls that
        // will never be answered closed out, consecutive requests merged); the calls of its last
        // response stay open for the run to answer.
        let history = crate::messages::repair_messages(self.history.unwrap_or_default(), false);
        let conversation_id = history
            .iter()
            .rev()
            .find_map(|m| match m {
                ModelMessage::Request(r) => r.conversation_id.clone(),
                ModelMessage::Response(r) => r.conversation_id.clone(),
            })
            .unwrap_or_else(new_id);
        let new_start = history.len();
        let run_id = new_id();
        let prompt_text = self.prompt.as_ref().map(|p| Arc::from(p.text()));
        let handler_panic = self.events.is_some().then(|| Arc::new(std::sync::Mutex::new(None)));
        let events = self.events.zip(handler_panic.clone()).map(|(sink, slot)| crate::run::guard_sink(sink, slot));
        Ok(AgentRun {
            agent: self.agent.clone(),
            deps,
            prompt: self.prompt,
            settings,
            limits: self.limits.map_or_else(|| inner.usage_limits.clone(), Arc::new),
            state: RunState {
                events,
                handler_panic,
                messages: Arc::new(history),
                sound: Default::default(),
                new_start,
                usage: self.usage.unwrap_or_default(),
                retries: crate::run::no_retries(),
                output_retries: 0,
                run_step: 0,
                partial_output: self.partial_output,
                refused: Default::default(),
                spent: None,
            },
            next: Pending::Start,
            tools: None,
            tools_step: 0,
            run_id,
            conversation_id,
            prompt_text,
            caps,
            nested: None,
            model,
            run_capabilities: has_run_capabilities,
            begun: false,
            toolsets_entered: false,
            extras: (self.metadata.is_some() || self.deferred.is_some() || run_settings.is_some()).then(|| {
                Box::new(Extras {
                    metadata: self.metadata,
                    deferred: self.deferred,
                    run_settings,
                    ..Default::default()
                })
            }),
        })
    }

    /// Runs to the end and returns the output, the messages and the usage whether the run
    /// succeeded or not.
    pub async fn run_capturing(self) -> RunRecord<O> {
        let mut run = match self.iter() {
            Ok(run) => run,
            Err(e) => {
                return RunRecord { result: Err(e), messages: Vec::new(), new_start: 0, usage: RunUsage::default() };
            }
        };
        let result = run.drive_output().await;
        let result = run.converted(result);
        record(run, result)
    }

    /// Runs to the end on a new single-threaded runtime, blocking the current thread.
    ///
    /// Inside an async runtime it returns a [`UserError`] at once (blocking a runtime's thread
    /// on another runtime stalls both): `.await` the builder there. It returns as soon as the
    /// run ends: a synchronous tool still running after its timeout is left to finish on its
    /// own thread (see [`ThreadExecutor::running_past_timeout`](crate::capability::ThreadExecutor::running_past_timeout)).
    pub fn run_sync(self) -> Result<RunResult<O>, AgentRunError>
    where
        D: 'a,
    {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(AgentRunError::User(UserError::new(
                "`run_sync` was called inside an async runtime, where it would block the runtime's thread: `.await` the run instead (`agent.run(prompt).await`)",
            )));
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| AgentRunError::User(UserError::new(format!("could not start a runtime for run_sync: {e}"))))?;
        let result = rt.block_on(self.into_future());
        // Dropping the runtime would wait for blocking tools still running after their timeout.
        rt.shutdown_background();
        result
    }
}

/// What a run driven to its end leaves: its result, messages and usage whatever the outcome.
fn record<D, O>(run: AgentRun<D, O>, result: Result<O, AgentRunError>) -> RunRecord<O> {
    let state = run.state;
    RunRecord {
        result,
        messages: Arc::try_unwrap(state.messages).unwrap_or_else(|a| (*a).clone()),
        new_start: state.new_start,
        usage: state.usage,
    }
}

/// A new id (a UUIDv7, hyphenated), written straight into its shared string.
fn new_id() -> Arc<str> {
    Arc::from(&*crate::durable::new_v7().hyphenated().encode_lower(&mut uuid::Uuid::encode_buffer()))
}

fn default_unit<D: 'static>() -> Option<D> {
    let unit: Box<dyn std::any::Any> = Box::new(());
    unit.downcast::<D>().ok().map(|b| *b)
}

impl<'a, D: Clone + Send + Sync + 'static, O: Send + 'static> IntoFuture for RunBuilder<'a, D, O> {
    type Output = Result<RunResult<O>, AgentRunError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        // The builder is boxed and spent when the run starts (inside the future, so that a
        // durable scope around it covers the run's ids): a run in flight does not carry it.
        let builder = Box::new(self);
        Box::pin(async move {
            // The run is driven here rather than through another async fn, whose argument
            // would be a second copy of it in the future.
            let mut run = {
                let builder = builder;
                (*builder).iter()?
            };
            let result = run.drive_output().await;
            let result = run.converted(result);
            let record = record(run, result);
            let output = record.result?;
            Ok(RunResult { output, messages: record.messages, new_start: record.new_start, usage: record.usage })
        })
    }
}

/// The result of a successful run: its output, the messages (all, or only this run's new ones,
/// to continue the conversation with) and the usage.
///
/// ```
/// use toolsmith::prelude::*;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = Agent::builder(TestModel::default().custom_output_text("done")).build()?;
/// let result = agent.run("go").await?;
/// assert_eq!(result.output(), "done");
/// assert_eq!(result.usage().requests, 1);
/// // The history in Pydantic AI's JSON, to store and resume later.
/// let json = serde_json::to_string(result.all_messages())?;
/// let back: Vec<ModelMessage> = serde_json::from_str(&json)?;
/// assert_eq!(back.len(), 2);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct RunResult<O> {
    pub(super) output: O,
    pub(super) messages: Vec<ModelMessage>,
    pub(super) new_start: usize,
    pub(super) usage: RunUsage,
}

impl<O> RunResult<O> {
    /// The output.
    pub fn output(&self) -> &O {
        &self.output
    }

    /// The output, by value.
    pub fn into_output(self) -> O {
        self.output
    }

    /// Every message, history included.
    pub fn all_messages(&self) -> &[ModelMessage] {
        &self.messages
    }

    /// The messages of this run only.
    pub fn new_messages(&self) -> &[ModelMessage] {
        &self.messages[self.new_start.min(self.messages.len())..]
    }

    /// The run's usage.
    pub fn usage(&self) -> &RunUsage {
        &self.usage
    }
}

impl<O> RunResult<crate::agent::Deferrable<O>> {
    /// The output, when the run produced one (not deferred calls): `result.final_output()`
    /// instead of `result.output().output()`.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = Agent::builder(TestModel::default()).allow_deferred().build()?;
    /// let result = agent.run("hi").await?;
    /// assert!(result.final_output().is_some());
    /// assert!(result.deferred().is_none());
    /// # Ok(())
    /// # }
    /// ```
    pub fn final_output(&self) -> Option<&O> {
        self.output.output()
    }

    /// The calls waiting for approval or an outside result, when the run ended with them.
    pub fn deferred(&self) -> Option<&crate::deferred::DeferredToolRequests> {
        self.output.deferred()
    }
}

/// Everything a run produced, whether it succeeded or failed.
#[derive(Debug)]
#[non_exhaustive]
pub struct RunRecord<O> {
    /// The output or the error.
    pub result: Result<O, AgentRunError>,
    /// Every message, history included, up to the end or the error.
    pub messages: Vec<ModelMessage>,
    /// Where this run's new messages start in `messages`.
    pub new_start: usize,
    /// The run's usage.
    pub usage: RunUsage,
}

impl<O> RunRecord<O> {
    /// The messages of this run only.
    pub fn new_messages(&self) -> &[ModelMessage] {
        &self.messages[self.new_start.min(self.messages.len())..]
    }
}
