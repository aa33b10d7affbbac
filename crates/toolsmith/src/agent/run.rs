//! One run of an agent: a state machine stepped by [`AgentRun::next`], driven to the end by
//! awaiting a [`RunBuilder`].

use std::collections::HashMap;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;

use crate::agent::output::RunOutput;
use crate::agent::{Agent, AgentEvent, AgentInner, EventSink, EventStream};
use crate::toolset::DynToolset;
use futures::future::BoxFuture;

use crate::capability::{AgentNode, Capabilities, ModelRequestContext, NodeResult, OutputInfo, OutputKind};
use crate::context::RunContext;
use crate::deferred::{DeferredToolRequests, DeferredToolResults, ToolApproval};
use crate::error::{AgentRunError, UserError};
use crate::execution::{self, Resolution, Resume, StepOutcome, ToolIndex};
use crate::messages::{
    ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, RetryCause, RetryFeedbackPart, RetryInfo,
    SystemPromptPart, UserPromptContent, UserPromptPart,
};
use crate::model::{ModelRequestParameters, ModelSettings, check_static_tool_choice};
use crate::tool::ToolError;
use crate::usage::{RunUsage, UsageLimits};

/// Options for one run; `.await` it to run to the end.
#[must_use = "a run does nothing until it is awaited"]
pub struct RunBuilder<'a, D, O> {
    agent: &'a Agent<D, O>,
    prompt: Option<UserPromptContent>,
    deps: Option<D>,
    history: Option<Vec<ModelMessage>>,
    settings: Option<ModelSettings>,
    limits: Option<UsageLimits>,
    metadata: Option<serde_json::Value>,
    deferred: Option<DeferredToolResults>,
    events: Option<EventSink>,
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
            metadata: None,
            deferred: None,
            events: None,
        }
    }

    /// The dependencies tools receive.
    pub fn deps(mut self, deps: D) -> Self {
        self.deps = Some(deps);
        self
    }

    /// Continues from a message history (the messages of an earlier run, or a history written
    /// by Pydantic AI).
    pub fn message_history(mut self, history: Vec<ModelMessage>) -> Self {
        self.history = Some(history);
        self
    }

    /// Model settings for this run, over the agent's.
    pub fn model_settings(mut self, settings: ModelSettings) -> Self {
        self.settings = Some(settings);
        self
    }

    /// Usage limits for this run, instead of the agent's.
    pub fn usage_limits(mut self, limits: UsageLimits) -> Self {
        self.limits = Some(limits);
        self
    }

    /// Results for the deferred calls the history ends with (approvals and external results):
    /// the run settles those calls first, then continues.
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

    /// Metadata attached to the run, readable by tools.
    pub fn metadata(mut self, metadata: serde_json::Value) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// The run as a state machine, to step through its nodes with [`AgentRun::next`].
    pub fn iter(self) -> Result<AgentRun<D, O>, AgentRunError> {
        let inner = &self.agent.inner;
        let deps = match self.deps.or_else(|| inner.default_deps.clone()) {
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
        let settings = match (&inner.model_settings, self.settings) {
            (Some(a), Some(b)) => Some(a.merged(&b)),
            (a, b) => b.or_else(|| a.clone()),
        };
        let history = self.history.unwrap_or_default();
        let conversation_id = history
            .iter()
            .rev()
            .find_map(|m| match m {
                ModelMessage::Request(r) => r.conversation_id.clone(),
                ModelMessage::Response(r) => r.conversation_id.clone(),
            })
            .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
        let new_start = history.len();
        let run_id = uuid::Uuid::now_v7().to_string();
        let prompt_text = self.prompt.as_ref().map(|p| Arc::from(p.text()));
        Ok(AgentRun {
            agent: self.agent.clone(),
            deps,
            prompt: self.prompt,
            settings,
            limits: self.limits.or_else(|| inner.usage_limits.clone()).unwrap_or_default(),
            metadata: self.metadata,
            deferred: self.deferred,
            state: RunState {
                events: self.events,
                messages: Arc::new(history),
                new_start,
                usage: RunUsage::default(),
                retries: Arc::new(HashMap::new()),
                output_retries: 0,
                run_step: 0,
                refused: Default::default(),
                run_id: run_id.clone(),
                conversation_id: conversation_id.clone(),
            },
            next: Pending::Start,
            tools: None,
            finished: None,
            run_id: Arc::from(run_id.as_str()),
            conversation_id: Arc::from(conversation_id.as_str()),
            prompt_text,
            caps: inner.capabilities.clone(),
            toolsets: None,
            begun: false,
            toolsets_entered: false,
            event_drain: None,
        })
    }

    /// Runs to the end and returns the output, the messages and the usage whether the run
    /// succeeded or not.
    pub async fn run_capturing(self) -> RunRecord<O> {
        let mut run = match self.iter() {
            Ok(r) => r,
            Err(e) => {
                return RunRecord { result: Err(e), messages: Vec::new(), new_start: 0, usage: RunUsage::default() };
            }
        };
        let result = run.drive().await;
        let state = run.state;
        RunRecord {
            result,
            messages: Arc::try_unwrap(state.messages).unwrap_or_else(|a| (*a).clone()),
            new_start: state.new_start,
            usage: state.usage,
        }
    }

    /// Runs to the end on a new single-threaded runtime, blocking the current thread.
    /// Do not call it from inside an async runtime; `.await` the builder there.
    pub fn run_sync(self) -> Result<RunResult<O>, AgentRunError>
    where
        D: 'a,
    {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| AgentRunError::User(UserError::new(format!("could not start a runtime for run_sync: {e}"))))?;
        rt.block_on(self.into_future())
    }
}

fn default_unit<D: 'static>() -> Option<D> {
    let unit: Box<dyn std::any::Any> = Box::new(());
    unit.downcast::<D>().ok().map(|b| *b)
}

impl<'a, D: Clone + Send + Sync + 'static, O: Send + 'static> IntoFuture for RunBuilder<'a, D, O> {
    type Output = Result<RunResult<O>, AgentRunError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let record = self.run_capturing().await;
            let output = record.result?;
            Ok(RunResult { output, messages: record.messages, new_start: record.new_start, usage: record.usage })
        })
    }
}

/// The result of a successful run.
#[derive(Debug, Clone)]
pub struct RunResult<O> {
    output: O,
    messages: Vec<ModelMessage>,
    new_start: usize,
    usage: RunUsage,
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

pub(crate) struct RunState {
    /// Where the run's events go, if anywhere.
    pub(crate) events: Option<EventSink>,
    pub(crate) messages: Arc<Vec<ModelMessage>>,
    pub(crate) new_start: usize,
    pub(crate) usage: RunUsage,
    pub(crate) retries: Arc<HashMap<String, u32>>,
    pub(crate) output_retries: u32,
    pub(crate) run_step: u32,
    /// Hidden tools already refused once in this run (the first refusal is free).
    pub(crate) refused: std::collections::HashSet<String>,
    pub(crate) run_id: String,
    pub(crate) conversation_id: String,
}

impl RunState {
    /// Sends an event to the run's handler, if it has one.
    pub(crate) fn emit(&self, event: impl FnOnce() -> AgentEvent) {
        if let Some(sink) = &self.events {
            sink(event());
        }
    }

    pub(crate) fn push(&mut self, message: impl Into<ModelMessage>) {
        Arc::make_mut(&mut self.messages).push(message.into());
    }

    /// Sets the `tool_kind` of a call in the latest response that has it.
    pub(crate) fn mark_call_kind(&mut self, tool_call_id: &str, kind: &str) {
        let messages = Arc::make_mut(&mut self.messages);
        for m in messages.iter_mut().rev() {
            if let ModelMessage::Response(r) = m {
                for p in r.parts.iter_mut() {
                    if let crate::messages::ModelResponsePart::ToolCall(c) = p
                        && c.tool_call_id == tool_call_id
                    {
                        c.tool_kind = Some(kind.to_string());
                        return;
                    }
                }
            }
        }
    }

    pub(crate) fn pop_last(&mut self) {
        Arc::make_mut(&mut self.messages).pop();
    }

    pub(crate) fn last_request_mut(&mut self) -> Option<&mut ModelRequest> {
        match Arc::make_mut(&mut self.messages).last_mut() {
            Some(ModelMessage::Request(r)) => Some(r),
            _ => None,
        }
    }
}

enum Pending {
    Start,
    Request,
    Response(ModelResponse, Option<Resume>),
    Done,
}

/// A node of a run, as returned by [`AgentRun::next`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Node {
    /// The first request was built (system prompt, user prompt).
    UserPrompt,
    /// A request was sent to the model and answered.
    ModelRequest {
        /// The model's response.
        response: ModelResponse,
    },
    /// The response's tool calls were handled; the next request has these parts.
    CallTools {
        /// The parts of the next request (tool returns, retries, content).
        parts: Vec<ModelRequestPart>,
    },
    /// The run ended.
    End,
}

/// A run in progress. Step it with [`AgentRun::next`] until [`Node::End`], then take the
/// output with [`AgentRun::into_result`].
pub struct AgentRun<D, O> {
    agent: Agent<D, O>,
    deps: D,
    prompt: Option<UserPromptContent>,
    settings: Option<ModelSettings>,
    limits: UsageLimits,
    metadata: Option<serde_json::Value>,
    deferred: Option<DeferredToolResults>,
    pub(crate) state: RunState,
    next: Pending,
    tools: Option<ToolIndex<D>>,
    finished: Option<RunOutput>,
    /// Shared copies of what every context carries.
    run_id: Arc<str>,
    conversation_id: Arc<str>,
    prompt_text: Option<Arc<str>>,
    /// The capabilities of this run (each one's `for_run` instance).
    caps: Capabilities<D>,
    /// The toolsets of this run, when its capabilities' `for_run` instances bring their own.
    toolsets: Option<Vec<Arc<dyn DynToolset<D>>>>,
    /// Whether the run has started (capabilities instanced, toolsets entered, `before_run`).
    begun: bool,
    /// Whether the run's toolsets were entered (and are to be exited at its end).
    toolsets_entered: bool,
    /// The task passing the run's events through the capabilities' `wrap_event_stream`.
    event_drain: Option<tokio::task::JoinHandle<()>>,
}

impl<D: Clone + Send + Sync + 'static, O: Send + 'static> AgentRun<D, O> {
    /// All messages so far.
    pub fn messages(&self) -> &[ModelMessage] {
        &self.state.messages
    }

    /// Usage so far.
    pub fn usage(&self) -> &RunUsage {
        &self.state.usage
    }

    pub(crate) fn context(&self) -> RunContext<D> {
        let inner: &AgentInner<D> = &self.agent.inner;
        RunContext {
            deps: self.deps.clone(),
            model: inner.model_info.clone(),
            usage: self.state.usage.clone(),
            prompt: self.prompt_text.clone(),
            messages: self.state.messages.clone(),
            retries: self.state.retries.clone(),
            tool_call_id: None,
            tool_name: None,
            retry: 0,
            max_retries: inner.retries,
            run_step: self.state.run_step,
            tool_call_approved: false,
            tool_call_metadata: None,
            run_id: self.run_id.clone(),
            conversation_id: self.conversation_id.clone(),
            metadata: self.metadata.clone(),
            model_settings: self.settings.clone(),
        }
    }

    async fn drive(&mut self) -> Result<O, AgentRunError> {
        let output = self.drive_output().await?;
        (self.agent.convert)(output)
    }

    /// The run to its end through the capabilities' `wrap_run`, with the run hooks around it.
    async fn drive_output(&mut self) -> Result<RunOutput, AgentRunError> {
        if let Err(e) = self.begin().await {
            return self.finish(Err(e)).await;
        }
        if self.caps.is_empty() {
            let result = self.advance_to_end().await;
            return self.finish(result).await;
        }
        let caps = self.caps.clone();
        let ctx = self.context();
        let result = {
            let cell = tokio::sync::Mutex::new(&mut *self);
            let core = || -> BoxFuture<'_, Result<RunOutput, AgentRunError>> {
                Box::pin(async {
                    let mut run = cell.lock().await;
                    run.advance_to_end().await
                })
            };
            caps.run(0, &ctx, &core).await
        };
        self.finish(result).await
    }

    async fn advance_to_end(&mut self) -> Result<RunOutput, AgentRunError> {
        loop {
            if let Some(output) = self.advance().await? {
                return Ok(output);
            }
        }
    }

    /// Advances the run by one node. After [`Node::End`], [`AgentRun::into_result`] gives the
    /// output.
    pub async fn next(&mut self) -> Result<Node, AgentRunError> {
        if matches!(self.next, Pending::Done) {
            return Ok(Node::End);
        }
        let advanced = match self.begin().await {
            Ok(()) => self.advance().await,
            Err(e) => Err(e),
        };
        let ended = match advanced {
            Ok(None) => None,
            Ok(Some(output)) => Some(Ok(output)),
            Err(e) => Some(Err(e)),
        };
        if let Some(result) = ended {
            self.finished = Some(self.finish(result).await?);
            return Ok(Node::End);
        }
        Ok(match &self.next {
            Pending::Response(r, _) => Node::ModelRequest { response: r.clone() },
            Pending::Request => match self.state.messages.last() {
                Some(ModelMessage::Request(r)) if self.state.run_step > 0 => Node::CallTools { parts: r.parts.clone() },
                _ => Node::UserPrompt,
            },
            _ => Node::End,
        })
    }

    /// The output of a run that reached [`Node::End`].
    pub fn into_result(mut self) -> Result<RunResult<O>, AgentRunError> {
        let out = self.finished.take().ok_or_else(|| {
            AgentRunError::User(UserError::new("the run has not ended yet: call `next()` until it returns Node::End"))
        })?;
        let output = (self.agent.convert)(out)?;
        let state = self.state;
        Ok(RunResult {
            output,
            messages: Arc::try_unwrap(state.messages).unwrap_or_else(|a| (*a).clone()),
            new_start: state.new_start,
            usage: state.usage,
        })
    }

    /// The start of a run, once: the capabilities' per-run instances (and their toolsets), the
    /// event stream through the capabilities, the toolsets entered, then `before_run`.
    async fn begin(&mut self) -> Result<(), AgentRunError> {
        if self.begun {
            return Ok(());
        }
        self.begun = true;
        let ctx = self.context();
        let (caps, fresh) = self.agent.inner.capabilities.for_run(&ctx);
        self.caps = caps;
        if fresh {
            let inner = &self.agent.inner;
            let mut toolsets = inner.toolsets[..inner.capability_toolsets_from].to_vec();
            for ts in self.caps.toolsets() {
                crate::toolset::Toolset::check(&ts)?;
                toolsets.push(Arc::new(ts));
            }
            self.toolsets = Some(toolsets);
        }
        if !self.caps.is_empty() {
            let combined = crate::toolset::CombinedToolset::from_dyn(self.run_toolsets().to_vec());
            if let Some(wrapped) = self.caps.wrap_toolset(crate::toolset::BoxedToolset::new(combined)) {
                self.toolsets = Some(vec![wrapped.0]);
            }
        }
        if self.caps.wraps_event_stream() {
            self.start_event_stream(&ctx)?;
        }
        let toolsets = self.run_toolsets().to_vec();
        for (entered, ts) in toolsets.iter().enumerate() {
            if let Err(e) = ts.enter_boxed().await {
                for ts in toolsets[..entered].iter().rev() {
                    ts.exit_boxed().await;
                }
                self.toolsets_entered = false;
                return Err(AgentRunError::User(e));
            }
        }
        self.toolsets_entered = true;
        self.caps.before_run(&ctx).await
    }

    /// The end of a run: `after_run` on success, `on_run_error` on failure (which may recover
    /// with an output), then the toolsets exited and the last events delivered.
    async fn finish(&mut self, result: Result<RunOutput, AgentRunError>) -> Result<RunOutput, AgentRunError> {
        self.next = Pending::Done;
        let ctx = self.context();
        let outcome = match result {
            Ok(output) => match self.caps.after_run(&ctx, output).await {
                Ok(output) => Ok(output),
                Err(e) => self.caps.on_run_error(&ctx, e).await,
            },
            Err(e) => self.caps.on_run_error(&ctx, e).await,
        };
        if std::mem::take(&mut self.toolsets_entered) {
            for ts in self.run_toolsets().iter().rev() {
                ts.exit_boxed().await;
            }
        }
        self.end_event_stream().await;
        outcome
    }

    fn run_toolsets(&self) -> &[Arc<dyn DynToolset<D>>] {
        self.toolsets.as_deref().unwrap_or(&self.agent.inner.toolsets)
    }

    /// Passes the run's events through the capabilities' `wrap_event_stream` on their way to
    /// the run's handler (if it has one), in a task of the current runtime.
    fn start_event_stream(&mut self, ctx: &RunContext<D>) -> Result<(), AgentRunError> {
        use futures::StreamExt;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            AgentRunError::User(UserError::new(
                "a capability wraps the event stream, which needs a Tokio runtime: run the agent inside one (or with `run_sync`)",
            ))
        })?;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let mut events = self.caps.wrap_event_stream(ctx, EventStream { rx }.boxed());
        let handler = self.state.events.take();
        self.event_drain = Some(runtime.spawn(async move {
            while let Some(event) = events.next().await {
                if let Some(handler) = &handler {
                    handler(event);
                }
            }
        }));
        self.state.events = Some(Arc::new(move |e| {
            let _ = tx.send(e);
        }));
        Ok(())
    }

    /// Waits until the wrapped event stream has delivered its last event.
    async fn end_event_stream(&mut self) {
        if let Some(drain) = self.event_drain.take() {
            self.state.events = None;
            let _ = drain.await;
        }
    }

    /// One node of the run through the capabilities' node hooks; `Some` when the run has its
    /// final output.
    async fn advance(&mut self) -> Result<Option<RunOutput>, AgentRunError> {
        if self.caps.is_empty() {
            return self.transition().await;
        }
        let node = self.pending_node()?;
        let caps = self.caps.clone();
        let ctx = self.context();
        let result = {
            let cell = tokio::sync::Mutex::new(&mut *self);
            let core = |node: AgentNode| -> BoxFuture<'_, Result<NodeResult, AgentRunError>> {
                Box::pin(async {
                    let mut run = cell.lock().await;
                    run.run_node(node).await
                })
            };
            caps.node(0, &ctx, node, &core).await?
        };
        match result {
            NodeResult::End(output) => Ok(Some(output)),
            NodeResult::Next(node) => {
                self.set_next(node)?;
                Ok(None)
            }
        }
    }

    /// Runs `node` and says what comes next.
    async fn run_node(&mut self, node: AgentNode) -> Result<NodeResult, AgentRunError> {
        self.set_next(node)?;
        if let Some(output) = self.transition().await? {
            return Ok(NodeResult::End(output));
        }
        Ok(NodeResult::Next(self.pending_node()?))
    }

    /// The node the run does next, as the node hooks see it.
    fn pending_node(&self) -> Result<AgentNode, AgentRunError> {
        Ok(match &self.next {
            Pending::Start => AgentNode::UserPrompt,
            Pending::Request => AgentNode::ModelRequest,
            Pending::Response(r, _) => AgentNode::CallTools { response: r.clone() },
            Pending::Done => return Err(AgentRunError::User(UserError::new("the run has already ended"))),
        })
    }

    /// Makes `node` the next thing the run does (a hook may have replaced it).
    fn set_next(&mut self, node: AgentNode) -> Result<(), AgentRunError> {
        self.next = match (node, std::mem::replace(&mut self.next, Pending::Done)) {
            (AgentNode::UserPrompt, Pending::Start) => Pending::Start,
            (AgentNode::UserPrompt, _) => {
                return Err(AgentRunError::User(UserError::new(
                    "a run starts with its UserPrompt node only: a node hook cannot go back to it (go on with AgentNode::ModelRequest instead)",
                )));
            }
            (AgentNode::ModelRequest, _) => Pending::Request,
            (AgentNode::CallTools { response }, Pending::Response(_, resume)) => Pending::Response(response, resume),
            (AgentNode::CallTools { response }, _) => Pending::Response(response, None),
        };
        Ok(())
    }

    async fn transition(&mut self) -> Result<Option<RunOutput>, AgentRunError> {
        match std::mem::replace(&mut self.next, Pending::Done) {
            Pending::Start => {
                self.start()?;
                Ok(None)
            }
            Pending::Request => {
                if let Some(response) = self.request().await? {
                    self.next = Pending::Response(response, None);
                }
                Ok(None)
            }
            Pending::Response(response, resume) => self.handle_response(response, resume).await,
            Pending::Done => Err(AgentRunError::User(UserError::new("the run has already ended"))),
        }
    }

    fn start(&mut self) -> Result<(), AgentRunError> {
        let output_names: Vec<&str> =
            self.agent.inner.output.output_tool().map(|t| t.name.as_str()).into_iter().collect();
        check_static_tool_choice(self.settings.as_ref().and_then(|s| s.tool_choice.as_ref()), &output_names)?;
        if let Some(results) = self.deferred.take() {
            return self.start_resume(results);
        }
        let inner = &self.agent.inner;
        let mut parts = Vec::new();
        if self.state.messages.is_empty() {
            parts.extend(inner.system_prompts.iter().map(|p| ModelRequestPart::SystemPrompt(SystemPromptPart::new(p))));
        }
        if let Some(prompt) = &self.prompt {
            parts.push(ModelRequestPart::UserPrompt(UserPromptPart::new(prompt.clone())));
        }
        if parts.is_empty() {
            // No new prompt: continue from the history.
            match self.state.messages.last() {
                Some(ModelMessage::Response(r)) if r.tool_calls().next().is_some() => {
                    self.next = Pending::Response(r.clone(), None);
                    return Ok(());
                }
                Some(ModelMessage::Request(_)) => {
                    self.next = Pending::Request;
                    return Ok(());
                }
                _ => {
                    return Err(AgentRunError::User(UserError::new(
                        "nothing to run: give a prompt, or a message history that ends with a request or with unanswered tool calls",
                    )));
                }
            }
        }
        let mut request = ModelRequest::new(parts);
        request.run_id = Some(self.state.run_id.clone());
        request.conversation_id = Some(self.state.conversation_id.clone());
        self.state.push(request);
        self.next = Pending::Request;
        Ok(())
    }

    /// Settles the deferred calls the history ends with.
    fn start_resume(&mut self, results: DeferredToolResults) -> Result<(), AgentRunError> {
        let (response, resume) = self.build_resume(results, None)?;
        self.next = Pending::Response(response, Some(resume));
        Ok(())
    }

    /// How each call of the latest response is settled by `results`. Only calls of that
    /// response that have no result in the history yet can be settled; any other id is refused.
    /// With `pending` (deferred calls being handled inline), calls left without a result are
    /// deferred again.
    fn build_resume(
        &self,
        results: DeferredToolResults,
        pending: Option<&DeferredToolRequests>,
    ) -> Result<(ModelResponse, Resume), AgentRunError> {
        let user = |m: String| AgentRunError::User(UserError::new(m));
        let messages = &self.state.messages;
        let Some(pos) = messages.iter().rposition(|m| matches!(m, ModelMessage::Response(_))) else {
            return Err(user(if messages.is_empty() {
                "Tool call results were provided, but the message history is empty.".into()
            } else {
                "Tool call results were provided, but the message history does not contain a `ModelResponse`.".into()
            }));
        };
        let Some(ModelMessage::Response(response)) = messages.get(pos) else {
            return Err(user("the message history changed while resuming".into()));
        };
        let response = response.clone();
        if response.tool_calls().next().is_none() {
            return Err(user(
                "Tool call results were provided, but the message history does not contain any unprocessed tool calls."
                    .into(),
            ));
        }
        let mut resolutions = std::collections::HashMap::new();
        for m in &messages[pos + 1..] {
            if let ModelMessage::Request(r) = m {
                for p in &r.parts {
                    let id = match p {
                        ModelRequestPart::ToolReturn(t) => Some(&t.tool_call_id),
                        ModelRequestPart::RetryPrompt(t) => t.tool_call_id.as_ref(),
                        _ => None,
                    };
                    if let Some(id) = id {
                        if results.approvals.contains_key(id) || results.calls.contains_key(id) {
                            return Err(user(format!(
                                "Tool call '{id}' already has a result in the message history; remove it from the deferred tool results."
                            )));
                        }
                        resolutions.insert(id.clone(), Resolution::Skip);
                    }
                }
            }
        }
        let call_ids: std::collections::HashSet<&str> =
            response.tool_calls().map(|c| c.tool_call_id.as_str()).collect();
        for id in results.approvals.keys().chain(results.calls.keys()).chain(results.metadata.keys()) {
            if !call_ids.contains(id.as_str()) {
                return Err(user(format!(
                    "Tool call '{id}' is not among the pending calls of the message history: results can only be given for calls that are waiting for them."
                )));
            }
        }
        let mut provided = Vec::new();
        for (id, approval) in results.approvals {
            let r = match approval {
                ToolApproval::Approved { override_args } => {
                    Resolution::Approved { args: override_args, metadata: results.metadata.get(&id).cloned() }
                }
                ToolApproval::Denied { message } => Resolution::Denied(message),
            };
            provided.push(id.clone());
            resolutions.insert(id, r);
        }
        for (id, result) in results.calls {
            provided.push(id.clone());
            resolutions.insert(id, Resolution::External(result));
        }
        let prompt = if pending.is_none() { self.prompt.clone().map(UserPromptPart::new) } else { None };
        Ok((response, Resume { resolutions, provided, prompt, pending: pending.cloned() }))
    }

    async fn collect_tools(&mut self) -> Result<(), AgentRunError> {
        let ctx = self.context();
        let toolsets = self.toolsets.as_deref().unwrap_or(&self.agent.inner.toolsets);
        self.tools = Some(ToolIndex::collect(&self.agent.inner, toolsets, &self.caps, &ctx).await?);
        Ok(())
    }

    /// Sends the next request; `None` when a capability asked the model to try again (a retry
    /// prompt is then the next request).
    async fn request(&mut self) -> Result<Option<ModelResponse>, AgentRunError> {
        self.state.run_step += 1;
        self.collect_tools().await?;
        if let Some(limit) = self.limits.request_limit
            && self.state.usage.requests + 1 > limit
        {
            return Err(AgentRunError::UsageLimitExceeded {
                message: format!(
                    "The next request would exceed the request_limit of {limit}. Consider raising the limit, or see the docs on usage limits for budget-aware patterns: https://pydantic.dev/docs/ai/core-concepts/agent/#usage-limits"
                ),
            });
        }
        let inner = &self.agent.inner;
        let ctx = self.context();
        let tools = self.tools.as_ref().map(|t| t.definitions()).unwrap_or_default();
        let mut output_tools: Vec<_> = inner.output.output_tool().cloned().into_iter().collect();
        if !output_tools.is_empty() && !self.caps.is_empty() {
            output_tools = self.caps.prepare_output_tools(&ctx, output_tools).await?;
        }
        let mut instructions: Vec<String> = inner.instructions.iter().cloned().collect();
        instructions.extend(self.caps.instructions(&ctx).await);
        let instructions = if instructions.is_empty() { None } else { Some(instructions.join("\n\n")) };
        let settings = self.caps.model_settings(&ctx, self.settings.clone());
        // The context shares the history: dropped first, the history changes in place.
        drop(ctx);
        if let Some(last) = self.state.last_request_mut() {
            last.instructions = instructions.clone();
        }
        let params = ModelRequestParameters {
            function_tools: tools,
            output_tools,
            allow_text_output: inner.output.allows_text(),
            instructions,
        };
        self.state.usage.requests += 1;
        let step = self.state.run_step;
        self.state.emit(|| AgentEvent::ModelRequest { step });
        let ctx = self.context();
        let model = &inner.model;
        let streaming = self.state.events.as_ref().and_then(|sink| inner.streaming.as_ref().map(|m| (sink, m)));
        // The model's answer, kept for a retry asked after it (the response stays in the history).
        let answered: std::sync::Mutex<Option<ModelResponse>> = std::sync::Mutex::new(None);
        let keep_answer = !self.caps.is_empty();
        let core = |req: ModelRequestContext| -> BoxFuture<'_, Result<ModelResponse, AgentRunError>> {
            let answered = &answered;
            Box::pin(async move {
                let result = match streaming {
                    Some((sink, m)) => {
                        match m.request_stream_boxed(&req.messages, req.settings.as_ref(), &req.params).await {
                            Ok(mut stream) => {
                                use futures::StreamExt;
                                let mut last = Err(crate::model::ModelError::new(
                                    "UnexpectedModelBehavior",
                                    "the model's stream ended before its final response; the connection may have been cut, try again",
                                ));
                                while let Some(event) = stream.next().await {
                                    match event {
                                        Ok(crate::model::ModelStreamEvent::Final(r)) => {
                                            last = Ok(r);
                                            break;
                                        }
                                        Ok(e) => sink(AgentEvent::Stream(e)),
                                        Err(e) => {
                                            last = Err(e);
                                            break;
                                        }
                                    }
                                }
                                last
                            }
                            Err(e) => Err(e),
                        }
                    }
                    None => model.request_boxed(&req.messages, req.settings.as_ref(), &req.params).await,
                };
                if keep_answer && let Ok(r) = &result {
                    *answered.lock().unwrap_or_else(|p| p.into_inner()) = Some(r.clone());
                }
                result.map_err(|e| match e.kind.as_str() {
                    "UserError" => AgentRunError::User(UserError::new(e.message)),
                    _ => AgentRunError::Model { kind: e.kind, message: e.message },
                })
            })
        };
        let request = ModelRequestContext { messages: self.state.messages.clone(), settings, params };
        let outcome = self.caps.model_request(0, &ctx, request, &core).await;
        // The context shares the history: dropped first, the history grows in place.
        drop(ctx);
        let response = match outcome {
            Ok(response) => response,
            Err(AgentRunError::Retry(retry)) => {
                let answer = answered.into_inner().unwrap_or_else(|p| p.into_inner());
                if let Some(response) = answer {
                    self.record_response(response)?;
                }
                self.output_retry(retry.content, RetryCause::ModelRetry)?;
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        self.record_response(response).map(Some)
    }

    /// Counts a response's usage (checking the token limits) and adds it to the history.
    fn record_response(&mut self, mut response: ModelResponse) -> Result<ModelResponse, AgentRunError> {
        let usage = response.usage.clone();
        self.state.usage.input_tokens += usage.input_tokens;
        self.state.usage.output_tokens += usage.output_tokens;
        self.state.usage.cache_read_tokens += usage.cache_read_tokens;
        self.state.usage.cache_write_tokens += usage.cache_write_tokens;
        self.check_token_limits()?;
        response.run_id = Some(self.state.run_id.clone());
        response.conversation_id = Some(self.state.conversation_id.clone());
        if response.timestamp.is_none() {
            response.timestamp = Some(chrono::Utc::now());
        }
        self.state.push(response.clone());
        self.state.emit(|| AgentEvent::ModelResponse { response: response.clone() });
        Ok(response)
    }

    fn check_token_limits(&self) -> Result<(), AgentRunError> {
        let u = &self.state.usage;
        let checks = [
            ("input_tokens_limit", self.limits.input_tokens_limit, u.input_tokens, "input_tokens"),
            ("output_tokens_limit", self.limits.output_tokens_limit, u.output_tokens, "output_tokens"),
            ("total_tokens_limit", self.limits.total_tokens_limit, u.total_tokens(), "total_tokens"),
        ];
        for (name, limit, value, counter) in checks {
            if let Some(limit) = limit
                && value > limit
            {
                return Err(AgentRunError::UsageLimitExceeded {
                    message: format!("Exceeded the {name} of {limit} ({counter}={value})"),
                });
            }
        }
        Ok(())
    }

    async fn handle_response(
        &mut self,
        response: ModelResponse,
        resume: Option<Resume>,
    ) -> Result<Option<RunOutput>, AgentRunError> {
        if self.tools.is_none() {
            self.collect_tools().await?;
        }
        if response.tool_calls().next().is_some() {
            // The history has its own copy of the response: the calls move out of this one.
            let calls: Vec<_> = response
                .parts
                .into_iter()
                .filter_map(|p| match p {
                    crate::messages::ModelResponsePart::ToolCall(c) => Some(c),
                    _ => None,
                })
                .collect();
            // The next request goes into the history first (a failure leaves it as it stood),
            // before the contexts that share the history are made.
            let mut request = ModelRequest::new(Vec::new());
            request.run_id = Some(self.state.run_id.clone());
            request.conversation_id = Some(self.state.conversation_id.clone());
            self.state.push(request);
            let ctx = self.context();
            let tools = self.tools.take().unwrap_or_default();
            let outcome = execution::process_tool_calls(
                &self.agent.inner,
                &self.caps,
                &mut self.state,
                &tools,
                ctx,
                &self.limits,
                calls,
                resume,
            )
            .await;
            self.tools = Some(tools);
            return match outcome? {
                StepOutcome::Final(out) => {
                    let tool_name = self.agent.inner.output.output_tool().map(|t| t.name.clone());
                    self.state.emit(|| AgentEvent::FinalResult { tool_name });
                    Ok(Some(out))
                }
                StepOutcome::Deferred(requests) => {
                    if !self.caps.is_empty() {
                        let ctx = self.context();
                        let results = self.caps.handle_deferred(&ctx, &requests).await;
                        if !results.is_empty() {
                            let (response, resume) = self.build_resume(results, Some(&requests))?;
                            self.next = Pending::Response(response, Some(resume));
                            return Ok(None);
                        }
                    }
                    if self.agent.inner.output.allows_deferred() {
                        Ok(Some(RunOutput::Deferred(requests)))
                    } else {
                        Err(crate::agent::output::deferred_not_allowed())
                    }
                }
                StepOutcome::Continue => {
                    self.next = Pending::Request;
                    Ok(None)
                }
            };
        }
        let inner = &self.agent.inner;
        let Some(text) = response.text_content() else {
            return self.output_retry(
                serde_json::Value::String("Please return text or include your response in a tool call.".into()),
                RetryCause::ValidationError,
            );
        };
        let kind = if inner.output.allows_text() {
            OutputKind::Text
        } else if inner.output.output_tool().is_some() {
            OutputKind::StructuredText
        } else {
            return Err(AgentRunError::unexpected("the model answered with text, but text output is not allowed"));
        };
        if kind == OutputKind::Text && self.caps.is_empty() {
            self.state.emit(|| AgentEvent::FinalResult { tool_name: None });
            return Ok(Some(RunOutput::Text(text)));
        }
        let mut ctx = self.context();
        ctx.retry = self.state.output_retries;
        ctx.max_retries = inner.output_retries;
        let info = OutputInfo { kind, call: None, def: inner.output.output_tool() };
        let settled =
            crate::agent::output::settle_output(&inner.output, &self.caps, &ctx, info, serde_json::Value::String(text))
                .await;
        drop(ctx);
        match settled {
            Ok(value) if kind == OutputKind::Text => {
                self.state.emit(|| AgentEvent::FinalResult { tool_name: None });
                Ok(Some(RunOutput::Text(match value {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                })))
            }
            Ok(value) => Ok(Some(RunOutput::Structured(value))),
            Err(ToolError::Validation(errors)) => {
                self.output_retry(serde_json::to_value(&errors).unwrap_or_default(), RetryCause::ValidationError)
            }
            Err(ToolError::Retry(retry)) => self.output_retry(retry.content, RetryCause::ModelRetry),
            Err(other) => Err(crate::agent::output::output_failure(other)),
        }
    }

    fn output_retry(
        &mut self,
        content: serde_json::Value,
        cause: RetryCause,
    ) -> Result<Option<RunOutput>, AgentRunError> {
        let max = self.agent.inner.output_retries;
        if self.state.output_retries >= max {
            return Err(AgentRunError::unexpected(format!("Exceeded maximum output retries ({max})")));
        }
        self.state.output_retries += 1;
        let part = RetryFeedbackPart::new(content, RetryInfo::new(cause, self.state.output_retries, max));
        let mut request = ModelRequest::new(vec![ModelRequestPart::RetryFeedback(part)]);
        request.run_id = Some(self.state.run_id.clone());
        request.conversation_id = Some(self.state.conversation_id.clone());
        self.state.push(request);
        self.next = Pending::Request;
        Ok(None)
    }
}
