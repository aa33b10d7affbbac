//! A run's requests and responses: the first request, resumes with deferred results, the model
//! request through the capabilities, and what a response leads to.

use super::{AgentRun, Pending, Responded};

use crate::agent::AgentEvent;
use crate::run::RunOutput;
use futures::FutureExt;
use futures::future::BoxFuture;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use crate::capability::{DeliveryPoint, ModelRequestContext, OutputInfo, OutputKind};
use crate::deferred::{
    Binding, DeferralId, DeferredKind, DeferredToolRequests, DeferredToolResults, ResumeRefusal, ToolApproval,
};
use crate::error::{AgentRunError, UserError};
use crate::execution::{self, Resolution, Resume, ResumeBinding, StepOutcome, ToolIndex};
use crate::messages::{
    ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, RetryCause, RetryFeedbackPart, RetryInfo,
    SystemPromptPart, UserPromptPart,
};
use crate::model::{ModelRequestParameters, ModelSettings, check_static_tool_choice};
use crate::tool::ToolError;

impl<D: Clone + Send + Sync + 'static, O: Send + 'static> AgentRun<D, O> {
    pub(super) async fn start(&mut self) -> Result<(), AgentRunError> {
        let output_names: Vec<&str> =
            self.agent.inner.step.output.output_tool().map(|t| t.name.as_str()).into_iter().collect();
        check_static_tool_choice(self.settings.as_ref().and_then(|s| s.tool_choice.as_ref()), &output_names)?;
        // A run that starts from the usage so far (`RunBuilder::usage`) may start past a limit.
        self.check_token_limits()?;
        if let Some(results) = self.extras.as_mut().and_then(|e| e.deferred.take()) {
            return self.start_resume(results);
        }
        match (self.state.messages.last(), &self.prompt) {
            // No new prompt: the run goes on from where the history ends.
            (Some(ModelMessage::Request(_)), None) => {
                self.next = Pending::Request;
                return Ok(());
            }
            // Its calls are run; a response without calls is taken again, unless there are
            // instructions to send (then a request without a prompt goes out).
            (Some(ModelMessage::Response(r)), None)
                if r.tool_calls().next().is_some() || !self.has_instructions().await? =>
            {
                let response = Responded::Recorded(self.state.messages.len() - 1);
                // The tools are prepared for the step the run is about to make, as the run starts;
                // the response's calls are then handled in the step the history ended with.
                self.collect_tools_at(self.state.run_step + 1).await?;
                self.next = Pending::Response(response, None);
                return Ok(());
            }
            (Some(ModelMessage::Response(r)), Some(_)) if r.tool_calls().next().is_some() => {
                return Err(AgentRunError::User(UserError::new(
                    "Cannot provide a new user prompt when the message history contains unprocessed tool calls. \
                     Run the agent with this message history and no new prompt to execute the calls, resume it with \
                     `.deferred_tool_results(..)` if they were deferred, or close them out first with \
                     `toolsmith::messages::repair_messages(history, true)`.",
                )));
            }
            _ => {}
        }
        let inner = &self.agent.inner;
        // Sized exactly: a part is 192 bytes, and a run keeps its first request to the end.
        let system = if self.state.messages.is_empty() { inner.system_prompts.len() } else { 0 };
        let mut parts = Vec::with_capacity(system + usize::from(self.prompt.is_some()));
        if self.state.messages.is_empty() {
            parts.extend(inner.system_prompts.iter().map(|p| ModelRequestPart::SystemPrompt(SystemPromptPart::new(p))));
        }
        // The prompt moves into the request: a run keeps no copy of it of its own.
        if let Some(prompt) = self.prompt.take() {
            parts.push(ModelRequestPart::UserPrompt(UserPromptPart::new(prompt)));
        }
        // Even empty: a request without prompt, history or instructions is refused when it is
        // about to be sent.
        let mut request = ModelRequest::new(parts);
        request.run_id = Some(self.run_id.clone());
        request.conversation_id = Some(self.conversation_id.clone());
        self.state.push(request);
        self.next = Pending::Request;
        Ok(())
    }

    /// Whether the next request would carry instructions (the agent's or its capabilities').
    async fn has_instructions(&self) -> Result<bool, AgentRunError> {
        if self.agent.inner.instructions.is_some() {
            return Ok(true);
        }
        if self.caps.is_empty() {
            return Ok(false);
        }
        let ctx = self.context();
        Ok(!self.caps.instructions(&ctx).await?.is_empty())
    }

    /// Settles the deferred calls the history ends with.
    pub(super) fn start_resume(&mut self, results: DeferredToolResults) -> Result<(), AgentRunError> {
        let (response, resume) = self.build_resume(results, None)?;
        self.next = Pending::Response(response, Some(Box::new(resume)));
        Ok(())
    }

    /// How each call of the latest response is settled by `results`. Only calls of that
    /// response that have no result in the history yet can be settled; any other id is refused.
    /// With `pending` (deferred calls being handled inline), calls left without a result are
    /// deferred again.
    pub(super) fn build_resume(
        &self,
        results: DeferredToolResults,
        pending: Option<&DeferredToolRequests>,
    ) -> Result<(Responded, Resume), AgentRunError> {
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
        if response.tool_calls().next().is_none() {
            return Err(user(
                "Tool call results were provided, but the message history does not contain any unprocessed tool calls."
                    .into(),
            ));
        }
        // Results are matched to calls by id: with an id twice, one decision would apply to two
        // calls.
        let calls: Vec<crate::messages::ToolCallPart> = response.tool_calls().cloned().collect();
        let repeated = execution::repeated_ids(&calls);
        if let Some(id) = calls.iter().map(|c| &c.tool_call_id).find(|id| repeated.contains_key(*id)) {
            let refusal = ResumeRefusal::DuplicateCallId { tool_call_id: id.clone(), count: repeated[id] };
            return Err(AgentRunError::User(refusal.into()));
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
                            let refusal = ResumeRefusal::AlreadyAnswered { tool_call_id: id.clone() };
                            return Err(AgentRunError::User(refusal.into()));
                        }
                        resolutions.insert(id.clone(), Resolution::Skip);
                    }
                }
            }
        }
        let call_ids: std::collections::HashSet<&str> =
            response.tool_calls().map(|c| c.tool_call_id.as_str()).collect();
        // Results for ids no call has are refused with the step (its request kept), as missing
        // results are; metadata alone for such an id is refused here.
        let given = || results.approvals.keys().chain(results.calls.keys()).chain(results.metadata.keys());
        let decided = |id: &String| results.approvals.contains_key(id) || results.calls.contains_key(id);
        if results.metadata.keys().any(|id| !call_ids.contains(id.as_str()) && !decided(id)) {
            let given = given().cloned().chain(resolutions.keys().cloned());
            return Err(execution::results_mismatch(response.tool_calls(), given, &self.agent.inner.step));
        }
        let answering: Vec<(String, DeferredKind)> = results
            .approvals
            .keys()
            .map(|id| (id.clone(), DeferredKind::Approval))
            .chain(results.calls.keys().map(|id| (id.clone(), DeferredKind::External)))
            .collect();
        for (id, approval) in results.approvals {
            let r = match approval {
                ToolApproval::Approved { override_args } => {
                    Resolution::Approved { args: override_args, metadata: results.metadata.get(&id).cloned() }
                }
                ToolApproval::Denied { message } => Resolution::Denied(message),
            };
            resolutions.insert(id, r);
        }
        for (id, result) in results.calls {
            resolutions.insert(id, Resolution::External(result));
        }
        let prompt = if pending.is_none() { self.prompt.clone().map(UserPromptPart::new) } else { None };
        // Calls settled inline are answered within the run that deferred them; a resume answers
        // a deferral once.
        let consume = pending.is_none().then(|| execution::Consume {
            store: self.agent.inner.deferral_store.clone(),
            seen: DeferralId::derive(response, answering.iter().map(|(id, kind)| (id.as_str(), Some(*kind)))),
            run_id: self.run_id.clone(),
        });
        let binding = match (pending, results.binding) {
            // A capability settling the run's own deferred calls: they are what it was shown.
            (Some(requests), _) => ResumeBinding::Calls(requests.pending_calls(), None),
            (None, Binding::Calls { calls, id }) => ResumeBinding::Calls(calls, id),
            (None, Binding::TrustHistory) => ResumeBinding::Trusted,
            (None, Binding::None) => ResumeBinding::Recorded(self.agent.inner.deferred_records.clone()),
        };
        let resume = Resume { resolutions, prompt, pending: pending.cloned(), binding, consume };
        Ok((Responded::Recorded(pos), resume))
    }

    pub(super) async fn collect_tools(&mut self) -> Result<(), AgentRunError> {
        self.collect_tools_at(self.state.run_step).await
    }

    /// The tools as prepared for run step `step`.
    async fn collect_tools_at(&mut self, step: u32) -> Result<(), AgentRunError> {
        let mut ctx = self.context();
        ctx.run_step = step;
        let toolsets = self.run_toolsets();
        let prepared = self.extras.as_ref().and_then(|e| e.prepared_in_toolset.as_ref());
        // Made only for a step with toolsets that wait for the first search.
        let reload = || -> crate::execution::Reload<D> {
            let (agent, toolsets, caps) = (self.agent.inner.clone(), toolsets.to_vec(), self.caps.clone());
            let prepared = prepared.cloned();
            Arc::new(move |ctx| {
                let (agent, toolsets, caps, prepared) =
                    (agent.clone(), toolsets.clone(), caps.clone(), prepared.clone());
                Box::pin(async move {
                    let index =
                        ToolIndex::collect(&agent.step, &toolsets, &caps, &ctx, prepared.as_ref(), None).await?;
                    Ok(index.catalogue())
                })
            })
        };
        let index =
            ToolIndex::collect(&self.agent.inner.step, toolsets, &self.caps, &ctx, prepared, Some(&reload)).await?;
        // At the run's start, the toolsets' tools (known only now) are checked as `build()`
        // checks the agent's own: those offered (a deferred tool hidden behind tool search may
        // never be found).
        if self.tools.is_none() && self.caps.is_empty() && !self.agent.inner.step.output.allows_deferred() {
            let mut deferring: Vec<&str> = index.deferring_tools().collect();
            deferring.sort_unstable();
            deferring.dedup();
            if !deferring.is_empty() {
                let e = crate::agent::output::deferring_tools_not_allowed(deferring, "the toolsets' tools");
                return Err(AgentRunError::User(e));
            }
        }
        self.tools = Some(index);
        self.tools_step = step;
        Ok(())
    }

    /// The settings and parameters of the next request: the step's tools prepared, the
    /// instructions and settings through the capabilities, the request limit checked.
    async fn prepare_request(&mut self) -> Result<(Option<Arc<ModelSettings>>, ModelRequestParameters), AgentRunError> {
        // Tools already prepared for this step (a run that took a response of its history again)
        // are not prepared twice.
        if self.tools.is_none() || self.tools_step != self.state.run_step {
            self.collect_tools().await?;
        }
        if let Some(limit) = self.limits.request_limit
            && self.state.usage.requests + 1 > limit
        {
            return Err(AgentRunError::UsageLimitExceeded {
                message: format!(
                    "The next request would exceed the request_limit of {limit}. Consider raising the limit (`UsageLimits::request_limit`)"
                ),
            });
        }
        let inner = &self.agent.inner;
        let ctx = self.context();
        let tools = self.tools.as_ref().map(|t| t.definitions()).unwrap_or_default();
        let mut output_tools: Vec<_> = inner.step.output.output_tool().cloned().into_iter().collect();
        if !output_tools.is_empty() && !self.caps.is_empty() {
            // The hook sees the output retry budget.
            let mut output_ctx = ctx.clone();
            output_ctx.retry = self.state.output_retries;
            output_ctx.max_retries = inner.step.output_retries;
            output_tools = self.caps.prepare_output_tools(&output_ctx, output_tools).await?;
            if let Some(tools) = self.tools.as_mut() {
                tools.output_withdrawn = output_tools.is_empty();
            }
        }
        let mut instructions: Vec<String> = inner.instructions.iter().cloned().collect();
        instructions.extend(self.caps.instructions(&ctx).await?);
        let prompted = inner.step.output.prompted_instructions();
        let instructions = crate::execution::join_instructions(instructions, prompted.as_deref());
        let settings = match self.extras.as_ref().and_then(|e| e.run_settings.as_ref()) {
            // Agent, capabilities, then the run's own: Pydantic AI's layering.
            Some(own) => {
                let agent = self.agent.inner.model_settings.clone();
                // The capabilities see the layers below theirs: the agent's.
                let mut below = ctx.clone();
                below.model_settings = agent.as_deref().cloned();
                let layered = self.caps.model_settings(&below, agent)?;
                Some(Arc::new(match layered {
                    Some(s) => s.merged(own),
                    None => own.clone(),
                }))
            }
            None => self.caps.model_settings(&ctx, self.settings.clone())?,
        };
        // The context shares the history: dropped first, the history changes in place.
        drop(ctx);
        if let Some(last) = self.state.last_request_mut() {
            last.instructions = instructions.clone();
        }
        if let [ModelMessage::Request(only)] = &self.state.messages[..]
            && only.parts.is_empty()
            && instructions.is_none()
        {
            return Err(AgentRunError::User(UserError::new(
                "No message history, user prompt, or instructions provided: give the run a prompt, a message history, or instructions (`.instructions(..)` on the agent)",
            )));
        }
        let mut params = ModelRequestParameters {
            function_tools: tools,
            output_tools,
            allow_text_output: inner.step.output.allows_text()
                || inner.step.output.mode() != crate::agent::OutputMode::Tool,
            output_mode: inner.step.output.mode(),
            output_object: inner.step.output.shared_output_object().cloned(),
            prompted_output_instructions: prompted,
            instructions,
            withheld_tools: self.tools.as_ref().map(|t| t.withheld()).unwrap_or_default(),
            native_search_strategy: self.tools.as_ref().and_then(|t| t.native_search.flatten()),
            native_tools: {
                // Capabilities made for this run may bring native tools of their own.
                let tools = self.caps.native_tools()?;
                crate::native::check_support(&tools, &self.model.info).map_err(AgentRunError::User)?;
                tools
            },
        };
        crate::model::prepare_return_schemas(&mut params, self.model.info.native_tool_return_schemas);
        Ok((settings, params))
    }

    /// Sends the next request; `None` when a capability asked the model to try again (a retry
    /// prompt is then the next request).
    pub(super) async fn request(&mut self) -> Result<Option<Responded>, AgentRunError> {
        self.state.run_step += 1;
        // What the last step's code spent on models of its own counts before this request.
        self.state.absorb_spent();
        self.check_token_limits()?;
        if !self.caps.is_empty() {
            Box::pin(self.deliver_pending(DeliveryPoint::BeforeRequest)).await?;
        }
        // The preparation (tools, instructions, settings: the hooks that shape the request) is
        // boxed: what the run holds inline while it waits on the model is the request alone.
        let (settings, params) = Box::pin(self.prepare_request()).await?;
        {
            let step = self.state.run_step;
            self.state.emit(|| AgentEvent::ModelRequest { step });
        }
        // The context is made for the model request hooks alone, boxed: a run waiting on its
        // model keeps no copy of it inline.
        // They see the request's settings as resolved, capabilities' included.
        let ctx = self.caps.hooks(crate::capability::HookStage::ModelRequest).then(|| {
            let mut ctx = self.context();
            ctx.model_settings = settings.as_deref().cloned();
            Box::new(ctx)
        });
        // The model's answer, kept for a retry asked after it (the response stays in the history).
        let answered: std::sync::Mutex<Option<Box<ModelResponse>>> = std::sync::Mutex::new(None);
        // With `stream_output`, the context the output hooks see while the output streams.
        let partial_ctx = (self.state.partial_output
            && self.state.events.is_some()
            && self.model.choice.streaming.is_some())
        .then(|| {
            let mut c = self.context();
            c.retry = self.state.output_retries;
            c.max_retries = self.agent.inner.step.output_retries;
            Box::new(c)
        });
        let outcome = {
            let run = &*self;
            let (answered, partial_ctx) = (&answered, partial_ctx.as_deref());
            // The request as the model gets it. The settings are shared (a run without
            // capabilities sends the agent's or its own as they are).
            let send = move |messages: Arc<Vec<ModelMessage>>,
                             settings: Option<Arc<ModelSettings>>,
                             params: ModelRequestParameters|
                  -> BoxFuture<'_, Result<ModelResponse, AgentRunError>> {
                Box::pin(run.send(messages, settings, params, answered, partial_ctx))
            };
            let messages = run.state.messages.clone();
            match &ctx {
                Some(ctx) => {
                    // The hooks get the request to change: its settings their own copy.
                    let core = |req: ModelRequestContext| send(req.messages, req.settings.map(Arc::new), req.params);
                    let settings = settings.map(Arc::unwrap_or_clone);
                    let request = ModelRequestContext { messages, settings, params };
                    run.caps.model_request(0, ctx, request, &core).await
                }
                None => send(messages, settings, params).await,
            }
        };
        // The contexts share the history: dropped first, the history grows in place.
        drop(partial_ctx);
        drop(ctx);
        let response = match outcome {
            Ok(response) => response,
            Err(AgentRunError::Retry(retry)) => {
                let answer = answered.into_inner().unwrap_or_else(|p| p.into_inner());
                if let Some(response) = answer {
                    self.record_response(*response)?;
                }
                let problem = format!(
                    "a capability refused the model's last answer: {}",
                    execution::describe_refusal(&retry.content)
                );
                self.output_retry(retry.content, RetryCause::ModelRetry, problem)?;
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        self.record_response(response).map(Some)
    }

    /// One request to the model (or its stream), its panics caught; the answer kept in
    /// `answered` when a capability may refuse it.
    // Not an async fn, whose arguments would take their place in its state twice.
    #[allow(clippy::manual_async_fn, reason = "an async fn holds its arguments twice")]
    fn send<'f>(
        &'f self,
        messages: Arc<Vec<ModelMessage>>,
        settings: Option<Arc<ModelSettings>>,
        params: ModelRequestParameters,
        answered: &'f std::sync::Mutex<Option<Box<ModelResponse>>>,
        partial_ctx: Option<&'f crate::context::RunContext<D>>,
    ) -> impl Future<Output = Result<ModelResponse, AgentRunError>> + Send + 'f {
        async move {
            // The model is sent the history made sendable, the last response's calls included (a
            // call that has no result by now never will), results in call order.
            // The run's own history (no capability replaced it) is checked from where the last
            // request left off.
            let sent = if Arc::ptr_eq(&messages, &self.state.messages) {
                crate::messages::sendable_known(&messages, &self.state.sound)
            } else {
                crate::messages::sendable_history(&messages)
            };
            // The model's code (its request, its stream) runs with its panics caught, as its
            // future is made (a model may answer from `request_boxed` at once) and as it is
            // polled; the event handler the stream feeds catches its own.
            let panicked = |p| AgentRunError::ModelPanicked {
                model: self.model.info.name.to_string(),
                message: crate::error::panic_message(p),
            };
            let attempt = std::panic::catch_unwind(AssertUnwindSafe(|| {
                match (&self.state.events, &self.model.choice.streaming) {
                    (Some(sink), Some(m)) => self.stream(m, sink, &sent, settings.as_deref(), &params, partial_ctx),
                    _ => self.model.choice.model.request_boxed(&sent, settings.as_deref(), &params),
                }
            }))
            .map_err(panicked)?;
            let mut result = match &self.state.events {
                // The provider's retries of this request are events of the run.
                Some(sink) => {
                    crate::run::with_provider_retries(sink.clone(), AssertUnwindSafe(attempt).catch_unwind()).await
                }
                None => AssertUnwindSafe(attempt).catch_unwind().await,
            }
            .map_err(panicked)?;
            // Values nested too deep for the history (a model built in memory can make them) are
            // cut before anything copies or walks them.
            if let Ok(r) = &mut result {
                crate::messages::bound_response(r);
            }
            if !self.caps.is_empty()
                && let Ok(r) = &result
            {
                *answered.lock().unwrap_or_else(|p| p.into_inner()) = Some(Box::new(r.clone()));
            }
            result.map_err(|e| match e.kind {
                crate::model::ModelErrorKind::User => AgentRunError::User(UserError::new(e.message)),
                _ => AgentRunError::Model(execution::explain_forced_output(e, &params)),
            })
        }
    }

    /// A streamed request: its events to the run's handler (with the partial outputs, under
    /// `stream_output`), its final response returned. Boxed on its own: the state of a run
    /// waiting on a plain request stays small.
    fn stream<'f>(
        &'f self,
        model: &'f Arc<dyn crate::model::DynStreamingModel>,
        sink: &'f crate::run::EventSink,
        sent: &'f [ModelMessage],
        settings: Option<&'f ModelSettings>,
        params: &'f ModelRequestParameters,
        partial_ctx: Option<&'f crate::context::RunContext<D>>,
    ) -> BoxFuture<'f, Result<ModelResponse, crate::model::ModelError>> {
        Box::pin(async move {
            use futures::StreamExt;
            let mut stream = model.request_stream_boxed(sent, settings, params).await?;
            let mut partial = partial_ctx
                .map(|c| super::partial::PartialOutput::new(&self.agent.inner.step.output, &self.caps, c.clone()));
            while let Some(event) = stream.next().await {
                match bounded(event?) {
                    crate::model::ModelStreamEvent::Final(r) => return Ok(r),
                    e => {
                        let output = match partial.as_mut() {
                            Some(p) => p.observe(&e).await,
                            None => None,
                        };
                        sink(AgentEvent::Stream(e));
                        if let Some(output) = output {
                            sink(AgentEvent::PartialOutput { output });
                        }
                    }
                }
            }
            Err(crate::model::ModelError::new(
                crate::model::ModelErrorKind::UnexpectedResponse,
                "the model's stream ended before its final response; the connection may have been cut, try again",
            ))
        })
    }

    /// Counts a response's usage (checking the token limits) and adds it to the history.
    pub(super) fn record_response(&mut self, mut response: ModelResponse) -> Result<Responded, AgentRunError> {
        // A request counts once it is answered: one that failed committed no response.
        self.state.usage.requests += 1;
        let usage = response.usage.clone();
        self.state.usage.input_tokens += usage.input_tokens;
        self.state.usage.output_tokens += usage.output_tokens;
        self.state.usage.cache_read_tokens += usage.cache_read_tokens;
        self.state.usage.cache_write_tokens += usage.cache_write_tokens;
        self.check_token_limits()?;
        response.run_id = Some(self.run_id.clone());
        response.conversation_id = Some(self.conversation_id.clone());
        if response.timestamp.is_none() {
            response.timestamp = Some(crate::durable::now());
        }
        self.state.emit(|| AgentEvent::ModelResponse { response: response.clone() });
        self.state.push(response);
        Ok(Responded::Recorded(self.state.messages.len() - 1))
    }

    pub(super) fn check_token_limits(&self) -> Result<(), AgentRunError> {
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

    pub(super) async fn handle_response(
        &mut self,
        response: Responded,
        resume: Option<Resume>,
    ) -> Result<Option<RunOutput>, AgentRunError> {
        if self.response_of(&response)?.tool_calls().next().is_some() {
            // The calls are handled with the tools prepared for this step.
            if self.tools.is_none() || self.tools_step != self.state.run_step {
                self.collect_tools().await?;
            }
            // The calls of the history's response are handled where they are; a response given
            // in its place gives up its calls.
            let calls = match response {
                Responded::Recorded(at) => execution::CallSource::History(at),
                Responded::Given(response) => execution::CallSource::Given(
                    response
                        .parts
                        .into_iter()
                        .filter_map(|p| match p {
                            crate::messages::ModelResponsePart::ToolCall(c) => Some(c),
                            _ => None,
                        })
                        .collect(),
                ),
            };
            // The next request goes into the history first (a failure leaves it as it stood),
            // before the contexts that share the history are made.
            let mut request = ModelRequest::new(Vec::new());
            request.run_id = Some(self.run_id.clone());
            request.conversation_id = Some(self.conversation_id.clone());
            self.state.push(request);
            let ctx = self.context();
            let tools = self.tools.take().unwrap_or_default();
            let with_prompt = resume.as_ref().is_some_and(|r| r.prompt.is_some());
            // Deferred calls are offered to the capabilities once: a step that settles what they
            // answered ends with whatever is left, without asking them again.
            let offered = resume.as_ref().is_some_and(|r| r.pending.is_some());
            let outcome = execution::process_tool_calls(
                &self.agent.inner.step,
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
            // The calls tools made to other tools in the step count as the run's tool calls.
            if let Some(nested) = &self.nested {
                self.state.usage.tool_calls += nested.take_counted();
            }
            return match outcome? {
                StepOutcome::Final(out) => {
                    let tool_name = self.agent.inner.step.output.output_tool().map(|t| t.name.clone());
                    self.state.emit(|| AgentEvent::FinalResult { tool_name });
                    Ok(Some(out))
                }
                StepOutcome::Deferred(requests) => {
                    if !self.caps.is_empty() && !offered {
                        let ctx = self.context();
                        let results = self.caps.handle_deferred(&ctx, &requests).await?;
                        if !results.is_empty() {
                            self.state.pop_empty_request();
                            let (response, resume) = self.build_resume(results, Some(&requests))?;
                            self.next = Pending::Response(response, Some(Box::new(resume)));
                            return Ok(None);
                        }
                    }
                    if self.agent.inner.step.output.allows_deferred() {
                        // The request keeps what answers calls, not the new prompt: the run ends
                        // before the model is asked anything.
                        if with_prompt {
                            self.state.drop_trailing_prompt();
                        }
                        self.state.pop_empty_request();
                        let mut requests = requests;
                        // The deferral's identity: what a resume consumes, so that the calls
                        // are answered once.
                        if let Some(ModelMessage::Response(r)) =
                            self.state.messages.iter().rfind(|m| matches!(m, ModelMessage::Response(_)))
                        {
                            let ids = requests
                                .approvals
                                .iter()
                                .map(|c| (c.tool_call_id.as_str(), Some(DeferredKind::Approval)))
                                .chain(
                                    requests
                                        .calls
                                        .iter()
                                        .map(|c| (c.tool_call_id.as_str(), Some(DeferredKind::External))),
                                );
                            requests.set_id(DeferralId::derive(r, ids));
                        }
                        // Remembered, so that results made by hand for this history can be
                        // checked against the calls as they were pending.
                        self.agent.inner.deferred_records.record(&requests);
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
        let response = self.response_of(&response)?;
        // Empty text is no text: it is neither the output nor parsed as one.
        let Some(text) = response.text_content().filter(|t| !t.is_empty()) else {
            let problem = empty_answer(response);
            let has_tools = self.tools.as_ref().is_none_or(|t| !t.is_empty());
            let feedback = no_output_feedback(&inner.step.output, has_tools);
            return self.output_retry(serde_json::Value::String(feedback), RetryCause::NoOutput, problem);
        };
        let kind = if inner.step.output.allows_text() {
            OutputKind::Text
        } else if inner.step.output.is_structured() {
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
        ctx.max_retries = inner.step.output_retries;
        let info = OutputInfo { kind, call: None, def: inner.step.output.output_tool() };
        let settled =
            execution::settle_output(&inner.step.output, &self.caps, &ctx, info, serde_json::Value::String(text)).await;
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
                // Retry feedback keeps every error's input (a tool's retried return shares it).
                let content = serde_json::to_value(&errors).unwrap_or_default();
                let problem = format!(
                    "the model's last answer was text that is not valid output: {}",
                    execution::describe_refusal(&content)
                );
                self.output_retry(content, RetryCause::ValidationError, problem)
            }
            Err(ToolError::Retry(retry)) => {
                let problem =
                    format!("the model's last answer was refused: {}", execution::describe_refusal(&retry.content));
                self.output_retry(retry.content, RetryCause::ModelRetry, problem)
            }
            Err(other) => Err(execution::output_failure(&self.caps, other)),
        }
    }

    /// Answers a refused output with retry feedback, or ends the run when the output retries
    /// have run out (saying what was wrong: `problem`).
    pub(super) fn output_retry(
        &mut self,
        content: serde_json::Value,
        cause: RetryCause,
        problem: String,
    ) -> Result<Option<RunOutput>, AgentRunError> {
        let max = self.agent.inner.step.output_retries;
        if self.state.output_retries >= max {
            return Err(execution::output_budget_exceeded(max, &problem));
        }
        self.state.output_retries += 1;
        let part = RetryFeedbackPart::new(content, RetryInfo::new(cause, self.state.output_retries, max));
        let mut request = ModelRequest::new(vec![ModelRequestPart::RetryFeedback(part)]);
        request.run_id = Some(self.run_id.clone());
        request.conversation_id = Some(self.conversation_id.clone());
        self.state.push(request);
        self.next = Pending::Request;
        Ok(None)
    }
}

/// The feedback for a response with nothing usable as output: what it could have been instead
/// (text, when the output takes text; the output tool; or, without one, any tool).
fn no_output_feedback(output: &crate::run::OutputSpec, has_tools: bool) -> String {
    let mut alternatives: Vec<&str> = Vec::with_capacity(2);
    // Structured output also takes text: JSON text is parsed as the output.
    if output.allows_text() || output.is_structured() {
        alternatives.push("return text");
    }
    if output.output_tool().is_some() {
        alternatives.push("include your response in a tool call");
    } else if has_tools {
        alternatives.push("call a tool");
    }
    format!("Please {}.", alternatives.join(" or "))
}

/// What a response without text or tool calls held, for the error that ends the run.
fn empty_answer(response: &ModelResponse) -> String {
    if response.parts.is_empty() {
        return "the model's last answer was empty (no text and no tool call)".into();
    }
    let kinds: Vec<&str> = response
        .parts
        .iter()
        .map(|p| match p {
            crate::messages::ModelResponsePart::Text(_) => "text",
            crate::messages::ModelResponsePart::ToolCall(_) => "tool call",
            crate::messages::ModelResponsePart::Thinking(_) => "thinking",
            crate::messages::ModelResponsePart::NativeToolCall(_) => "native tool call",
            crate::messages::ModelResponsePart::NativeToolReturn(_) => "native tool result",
            crate::messages::ModelResponsePart::File(_) => "file",
        })
        .collect();
    format!("the model's last answer had no text and no tool call, only: {}", kinds.join(", "))
}

/// A stream event with the values it carries cut to the history's depth (see
/// [`crate::messages::bound_response`]), before the run's handler or the output hooks see it.
fn bounded(event: crate::model::ModelStreamEvent) -> crate::model::ModelStreamEvent {
    use crate::model::ModelStreamEvent;
    match event {
        ModelStreamEvent::Final(mut r) => {
            crate::messages::bound_response(&mut r);
            ModelStreamEvent::Final(r)
        }
        ModelStreamEvent::ToolCallEnd { index, mut call } => {
            crate::messages::bound_call(&mut call);
            ModelStreamEvent::ToolCallEnd { index, call }
        }
        e => e,
    }
}
