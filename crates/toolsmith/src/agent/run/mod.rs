//! One run of an agent: a state machine stepped by [`AgentRun::next`], driven to the end by
//! awaiting a [`RunBuilder`].

mod builder;
mod deliver;
mod output_stream;
mod partial;
mod request;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use crate::agent::{Agent, AgentInner, EventStream};
use crate::run::{RunOutput, RunState};
use crate::toolset::DynToolset;
use futures::FutureExt;
use futures::future::BoxFuture;

use crate::capability::{AgentNode, Capabilities, NodeResult};
use crate::context::RunContext;
use crate::deferred::DeferredToolResults;
use crate::error::{AgentRunError, UserError};
use crate::execution::{Resume, ToolIndex};
use crate::messages::{ModelMessage, ModelRequestPart, ModelResponse, UserPromptContent};
use crate::model::ModelSettings;
use crate::usage::{RunUsage, UsageLimits};

pub use builder::{RunBuilder, RunRecord, RunResult};
pub use output_stream::OutputStream;

enum Pending {
    Start,
    Request,
    Response(Responded, Option<Box<Resume>>),
    Done,
}

/// The response whose calls the run handles next.
enum Responded {
    /// The history's message at this index: its calls are handled where they are, uncopied.
    Recorded(usize),
    /// A response a node hook gave in its place.
    Given(Box<ModelResponse>),
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
    /// The model of this run (the agent's, the run's or an override's) and its information.
    model: Arc<crate::agent::run_model::RunModel>,
    deps: D,
    prompt: Option<UserPromptContent>,
    /// The agent's settings (shared) or the run's merged with them.
    settings: Option<Arc<ModelSettings>>,
    /// The run's limits (the agent's, shared, unless the run sets its own).
    limits: Arc<UsageLimits>,
    pub(crate) state: RunState,
    next: Pending,
    tools: Option<ToolIndex<D>>,
    /// The run step the tools were prepared for.
    tools_step: u32,
    /// Shared copies of what every context carries.
    run_id: Arc<str>,
    conversation_id: Arc<str>,
    prompt_text: Option<Arc<str>>,
    /// The capabilities of this run (each one's `for_run` instance).
    caps: Capabilities<D>,
    /// The path for calls tools make to other tools, in every context (made when the run's
    /// capabilities are known).
    nested: Option<Arc<crate::execution::NestedCalls<D>>>,
    /// Whether the run added capabilities of its own to the agent's.
    run_capabilities: bool,
    /// Whether the run has started (capabilities instanced, toolsets entered, `before_run`).
    begun: bool,
    /// Whether the run's toolsets were entered (and are to be exited at its end).
    toolsets_entered: bool,
    /// What only some runs have (metadata, deferred results, ...), boxed together.
    extras: Option<Box<Extras<D>>>,
}

/// The parts of a run that most runs do not have, in one box: a run without them holds a
/// pointer.
struct Extras<D> {
    metadata: Option<serde_json::Value>,
    deferred: Option<DeferredToolResults>,
    /// The output of a run stepped to its end with `next`.
    finished: Option<RunOutput>,
    /// The toolsets of this run, when its capabilities' `for_run` instances bring their own.
    toolsets: Option<Vec<Arc<dyn DynToolset<D>>>>,
    /// The run's events through the capabilities' `wrap_event_stream`, one stream a node.
    node_events: Option<NodeEvents>,
    /// The run's own model settings, for a run with capabilities (layered after theirs).
    run_settings: Option<ModelSettings>,
    /// Set when the run's toolset applies the capabilities' `prepare_tools` itself (under their
    /// `wrapper_toolset`): where a failure of theirs waits.
    prepared_in_toolset: Option<crate::execution::PrepareFailure>,
}

/// The run's own event handler, behind the capabilities' `wrap_event_stream`, and the task
/// delivering the current node's events to it.
struct NodeEvents {
    runtime: tokio::runtime::Handle,
    handler: Option<crate::run::EventSink>,
    drain: Option<tokio::task::JoinHandle<()>>,
}

impl<D> Default for Extras<D> {
    fn default() -> Self {
        Extras {
            metadata: None,
            deferred: None,
            finished: None,
            toolsets: None,
            node_events: None,
            run_settings: None,
            prepared_in_toolset: None,
        }
    }
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
            model: (*self.model.info).clone(),
            usage: self.state.usage.clone(),
            prompt: self.prompt_text.clone(),
            messages: self.state.messages.clone(),
            retries: self.state.retries.clone(),
            tool_call_id: None,
            tool_name: None,
            retry: 0,
            max_retries: inner.step.retries,
            run_step: self.state.run_step,
            tool_call_approved: false,
            tool_call_metadata: None,
            run_id: self.run_id.clone(),
            conversation_id: self.conversation_id.clone(),
            metadata: self.extras.as_ref().and_then(|e| e.metadata.clone()),
            model_settings: self.settings.as_deref().cloned(),
            partial_output: false,
            spent: self.state.spent.clone(),
            nested: self.nested.clone().map(|n| n as Arc<dyn std::any::Any + Send + Sync>),
        }
    }

    /// A run's output converted to the agent's output type (applied where the run is driven: a
    /// `drive` future of its own would add a layer to the state of every waiting run).
    fn converted(&self, output: Result<RunOutput, AgentRunError>) -> Result<O, AgentRunError> {
        output.and_then(|output| convert(&self.agent, output))
    }

    /// The run to its end through the capabilities' `wrap_run`, with the run hooks around it.
    async fn drive_output(&mut self) -> Result<RunOutput, AgentRunError> {
        // The run's start and end are boxed (once per run): a run in flight holds the state of
        // its steps alone.
        // Each result goes into the boxed finish in the statement that has it: a temporary or
        // binding still alive while the finish is awaited would take its own place in the state.
        {
            let failed_start = match Box::pin(self.begin()).await {
                Err(e) => Some(Box::pin(self.finish(Err(e)))),
                Ok(()) => None,
            };
            if let Some(finish) = failed_start {
                return finish.await;
            }
        }
        let finish = if self.caps.is_empty() {
            let result = self.advance_to_end().await;
            Box::pin(self.finish(result))
        } else {
            let result = Box::pin(self.wrapped_run()).await;
            Box::pin(self.finish(result))
        };
        finish.await
    }

    /// The run to its end inside the capabilities' `wrap_run` (boxed by its caller: a run
    /// without capabilities holds none of its state).
    async fn wrapped_run(&mut self) -> Result<RunOutput, AgentRunError> {
        let caps = self.caps.clone();
        let ctx = self.context();
        let cell = tokio::sync::Mutex::new(&mut *self);
        let core = || -> BoxFuture<'_, Result<RunOutput, AgentRunError>> {
            Box::pin(async {
                let mut run = cell.lock().await;
                run.advance_to_end().await
            })
        };
        caps.run(0, &ctx, &core).await
    }

    async fn advance_to_end(&mut self) -> Result<RunOutput, AgentRunError> {
        // `advance` written out (an `async fn` of its own would be one more layer in the state of
        // every waiting run); `advance_node` is no layer.
        loop {
            let advanced = self.advance_node().await;
            if let Some(e) = self.state.handler_panicked() {
                return Err(e);
            }
            if let Some(output) = advanced? {
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
            let output = self.finish(result).await?;
            self.extras().finished = Some(output);
            return Ok(Node::End);
        }
        Ok(match &self.next {
            Pending::Response(r, _) => Node::ModelRequest { response: self.response_of(r)?.clone() },
            Pending::Request => match self.state.messages.last() {
                Some(ModelMessage::Request(r)) if self.state.run_step > 0 => Node::CallTools { parts: r.parts.clone() },
                _ => Node::UserPrompt,
            },
            _ => Node::End,
        })
    }

    /// The output of a run that reached [`Node::End`].
    pub fn into_result(mut self) -> Result<RunResult<O>, AgentRunError> {
        let out = self.extras.as_mut().and_then(|e| e.finished.take()).ok_or_else(|| {
            AgentRunError::User(UserError::new("the run has not ended yet: call `next()` until it returns Node::End"))
        })?;
        let output = convert(&self.agent, out)?;
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
        self.state.spent = Some(crate::context::UsageSink::default());
        // The capabilities' calls catch their own panics; this catches the toolsets'.
        match AssertUnwindSafe(self.begin_inner()).catch_unwind().await {
            Ok(r) => r,
            Err(p) => Err(panicked("the start of the run (entering its toolsets)", p)),
        }
    }

    async fn begin_inner(&mut self) -> Result<(), AgentRunError> {
        let ctx = self.context();
        let (caps, fresh) = self.caps.for_run(&ctx)?;
        self.caps = caps;
        self.nested = Some(Arc::new(crate::execution::NestedCalls::new(self.caps.clone(), self.agent.inner.clone())));
        if fresh || self.run_capabilities {
            let inner = &self.agent.inner;
            let mut toolsets = inner.toolsets[..inner.capability_toolsets_from].to_vec();
            for ts in self.caps.toolsets()? {
                crate::toolset::Toolset::check(&ts)?;
                toolsets.push(Arc::new(ts));
            }
            self.extras().toolsets = Some(toolsets);
        }
        if !self.caps.is_empty() {
            let combined = crate::toolset::BoxedToolset::new(crate::toolset::CombinedToolset::from_dyn(
                self.run_toolsets().to_vec(),
            ));
            // A wrapper wraps the toolset `prepare_tools` has already prepared (it neither lists
            // nor runs a tool that `prepare_tools` removed).
            let failure = crate::execution::PrepareFailure::default();
            let prepares = self.caps.has_prepare_tools()?;
            let base = if prepares {
                let prepared = crate::execution::CapabilityPrepared::new(combined, self.caps.clone(), failure.clone());
                crate::toolset::BoxedToolset::new(prepared)
            } else {
                combined
            };
            if let Some(wrapped) = self.caps.wrap_toolset(base)? {
                self.extras().toolsets = Some(vec![wrapped.0]);
                if prepares {
                    self.extras().prepared_in_toolset = Some(failure);
                }
            }
        }
        if self.caps.wraps_event_stream()? {
            let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
                AgentRunError::User(UserError::new(
                    "a capability wraps the event stream, which needs a Tokio runtime: run the agent inside one (or with `run_sync`)",
                ))
            })?;
            let handler = self.state.events.take();
            self.extras().node_events = Some(NodeEvents { runtime, handler, drain: None });
        }
        let toolsets = self.run_toolsets().to_vec();
        for (entered, ts) in toolsets.iter().enumerate() {
            if let Err(e) = ts.enter_boxed().await {
                for ts in toolsets[..entered].iter().rev() {
                    ts.exit_boxed().await;
                }
                self.toolsets_entered = false;
                return Err(e.into());
            }
        }
        self.toolsets_entered = true;
        self.caps.before_run(&ctx).await
    }

    /// The end of a run: `after_run` on success, `on_run_error` on failure (which may recover
    /// with an output), then the toolsets exited and the last events delivered.
    async fn finish(&mut self, result: Result<RunOutput, AgentRunError>) -> Result<RunOutput, AgentRunError> {
        self.next = Pending::Done;
        self.state.absorb_spent();
        let ctx = self.context();
        let outcome = match result {
            Ok(output) => match self.caps.after_run(&ctx, output).await {
                Ok(output) => Ok(output),
                Err(e) => self.caps.on_run_error(&ctx, e).await,
            },
            Err(e) => self.caps.on_run_error(&ctx, e).await,
        };
        let mut outcome = outcome;
        if std::mem::take(&mut self.toolsets_entered) {
            for ts in self.run_toolsets().iter().rev() {
                let exit = crate::toolset::exiting(self.run_id.clone(), ts.exit_boxed());
                if let Err(p) = AssertUnwindSafe(exit).catch_unwind().await
                    && outcome.is_ok()
                {
                    outcome = Err(panicked("a toolset's exit at the end of the run", p));
                }
            }
        }
        self.end_node_events().await;
        // Calls a failed run leaves unanswered are remembered as the agent left them: results
        // given for them later are checked against them, as for calls a run ended deferred with.
        // Only a response the model gave in this run: a given history's calls were never checked.
        if outcome.is_err() {
            self.agent.inner.deferred_records.record_unanswered(&self.state.messages, self.state.new_start);
        }
        // A panic of the event stream (a capability's processing, or the event handler) is
        // reported even when the run itself succeeded: events were lost.
        if outcome.is_ok()
            && let Some(e) = self.caps.stream_panic().or_else(|| self.state.handler_panicked())
        {
            outcome = Err(e);
        }
        outcome
    }

    fn run_toolsets(&self) -> &[Arc<dyn DynToolset<D>>] {
        self.extras.as_ref().and_then(|e| e.toolsets.as_deref()).unwrap_or(&self.agent.inner.toolsets)
    }

    /// The run's extras, made when first needed.
    fn extras(&mut self) -> &mut Extras<D> {
        self.extras.get_or_insert_with(Default::default)
    }

    /// Opens the node's event stream: the events the node emits pass through the capabilities'
    /// `wrap_event_stream` (called for each node, as the reference calls its handlers with
    /// each node's stream) on their way to the run's handler, in a task of the run's runtime.
    fn start_node_events(&mut self, ctx: &RunContext<D>) -> Result<(), AgentRunError> {
        use futures::StreamExt;
        let Some(node) = self.extras.as_mut().and_then(|e| e.node_events.as_mut()) else { return Ok(()) };
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let mut events = self.caps.wrap_event_stream(ctx, EventStream { rx }.boxed())?;
        let handler = node.handler.clone();
        node.drain = Some(node.runtime.spawn(async move {
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

    /// Closes the node's event stream and waits until it has delivered its last event.
    async fn end_node_events(&mut self) {
        if let Some(drain) = self.extras.as_mut().and_then(|e| e.node_events.as_mut()).and_then(|n| n.drain.take()) {
            self.state.events = None;
            let _ = drain.await;
        }
    }

    /// One node of the run through the capabilities' node hooks; `Some` when the run has its
    /// final output. A panic of the event handler during the node ends the run.
    async fn advance(&mut self) -> Result<Option<RunOutput>, AgentRunError> {
        let advanced = self.advance_node().await;
        match self.state.handler_panicked() {
            Some(e) => Err(e),
            None => advanced,
        }
    }

    /// The node through the node hooks when a capability has them (boxed), else the transition
    /// itself. Not an async fn: no layer of its own in the state of a waiting run.
    fn advance_node(&mut self) -> impl Future<Output = Result<Option<RunOutput>, AgentRunError>> + Send + '_ {
        // The UserPrompt node emits nothing: its own stream would be empty (the reference makes
        // streams for ModelRequest and CallTools nodes).
        if !matches!(self.next, Pending::Start) && self.extras.as_ref().is_some_and(|e| e.node_events.is_some()) {
            futures::future::Either::Left(Box::pin(self.advance_node_with_events()))
        } else {
            futures::future::Either::Right(self.advance_node_plain())
        }
    }

    /// [`AgentRun::advance_node`] with the node's own event stream around it. A panic while the
    /// stream was processed ends the run: the node's events were lost.
    async fn advance_node_with_events(&mut self) -> Result<Option<RunOutput>, AgentRunError> {
        let mut ctx = self.context();
        // A ModelRequest node's stream belongs to the step its request opens.
        if matches!(self.next, Pending::Request) {
            ctx.run_step = ctx.run_step.saturating_add(1);
        }
        self.start_node_events(&ctx)?;
        let advanced = self.advance_node_plain().await;
        self.end_node_events().await;
        match self.caps.stream_panic() {
            Some(e) => Err(e),
            None => advanced,
        }
    }

    fn advance_node_plain(&mut self) -> impl Future<Output = Result<Option<RunOutput>, AgentRunError>> + Send + '_ {
        if self.caps.hooks(crate::capability::HookStage::Node) {
            futures::future::Either::Left(Box::pin(self.advance_hooked_node()))
        } else {
            futures::future::Either::Right(self.guarded_transition())
        }
    }

    /// [`AgentRun::advance_node`] through the capabilities' node hooks.
    async fn advance_hooked_node(&mut self) -> Result<Option<RunOutput>, AgentRunError> {
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
        if let Some(output) = self.guarded_transition().await? {
            return Ok(NodeResult::End(output));
        }
        Ok(NodeResult::Next(self.pending_node()?))
    }

    /// The response a [`Responded`] stands for.
    fn response_of<'r>(&'r self, responded: &'r Responded) -> Result<&'r ModelResponse, AgentRunError> {
        match responded {
            Responded::Recorded(at) => match self.state.messages.get(*at) {
                Some(ModelMessage::Response(r)) => Ok(r),
                _ => Err(AgentRunError::unexpected("the response the run was to handle left the history")),
            },
            Responded::Given(r) => Ok(&**r),
        }
    }

    /// The node the run does next, as the node hooks see it.
    fn pending_node(&self) -> Result<AgentNode, AgentRunError> {
        Ok(match &self.next {
            Pending::Start => AgentNode::UserPrompt,
            Pending::Request => AgentNode::ModelRequest,
            Pending::Response(r, _) => AgentNode::CallTools { response: self.response_of(r)?.clone() },
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
            // The response handed back unchanged is still the history's own.
            (AgentNode::CallTools { response }, Pending::Response(before, resume)) => {
                let same = self.response_of(&before).is_ok_and(|r| *r == response);
                Pending::Response(if same { before } else { Responded::Given(Box::new(response)) }, resume)
            }
            (AgentNode::CallTools { response }, _) => Pending::Response(Responded::Given(Box::new(response)), None),
        };
        Ok(())
    }

    /// [`AgentRun::transition`] with a panic of code it calls that has no guard of its own
    /// (the capabilities, the model and the tools have theirs: a toolset, a search strategy,
    /// ...) caught as the run's error.
    fn guarded_transition(&mut self) -> impl Future<Output = Result<Option<RunOutput>, AgentRunError>> + Send + '_ {
        let during = match &self.next {
            Pending::Start => "the run's UserPrompt node",
            Pending::Request => "the run's ModelRequest node",
            Pending::Response(..) => "the run's CallTools node",
            Pending::Done => "the run",
        };
        // Not an async fn: no layer of its own in the state of a waiting run.
        AssertUnwindSafe(self.transition()).catch_unwind().map(move |r| match r {
            Ok(r) => r,
            Err(p) => Err(panicked(during, p)),
        })
    }

    async fn transition(&mut self) -> Result<Option<RunOutput>, AgentRunError> {
        // The request first, apart: the run waits on its model most of its life, and then holds
        // nothing of the node it left (a `match` on the taken node would keep it to the end).
        if matches!(self.next, Pending::Request) {
            self.next = Pending::Done;
            if let Some(response) = self.request().await? {
                self.next = Pending::Response(response, None);
            }
            return Ok(None);
        }
        // The start and the handling of a response are boxed: a waiting run holds only the
        // request's state, not the largest node's.
        match std::mem::replace(&mut self.next, Pending::Done) {
            Pending::Start => {
                Box::pin(self.start()).await?;
                Ok(None)
            }
            Pending::Response(response, resume) => {
                let output = Box::pin(self.handle_response(response, resume.map(|r| *r))).await?;
                // Content a capability still has to deliver (a background tool's result) is
                // sent in one more request instead of ending the run; a run that pauses for
                // deferred calls is not held up.
                if output.as_ref().is_some_and(|o| !matches!(o, RunOutput::Deferred(_)))
                    && !self.caps.is_empty()
                    && Box::pin(self.deliver_pending(crate::capability::DeliveryPoint::RunEnd)).await?
                {
                    self.next = Pending::Request;
                    return Ok(None);
                }
                Ok(output)
            }
            // (A request was sent above.)
            Pending::Request | Pending::Done => Err(AgentRunError::User(UserError::new("the run has already ended"))),
        }
    }
}

/// The run's error for a panic caught `during` something without a guard of its own.
fn panicked(during: &str, payload: Box<dyn std::any::Any + Send>) -> AgentRunError {
    AgentRunError::Panicked { during: during.into(), message: crate::error::panic_message(payload) }
}

/// The run's output converted to the agent's output type (deserialised, for a typed output),
/// with a panic of that conversion caught.
fn convert<D, O>(agent: &Agent<D, O>, output: RunOutput) -> Result<O, AgentRunError> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| (agent.convert)(output))) {
        Ok(r) => r,
        Err(p) => Err(panicked("the conversion of the run's output to the agent's output type", p)),
    }
}
