//! One step: how a response's tool calls become the next request.

use super::plan::{check_call_limit, defer_calls, follow_strategy, mark_kinds, plan_calls, refuse_duplicate_ids};
use super::*;
use std::borrow::Cow;

/// How one call of a response is to be handled this step (`'h`: the history the calls are
/// borrowed from).
pub(super) enum Plan<'h, D> {
    /// An output tool call.
    Output(usize, Call<'h>),
    /// A call to a function tool (or an approved call).
    Function(Ready<'h, D>),
    /// A call the step answers with a retry without running anything (unknown or hidden tool).
    Refused(Refusal<'h>),
    /// A refused call to a hidden external tool (or one needing approval): answered with the
    /// step's deferred calls.
    Withheld(Refusal<'h>),
    /// A result supplied from outside (resumed deferred calls: a denial or an external result).
    /// Boxed: the usual plan, a function call, is a fraction of its size.
    Settled(Box<(usize, ModelRequestPart, Option<Vec<UserContent>>)>),
    /// A call to an external tool: validated (through the hooks; its arguments are only parsed)
    /// after the step's executions, then it waits for a result from outside.
    External(Ready<'h, D>),
    /// A call that needs approval: validated after the step's executions, then it waits.
    Unapproved(Ready<'h, D>),
}

/// A call answered with a retry without running anything, counted (when `charged`) against
/// `max` retries.
pub(super) struct Refusal<'h> {
    pub(super) index: usize,
    pub(super) call: Call<'h>,
    pub(super) message: String,
    pub(super) cause: RetryCause,
    pub(super) charged: bool,
    pub(super) max: u32,
}

/// A validated batch: the parts made so far and the calls to run.
pub(super) struct Validated<'h, D> {
    pub(super) out: Vec<(usize, ModelRequestPart)>,
    pub(super) to_run: Vec<Ready<'h, D>>,
}

/// The working state of one step.
pub(super) struct Step<'a, D> {
    pub(super) inner: &'a StepConfig<D>,
    pub(super) caps: &'a Capabilities<D>,
    pub(super) tools: &'a ToolIndex<D>,
    pub(super) counts: Arc<HashMap<String, u32>>,
    pub(super) book: RetryBook,
    /// The parts of the next request with their call's index, in the order the strategy
    /// produces them.
    pub(super) parts: Vec<(usize, ModelRequestPart)>,
    /// Content sent with tool returns, one user prompt per call, in call order.
    pub(super) content: Vec<(usize, Vec<UserContent>)>,
    /// Whether that content follows every part of the step (`exhaustive`) rather than the
    /// returns of its batch.
    pub(super) content_at_end: bool,
    pub(super) deferred: DeferredToolRequests,
    pub(super) kinded: FxHashMap<String, &'static str>,
    /// Whether a function tool was retried this step (a retry wins over a final result).
    pub(super) function_retried: bool,
    /// The winning output, and the index of its call.
    pub(super) final_output: Option<(Value, usize)>,
    /// What was wrong with the last output call refused after the output retries ran out.
    pub(super) output_problem: Option<String>,
}

impl<'a, D: Clone + Send + Sync + 'static> Step<'a, D> {
    /// Answers one output tool call: its arguments validated and processed through the
    /// capabilities' output hooks.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn output(
        &mut self,
        state: &mut RunState,
        ctx: &RunContext<D>,
        index: usize,
        call: &ToolCallPart,
        strategy: EndStrategy,
        absorbed: &mut Vec<usize>,
    ) -> Result<(), AgentRunError> {
        if self.final_output.is_some() && strategy != EndStrategy::Exhaustive {
            self.parts.push((index, success_part(call, Value::String(OUTPUT_NOT_USED.into()))));
            return Ok(());
        }
        let max = self.inner.output_retries;
        let checked = if self.caps.is_empty() {
            self.inner.output.validate(&call.args).map_err(ToolError::Validation)
        } else {
            // Output hooks see the output retry budget.
            let mut ctx = ctx.clone();
            ctx.tool_name = Some(call.tool_name.clone());
            ctx.tool_call_id = Some(call.tool_call_id.clone());
            ctx.retry = state.output_retries;
            ctx.max_retries = max;
            let info = OutputInfo { kind: OutputKind::Tool, call: Some(call), def: self.inner.output.output_tool() };
            settle_output(&self.inner.output, self.caps, &ctx, info, call.args.clone()).await
        };
        match checked {
            Ok(v) => {
                // A valid output resets its tool's retry count, used or not (like a tool's success).
                if !self.book.succeeded.contains(&call.tool_name) {
                    self.book.succeeded.insert(call.tool_name.clone());
                }
                if self.final_output.is_some() {
                    self.parts.push((index, success_part(call, Value::String(OUTPUT_NOT_FINAL.into()))));
                } else {
                    self.final_output = Some((v, index));
                    self.parts.push((index, success_part(call, Value::String(FINAL_PROCESSED.into()))));
                }
            }
            Err(error) => {
                let (content, cause) = match error {
                    ToolError::Validation(errors) => {
                        (crate::validation::errors_for_model(&errors), RetryCause::ValidationError)
                    }
                    ToolError::Retry(retry) => (retry.content, RetryCause::ModelRetry),
                    other => return Err(output_failure(self.caps, other)),
                };
                let problem =
                    format!("the model's last `{}` call was refused: {}", call.tool_name, describe_refusal(&content));
                // The output tool's own retries are counted like a tool's (per step); each
                // refused output call also uses one of the run's output retries, which the
                // answers without output draw on.
                let Ok(info) = self.book.fail(&self.counts, &call.tool_name, max, cause) else {
                    if strategy == EndStrategy::Exhaustive {
                        self.output_problem = Some(problem);
                        // Absorbed if another output of the step is valid; decided at the end.
                        absorbed.push(index);
                        self.parts.push((index, success_part(call, Value::String(OUTPUT_FAILED.into()))));
                        return Ok(());
                    }
                    return Err(output_budget_exceeded(max, &problem));
                };
                state.output_retries += 1;
                self.parts.push((index, retried_part(call, content, info)));
            }
        }
        Ok(())
    }

    /// Validates, then runs, a batch of calls; their parts follow in call order.
    pub(super) async fn flush(&mut self, state: &mut RunState, batch: Vec<Plan<'_, D>>) -> Result<(), AgentRunError> {
        let validated = self.validate_batch(state, batch).await?;
        self.run_batch(state, validated).await
    }

    /// Validates a batch of calls (a refused call is answered at once): the parts made so far and
    /// the calls to run.
    pub(super) async fn validate_batch<'h>(
        &mut self,
        state: &mut RunState,
        batch: Vec<Plan<'h, D>>,
    ) -> Result<Validated<'h, D>, AgentRunError> {
        let mut out: Vec<(usize, ModelRequestPart)> = Vec::with_capacity(batch.len());
        let mut to_run: Vec<Ready<'h, D>> = Vec::with_capacity(batch.len());
        let mut failure = None;
        for plan in batch {
            if let Err(e) = self.validate_plan(state, plan, &mut out, &mut to_run).await {
                failure = Some(e);
                break;
            }
        }
        // The batch's answers are given when its calls run: a validation that ends the run
        // leaves none of them.
        if let Some(e) = failure {
            return Err(e);
        }
        Ok(Validated { out, to_run })
    }

    pub(super) async fn validate_plan<'h>(
        &mut self,
        state: &mut RunState,
        plan: Plan<'h, D>,
        out: &mut Vec<(usize, ModelRequestPart)>,
        to_run: &mut Vec<Ready<'h, D>>,
    ) -> Result<(), AgentRunError> {
        match plan {
            Plan::Settled(settled) => {
                let (index, part, content) = *settled;
                if let Some(c) = content {
                    self.content.push((index, c));
                }
                out.push((index, part));
            }
            Plan::Refused(Refusal { index, call, message, cause, charged, max }) => {
                // A function tool not discovered yet is still a function tool: its retry wins
                // over a final result (an unknown tool's does not).
                if cause == RetryCause::UnavailableTool {
                    self.function_retried = true;
                }
                let info = if charged {
                    self.book.fail(&self.counts, &call.tool_name, max, cause)?
                } else {
                    RetryInfo::uncounted(cause)
                };
                out.push((index, retried_part(&call, Value::String(message), info)));
            }
            Plan::Function(mut r) => {
                let validated = validate_call(self.caps, &r).await;
                state.emit(|| AgentEvent::FunctionToolCall { call: (*r.call).clone(), args_valid: validated.is_ok() });
                match validated {
                    Ok(args) => {
                        if let Some(kind) = self.tools.tool_kind(&r.call.tool_name) {
                            self.kinded.insert(r.call.tool_call_id.clone(), kind);
                            state.mark_call_kind(&r.call.tool_call_id, kind);
                        }
                        r.args = args.map(Box::new);
                        to_run.push(r);
                    }
                    Err(e) => self.settle(e, &r, out)?,
                }
            }
            Plan::Output(..) | Plan::External(..) | Plan::Unapproved(_) | Plan::Withheld(_) => {}
        }
        Ok(())
    }

    /// Runs validated calls in segments split at sequential tools; their parts (with those of
    /// the validation) follow in call order.
    pub(super) async fn run_batch(
        &mut self,
        state: &mut RunState,
        validated: Validated<'_, D>,
    ) -> Result<(), AgentRunError> {
        let Validated { mut out, to_run } = validated;
        // Execute in segments split at sequential tools (the barriers, which run alone).
        let sequential = self.inner.parallel_mode == ParallelMode::Sequential;
        let mut barriers: Vec<usize> = Vec::new();
        let mut segments: Vec<Vec<Ready<'_, D>>> = Vec::new();
        if !sequential && !to_run.iter().any(|r| r.tool.def.sequential) {
            // The usual batch: one segment, the calls where they are.
            if !to_run.is_empty() {
                segments.push(to_run);
            }
        } else {
            let mut segment: Vec<Ready<'_, D>> = Vec::with_capacity(to_run.len());
            for r in to_run {
                if r.tool.def.sequential || sequential {
                    barriers.push(r.index);
                    if !segment.is_empty() {
                        segments.push(std::mem::take(&mut segment));
                    }
                    segments.push(vec![r]);
                } else {
                    segment.push(r);
                }
            }
            if !segment.is_empty() {
                segments.push(segment);
            }
        }
        // Once a call has run, its part stays even if a later call of the step ends the run: a
        // resumed conversation must know what was done (every call of a segment has finished
        // when its results are read, so none is dropped).
        let mut failure: Option<AgentRunError> = None;
        let mut failed_at: Option<usize> = None;
        let mut executed: Vec<usize> = Vec::new();
        for mut segment in segments {
            if failure.is_some() {
                break;
            }
            executed.extend(segment.iter().map(|r| r.index));
            let calls = segment.iter_mut().map(|r| {
                // The validated copy is taken out; the call is read-only from here on.
                let copy = r.validated();
                let r: &Ready<'_, D> = r;
                let args = match copy {
                    Some(args) => Cow::Owned(args),
                    None => Cow::Borrowed(r.raw_args()),
                };
                start_call(self.inner, self.caps, r, args)
            });
            let results = join_in_order(calls.collect()).await;
            // The segment's results are stamped with the time they were all in (one clock read
            // per segment, not per call).
            let stamp = crate::durable::now();
            for (r, (result, ran_ok)) in segment.iter().zip(results) {
                if ran_ok {
                    state.usage.tool_calls += 1;
                }
                match result {
                    Ok(output) => {
                        if !self.book.succeeded.contains(&r.call.tool_name) {
                            self.book.succeeded.insert(r.call.tool_name.clone());
                        }
                        let mut part = match output {
                            ToolOutput::Value(v) => {
                                ToolReturnPart::unstamped(&r.call.tool_name, v, &r.call.tool_call_id)
                            }
                            ToolOutput::Return(ret) => {
                                let (p, content) = return_part(&r.call, ret);
                                if let Some(content) = content {
                                    self.content.push((r.index, content));
                                }
                                p
                            }
                        };
                        part.timestamp = Some(stamp);
                        out.push((r.index, ModelRequestPart::ToolReturn(part)));
                    }
                    Err(e) => {
                        if let Err(error) = self.settle(e, r, &mut out) {
                            if failure.is_none() {
                                failed_at = Some(r.index);
                            }
                            failure.get_or_insert(error);
                        }
                    }
                }
            }
        }
        // The answers of calls in segments after the one that ended the run (a validation retry
        // made before they would have run) are not given: those calls were never reached (calls
        // of its parallel segment did run, or answered at once: theirs stay).
        if let Some(at) = failed_at {
            // The calls whose validation failed stand in segments too (a barrier if their tool is
            // sequential): looked up only now, off the usual path.
            barriers.extend(out.iter().filter_map(|(i, p)| {
                let name = match p {
                    ModelRequestPart::ToolReturn(t) => Some(t.tool_name.as_str()),
                    ModelRequestPart::RetryPrompt(r) => r.tool_name.as_deref(),
                    _ => None,
                };
                (sequential || name.and_then(|n| self.tools.get(n)).is_some_and(|t| t.def.sequential)).then_some(*i)
            }));
            let segment_end = if barriers.contains(&at) {
                at
            } else {
                barriers.iter().copied().filter(|&b| b > at).min().map_or(usize::MAX, |b| b - 1)
            };
            executed.sort_unstable();
            out.retain(|(i, _)| *i <= segment_end || executed.binary_search(i).is_ok());
        }
        sort_by_index(&mut out);
        let last = out.last().map(|(i, _)| *i);
        if self.parts.is_empty() {
            self.parts = out;
        } else {
            self.parts.extend(out);
        }
        // The content the batch's tools sent follows the batch's returns (before the parts of
        // later calls); under `exhaustive` all of it follows every return of the step.
        if !self.content_at_end
            && let Some(last) = last
        {
            let mut content = std::mem::take(&mut self.content);
            sort_by_index(&mut content);
            self.parts
                .extend(content.into_iter().map(|(_, c)| (last, ModelRequestPart::UserPrompt(UserPromptPart::new(c)))));
        }
        match failure {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// A failed validation or execution: a retry part, a deferral, or the error that ends the run.
    pub(super) fn settle(
        &mut self,
        error: ToolError,
        r: &Ready<'_, D>,
        out: &mut Vec<(usize, ModelRequestPart)>,
    ) -> Result<(), AgentRunError> {
        // A capability's panic in a tool hook ends the run as the capability's error.
        if let ToolError::Panicked { message } = &error
            && let Some(e) = self.caps.hook_panic(message)
        {
            return Err(e);
        }
        if matches!(error, ToolError::Retry(_) | ToolError::Validation(_)) && r.tool.def.kind != ToolKind::Unapproved {
            self.function_retried = true;
        }
        settle_error(error, r, &self.counts, &mut self.book, out, &mut self.deferred)
    }
}

/// Handles the tool calls of one response; fills the next request (pushed at once, so that a
/// failure leaves it in the history as it stood).
///
/// The end strategy decides the order: `early` answers the output calls first and runs the
/// function calls only when none of them gave the final result; `graceful` walks the calls in
/// the model's order, running the function calls met before each output call first, and
/// never runs an output call after the final result; `exhaustive` also validates every output
/// call. Under `graceful` and `exhaustive`, a function tool's retry wins over a final result
/// from the same response: the model is asked again.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn process_tool_calls<D: Clone + Send + Sync + 'static>(
    inner: &StepConfig<D>,
    caps: &Capabilities<D>,
    state: &mut RunState,
    tools: &ToolIndex<D>,
    ctx: RunContext<D>,
    limits: &UsageLimits,
    source: CallSource,
    resume: Option<Resume>,
) -> Result<StepOutcome, AgentRunError> {
    // The calls are borrowed from the history, which is let go before the step's request is
    // filled in: the request is then filled in place, the history not copied.
    let history = matches!(source, CallSource::History(_)).then(|| Arc::clone(&state.messages));
    let calls: Vec<Call<'_>> = match source {
        CallSource::Given(calls) => calls.into_iter().map(Call::owned).collect(),
        CallSource::History(at) => match history.as_deref().and_then(|h| h.get(at)) {
            Some(crate::messages::ModelMessage::Response(r)) => r.tool_calls().map(Call::Borrowed).collect(),
            _ => return Err(AgentRunError::unexpected("the response whose calls the run handles left the history")),
        },
    };
    let mut record = None;
    let outcome = run_step(inner, caps, state, tools, &ctx, limits, calls, resume, &mut record).await;
    // The contexts share the history: with the last of them gone, the request is filled in
    // without a copy.
    drop(ctx);
    drop(history);
    if let Some(Record { parts, content, kinded, bridged_ids, prompt }) = record {
        record_parts(state, parts, content, &kinded, &bridged_ids, prompt);
    }
    outcome
}

/// Where the calls of a step come from.
pub(crate) enum CallSource {
    /// The response at this index of the run's history.
    History(usize),
    /// Calls of a response that is not in the history (a node hook's).
    Given(Vec<ToolCallPart>),
}

/// What a step puts in its request (the last message of the history), once it has let go of
/// the history.
struct Record {
    parts: Vec<(usize, ModelRequestPart)>,
    content: Vec<(usize, Vec<UserContent>)>,
    kinded: FxHashMap<String, &'static str>,
    bridged_ids: HashSet<String>,
    prompt: Option<UserPromptPart>,
}

/// The step itself: what it answers goes to `record`.
#[allow(clippy::too_many_arguments)]
/// One step, as phases: the calls' kinds marked and bridge calls unwrapped; what a resume
/// settles; duplicate ids refused; a plan for every call ([`plan_calls`]); the tool call limit
/// ([`check_call_limit`]); the resume's last checks and its deferral consumed; the end strategy
/// that validates and runs the calls ([`follow_strategy`]); the calls that wait
/// ([`defer_calls`]); the step's record and outcome.
async fn run_step<'h, D: Clone + Send + Sync + 'static>(
    inner: &StepConfig<D>,
    caps: &Capabilities<D>,
    state: &mut RunState,
    tools: &'h ToolIndex<D>,
    ctx: &'h RunContext<D>,
    limits: &UsageLimits,
    calls: Vec<Call<'h>>,
    resume: Option<Resume>,
    record: &mut Option<Record>,
) -> Result<StepOutcome, AgentRunError> {
    tools.prepare_lookups(calls.len());
    let kinded = mark_kinds(tools, ctx, state, &calls);
    let mut calls = calls;
    let bridged_ids = tools.unwrap_bridge_calls(&mut calls);
    let mut step = Step {
        inner,
        caps,
        tools,
        counts: state.retries.clone(),
        book: RetryBook { failed: FxHashSet::default(), succeeded: FxHashSet::default() },
        parts: Vec::with_capacity(calls.len()),
        content: Vec::new(),
        content_at_end: false,
        deferred: DeferredToolRequests::default(),
        kinded,
        function_retried: false,
        final_output: None,
        output_problem: None,
    };

    let Settled { resolutions, prompt: resume_prompt, unverified, consume, trusted, external } =
        resume::settle(resume, &calls, inner, &mut step.deferred)?;

    let output_tool = inner.output.output_tool().filter(|_| !tools.output_withdrawn).map(|t| t.name.clone());
    if resolutions.is_none() {
        refuse_duplicate_ids(&calls, output_tool.as_deref())?;
    }
    let plans = plan_calls(
        inner,
        tools,
        ctx,
        state,
        &step.counts,
        calls,
        resolutions.as_ref(),
        trusted,
        &external,
        output_tool.as_deref(),
    )?;
    check_call_limit(&plans, state, limits)?;

    // Results bound to nothing, for pending calls the agent has no record of: refused before
    // anything runs (after the checks above, whose messages say more, and the usage limit: nothing runs either way).
    if let Some(ids) = unverified {
        return Err(AgentRunError::User(ResumeRefusal::Unverified { tool_call_ids: ids }.into()));
    }
    // The last check: the deferral is answered once, and this is that once.
    if let Some(consume) = consume {
        // Boxed: the resume path only, the state of every other step stays as it was.
        Box::pin(consume.consume()).await?;
    }

    let strategy = if resolutions.is_some() { EndStrategy::Graceful } else { inner.end_strategy };
    step.content_at_end = strategy == EndStrategy::Exhaustive;
    let (deferred_kinds, absorbed, outcome) = follow_strategy(&mut step, state, ctx, plans, strategy).await;
    if strategy != EndStrategy::Early {
        sort_by_index(&mut step.parts);
    }
    if let Err(e) = outcome {
        // What the step produced before the error (the results of the calls that ran, with the
        // content they sent) stays in the history.
        let Step { parts, content, kinded, .. } = step;
        *record = Some(Record { parts, content, kinded, bridged_ids, prompt: None });
        return Err(e);
    }
    if !absorbed.is_empty() && step.final_output.is_none() {
        let Step { parts, content, kinded, output_problem, .. } = step;
        let problem = output_problem.unwrap_or_else(|| "no output call of the model's last answer was valid".into());
        let parts = parts.into_iter().filter(|(i, _)| !absorbed.contains(i)).collect();
        *record = Some(Record { parts, content, kinded, bridged_ids, prompt: None });
        return Err(output_budget_exceeded(inner.output_retries, &problem));
    }

    // A function tool's retry wins over a final result from the same response.
    if strategy != EndStrategy::Early
        && step.function_retried
        && let Some((_, at)) = step.final_output.take()
        && let Some((_, ModelRequestPart::ToolReturn(t))) = step.parts.iter_mut().find(|(i, _)| *i == at)
    {
        t.content = Value::String(RETRY_WINS.into());
    }

    if let Err(error) = defer_calls(&mut step, state, caps, deferred_kinds).await {
        let Step { parts, content, kinded, .. } = step;
        *record = Some(Record { parts, content, kinded, bridged_ids, prompt: None });
        return Err(error);
    }

    let Step { book, parts, content, deferred, kinded, final_output, .. } = step;
    book.apply(&mut state.retries);
    // A final result ends the run before the model would read the new prompt: it is not kept.
    let prompt = if final_output.is_some() { None } else { resume_prompt };
    *record = Some(Record { parts, content, kinded, bridged_ids, prompt });

    if let Some((v, _)) = final_output {
        return Ok(StepOutcome::Final(RunOutput::Structured(v)));
    }
    if !deferred.is_empty() {
        // The step's request stays, even empty: the caller drops an empty one when the
        // deferred calls end the run or are settled inline.
        return Ok(StepOutcome::Deferred(deferred));
    }
    Ok(StepOutcome::Continue)
}

/// Fills the step's request (the last message) with its parts in order, then the content the
/// tools sent and the resumed run's prompt; reports each tool return as an event.
fn record_parts(
    state: &mut RunState,
    parts: Vec<(usize, ModelRequestPart)>,
    mut content: Vec<(usize, Vec<UserContent>)>,
    kinded: &FxHashMap<String, &'static str>,
    bridged_ids: &HashSet<String>,
    prompt: Option<UserPromptPart>,
) {
    let mut parts: Vec<ModelRequestPart> = parts.into_iter().map(|(_, p)| p).collect();
    for part in parts.iter_mut() {
        if let ModelRequestPart::ToolReturn(t) = part {
            if let Some(kind) = kinded.get(&t.tool_call_id) {
                t.tool_kind = Some((*kind).to_string());
            }
            // A call made through the bridge is answered as the `tool_call` it was.
            if bridged_ids.contains(&t.tool_call_id) {
                t.tool_name = bridge::TOOL_CALL.to_string();
            }
        }
    }
    sort_by_index(&mut content);
    parts.extend(content.into_iter().map(|(_, c)| ModelRequestPart::UserPrompt(UserPromptPart::new(c))));
    parts.extend(prompt.map(ModelRequestPart::UserPrompt));
    if state.events.is_some() {
        for p in &parts {
            if let ModelRequestPart::ToolReturn(t) = p {
                state.emit(|| AgentEvent::FunctionToolResult { result: t.clone() });
            }
        }
    }
    if let Some(req) = state.last_request_mut() {
        req.parts = parts;
    }
}

/// The ids used by more than one of `calls`, in the order each is first seen again.
pub(super) fn duplicate_ids<'c>(calls: impl Iterator<Item = &'c ToolCallPart>) -> Vec<&'c str> {
    let (low, high) = calls.size_hint();
    let mut seen = FxHashSet::with_capacity_and_hasher(high.unwrap_or(low), Default::default());
    let mut duplicates = Vec::new();
    for call in calls {
        let id = call.tool_call_id.as_str();
        if !seen.insert(id) && !duplicates.contains(&id) {
            duplicates.push(id);
        }
    }
    duplicates
}

pub(crate) fn repeated_ids(calls: &[ToolCallPart]) -> FxHashMap<String, usize> {
    let mut counts: FxHashMap<&str, usize> = FxHashMap::default();
    for c in calls {
        *counts.entry(c.tool_call_id.as_str()).or_default() += 1;
    }
    counts.into_iter().filter(|(_, n)| *n > 1).map(|(id, n)| (id.to_string(), n)).collect()
}
