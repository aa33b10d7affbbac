//! The per-step tool manager: which tools are visible, and how a response's tool calls become
//! the next request (validation, retry budgets, timeouts, concurrent segments split at
//! sequential barriers, usage limits, the end strategy, deferrals).

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use serde_json::Value;

use crate::agent::output::FinalOutput;
use crate::agent::{AgentInner, EndStrategy, ParallelMode};
use crate::context::RunContext;
use crate::deferred::{DeferredToolRequests, ExternalResult};
use crate::error::{AgentRunError, UserError};
use crate::messages::{
    ModelRequest, ModelRequestPart, RetryCause, RetryInfo, ToolCallPart, ToolOutcome, ToolReturnPart, UserContent,
    UserPromptPart,
};
use crate::tool::{Invocation, ToolDefinition, ToolError, ToolKind, ToolOutput, ToolResult};
use crate::toolset::ToolsetTool;
use crate::usage::UsageLimits;

const FINAL_PROCESSED: &str = "Final result processed.";
const OUTPUT_NOT_USED: &str = "Output tool not used - a final result was already processed.";
const TOOL_NOT_EXECUTED: &str = "Tool not executed - a final result was already processed.";

/// The tools visible in one step, by name.
pub(crate) struct ToolIndex<D> {
    tools: Vec<ToolsetTool<D>>,
    by_name: HashMap<String, usize>,
}

impl<D> Default for ToolIndex<D> {
    fn default() -> Self {
        ToolIndex { tools: Vec::new(), by_name: HashMap::new() }
    }
}

impl<D: Clone + Send + Sync + 'static> ToolIndex<D> {
    pub(crate) async fn collect(inner: &AgentInner<D>, ctx: &RunContext<D>) -> Result<Self, AgentRunError> {
        let mut index = ToolIndex::default();
        for toolset in &inner.toolsets {
            let tools = toolset.get_tools_boxed(ctx).await?;
            for tool in tools {
                if let Some(&existing) = index.by_name.get(&tool.def.name) {
                    return Err(AgentRunError::User(UserError::new(format!(
                        "{} defines a tool whose name conflicts with existing tool from {}: '{}'. Rename the tool or wrap the toolset in a `PrefixedToolset` to avoid name conflicts.",
                        tool.toolset_label, index.tools[existing].toolset_label, tool.def.name
                    ))));
                }
                index.by_name.insert(tool.def.name.clone(), index.tools.len());
                index.tools.push(tool);
            }
        }
        Ok(index)
    }
}

impl<D> ToolIndex<D> {
    /// The definitions shown to the model.
    pub(crate) fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools.iter().map(|t| t.def.clone()).collect()
    }

    fn get(&self, name: &str) -> Option<&ToolsetTool<D>> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    fn available_names(&self) -> String {
        self.tools.iter().map(|t| format!("'{}'", t.def.name)).collect::<Vec<_>>().join(", ")
    }
}

/// What a step ended with.
pub(crate) enum StepOutcome {
    /// A final output was found.
    Final(FinalOutput),
    /// Calls are waiting for approval or external execution.
    Deferred(DeferredToolRequests),
    /// The next request is ready.
    Continue,
}

/// Formats seconds as Python prints a float (`0.05`, `5.0`).
pub(crate) fn py_float(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e16 { format!("{v:.1}") } else { format!("{v}") }
}

fn exceeded(tool: &str, max: u32) -> AgentRunError {
    AgentRunError::unexpected(format!(
        "Tool '{tool}' exceeded max retries count of {max}. Consider raising the retry limit, or see the docs on tool retries: https://pydantic.dev/docs/ai/tools-toolsets/tools-advanced/#tool-retries"
    ))
}

/// Per-step retry bookkeeping: failures of one tool in one step charge one attempt; a success
/// resets the count; a tool not called keeps it.
struct RetryBook {
    failed: HashSet<String>,
    succeeded: HashSet<String>,
}

impl RetryBook {
    /// Records a failure and returns the retry info for its part, or the exhaustion error.
    fn fail(
        &mut self,
        counts: &HashMap<String, u32>,
        tool: &str,
        max: u32,
        cause: RetryCause,
    ) -> Result<RetryInfo, AgentRunError> {
        let current = counts.get(tool).copied().unwrap_or(0);
        if current >= max {
            return Err(exceeded(tool, max));
        }
        self.failed.insert(tool.to_string());
        Ok(RetryInfo::new(cause, current + 1, max))
    }

    fn apply(self, counts: &mut HashMap<String, u32>) {
        for name in &self.failed {
            *counts.entry(name.clone()).or_insert(0) += 1;
        }
        for name in self.succeeded {
            if !self.failed.contains(&name) {
                counts.remove(&name);
            }
        }
    }
}

fn retried_part(call: &ToolCallPart, content: Value, info: RetryInfo) -> ModelRequestPart {
    ModelRequestPart::ToolReturn(ToolReturnPart::retried(&call.tool_name, content, &call.tool_call_id, info))
}

fn success_part(call: &ToolCallPart, content: Value) -> ModelRequestPart {
    ModelRequestPart::ToolReturn(ToolReturnPart::success(&call.tool_name, content, &call.tool_call_id))
}

/// A call that passed validation and is ready to run.
struct Ready<D> {
    index: usize,
    call: ToolCallPart,
    tool: ToolsetTool<D>,
    args: Value,
    retry: u32,
    max_retries: u32,
    timeout: Option<f64>,
    approved: bool,
    metadata: Option<Value>,
}

/// How one executed call ended.
enum Done {
    Output(ToolOutput),
    Error(ToolError),
    Timeout(f64),
    Panic(String),
}

/// How a call of a resumed response is settled.
#[derive(Debug, Clone)]
pub(crate) enum Resolution {
    /// The call already has its result in the history.
    Skip,
    /// Approved: validate and execute, with other arguments if given.
    Approved { args: Option<Value>, metadata: Option<Value> },
    /// Denied: the model is told why.
    Denied(String),
    /// Executed outside the agent.
    External(ExternalResult),
}

/// The calls of a resumed response and how each is settled, plus the ids results were given for.
pub(crate) struct Resume {
    pub(crate) resolutions: HashMap<String, Resolution>,
    pub(crate) provided: Vec<String>,
    pub(crate) prompt: Option<UserPromptPart>,
}

fn py_set(ids: &[String]) -> String {
    if ids.is_empty() {
        return "set()".into();
    }
    let mut ids: Vec<&String> = ids.iter().collect();
    ids.sort();
    ids.dedup();
    format!("{{{}}}", ids.iter().map(|i| format!("'{i}'")).collect::<Vec<_>>().join(", "))
}

/// Handles the tool calls of one response; fills the next request (pushed at once, so that a
/// failure leaves it in the history as it stood).
pub(crate) async fn process_tool_calls<D: Clone + Send + Sync + 'static>(
    inner: &AgentInner<D>,
    state: &mut crate::agent::run::RunState,
    tools: &ToolIndex<D>,
    ctx: &RunContext<D>,
    limits: &UsageLimits,
    calls: Vec<ToolCallPart>,
    resume: Option<Resume>,
) -> Result<StepOutcome, AgentRunError> {
    let mut request = ModelRequest::new(Vec::new());
    request.run_id = Some(state.run_id.clone());
    request.conversation_id = Some(state.conversation_id.clone());
    state.push(request);

    let (resolutions, resume_prompt) = match resume {
        Some(r) => {
            let expected: Vec<String> = calls
                .iter()
                .filter(|c| !matches!(r.resolutions.get(&c.tool_call_id), Some(Resolution::Skip)))
                .map(|c| c.tool_call_id.clone())
                .collect();
            if expected.iter().any(|id| !r.resolutions.contains_key(id)) {
                return Err(AgentRunError::User(UserError::new(format!(
                    "Tool call results need to be provided for all deferred tool calls. Expected: {}, got: {}",
                    py_set(&expected),
                    py_set(&r.provided)
                ))));
            }
            (Some(r.resolutions), r.prompt)
        }
        None => (None, None),
    };

    let counts = state.retries.clone();
    let mut book = RetryBook { failed: HashSet::new(), succeeded: HashSet::new() };
    let mut parts: Vec<(usize, ModelRequestPart)> = Vec::new();
    let mut extra_content: Vec<UserContent> = Vec::new();
    let mut skipped: Vec<ModelRequestPart> = Vec::new();
    let mut final_output: Option<Value> = None;
    let output_tool = inner.output.output_tool().map(|t| t.name.clone());

    // Output tool calls first.
    for (index, call) in calls.iter().enumerate() {
        if output_tool.as_deref() != Some(call.tool_name.as_str()) || resolutions.is_some() {
            continue;
        }
        if final_output.is_some() {
            parts.push((index, success_part(call, Value::String(OUTPUT_NOT_USED.into()))));
            continue;
        }
        match inner.output.validate(&call.args) {
            Ok(v) => {
                final_output = Some(v);
                parts.push((index, success_part(call, Value::String(FINAL_PROCESSED.into()))));
            }
            Err(errors) => {
                let max = inner.output_retries;
                if state.output_retries >= max {
                    return Err(AgentRunError::unexpected(format!(
                        "Exceeded maximum retries ({max}) for output validation"
                    )));
                }
                state.output_retries += 1;
                let info = book.fail(&counts, &call.tool_name, max, RetryCause::ValidationError)?;
                parts.push((index, retried_part(call, serde_json::to_value(&errors).unwrap_or_default(), info)));
            }
        }
    }

    // Function and unknown tool calls: validate in call order.
    let mut ready: Vec<Ready<D>> = Vec::new();
    let mut unapproved: Vec<Ready<D>> = Vec::new();
    let mut external: Vec<ToolCallPart> = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        let mut approved = false;
        let mut call_metadata = None;
        let mut args_override = None;
        if let Some(res) = &resolutions {
            match res.get(&call.tool_call_id) {
                None | Some(Resolution::Skip) => continue,
                Some(Resolution::Denied(message)) => {
                    let mut p =
                        ToolReturnPart::success(&call.tool_name, Value::String(message.clone()), &call.tool_call_id);
                    p.outcome = ToolOutcome::Denied;
                    parts.push((index, ModelRequestPart::ToolReturn(p)));
                    continue;
                }
                Some(Resolution::External(result)) => {
                    let part = match result {
                        ExternalResult::Value(v) => {
                            ToolReturnPart::success(&call.tool_name, v.clone(), &call.tool_call_id)
                        }
                        ExternalResult::Return(ret) => {
                            let mut p =
                                ToolReturnPart::success(&call.tool_name, ret.return_value.clone(), &call.tool_call_id);
                            p.metadata = ret.metadata.clone();
                            if let Some(content) = &ret.content {
                                extra_content.extend(content.iter().cloned());
                            }
                            p
                        }
                        ExternalResult::Retry(r) => ToolReturnPart::retried(
                            &call.tool_name,
                            r.content.clone(),
                            &call.tool_call_id,
                            RetryInfo::uncounted(RetryCause::ModelRetry),
                        ),
                    };
                    parts.push((index, ModelRequestPart::ToolReturn(part)));
                    continue;
                }
                Some(Resolution::Approved { args, metadata }) => {
                    approved = true;
                    call_metadata = metadata.clone();
                    args_override = args.clone();
                }
            }
        }
        if output_tool.as_deref() == Some(call.tool_name.as_str()) {
            continue;
        }
        let Some(tool) = tools.get(&call.tool_name) else {
            let available = tools.available_names();
            let message = if available.is_empty() {
                format!("Unknown tool name: '{}'. No tools available.", call.tool_name)
            } else {
                format!("Unknown tool name: '{}'. Available tools: {available}", call.tool_name)
            };
            let info = book.fail(&counts, &call.tool_name, inner.retries, RetryCause::UnknownTool)?;
            parts.push((index, retried_part(call, Value::String(message), info)));
            continue;
        };
        if final_output.is_some() && inner.end_strategy == EndStrategy::Early {
            skipped.push(success_part(call, Value::String(TOOL_NOT_EXECUTED.into())));
            continue;
        }
        if tool.def.kind == ToolKind::External {
            external.push(call.clone());
            continue;
        }
        let max_retries = tool.max_retries.unwrap_or(inner.retries);
        let retry = counts.get(&call.tool_name).copied().unwrap_or(0);
        let raw_args = args_override.as_ref().unwrap_or(&call.args);
        let validated = match &tool.validator {
            Some(v) => match raw_args {
                Value::String(raw) => v.validate_str(raw),
                Value::Null => v.validate(&Value::Object(Default::default())),
                other => v.validate(other),
            },
            None => match raw_args {
                Value::String(raw) => crate::validation::parse_json_args(raw).map_err(|e| vec![e]),
                Value::Null => Ok(Value::Object(Default::default())),
                other => Ok(other.clone()),
            },
        };
        let args = match validated {
            Ok(a) => a,
            Err(errors) => {
                let info = book.fail(&counts, &call.tool_name, max_retries, RetryCause::ValidationError)?;
                parts.push((index, retried_part(call, serde_json::to_value(&errors).unwrap_or_default(), info)));
                continue;
            }
        };
        if let Some(check) = &tool.args_validator {
            let mut c = ctx.clone();
            c.tool_name = Some(call.tool_name.clone());
            c.tool_call_id = Some(call.tool_call_id.clone());
            c.retry = retry;
            c.max_retries = max_retries;
            c.tool_call_approved = approved;
            c.tool_call_metadata = call_metadata.clone();
            if let Err(r) = check(&c, &args) {
                let info = book.fail(&counts, &call.tool_name, max_retries, RetryCause::ModelRetry)?;
                parts.push((index, retried_part(call, r.content, info)));
                continue;
            }
        }
        let timeout = tool.def.timeout.or(tool.toolset_timeout).or(inner.tool_timeout);
        let r = Ready {
            index,
            call: call.clone(),
            tool: tool.clone(),
            args,
            retry,
            max_retries,
            timeout,
            approved,
            metadata: call_metadata,
        };
        if tool.def.kind == ToolKind::Unapproved && !approved {
            unapproved.push(r);
        } else {
            ready.push(r);
        }
    }

    let mut deferred = DeferredToolRequests::default();
    let to_run = ready;

    if let Some(limit) = limits.tool_calls_limit {
        let projected = state.usage.tool_calls + to_run.len() as u32;
        if !to_run.is_empty() && projected > limit {
            return Err(AgentRunError::UsageLimitExceeded {
                message: format!(
                    "The next tool call(s) would exceed the tool_calls_limit of {limit} (tool_calls={projected}). Consider raising the limit, or see the docs on usage limits for budget-aware patterns: https://pydantic.dev/docs/ai/core-concepts/agent/#usage-limits"
                ),
            });
        }
    }

    // Execute in segments split at sequential tools.
    let mut segment: Vec<Ready<D>> = Vec::new();
    let mut segments: Vec<Vec<Ready<D>>> = Vec::new();
    for r in to_run {
        let barrier = r.tool.def.sequential || inner.parallel_mode == ParallelMode::Sequential;
        if barrier {
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

    for segment in segments {
        let futures = segment.iter().map(|r| execute(inner, ctx, r));
        let results = futures::future::join_all(futures).await;
        for (r, done) in segment.iter().zip(results) {
            match done {
                Done::Output(out) => {
                    state.usage.tool_calls += 1;
                    book.succeeded.insert(r.call.tool_name.clone());
                    let part = match out {
                        ToolOutput::Value(v) => ToolReturnPart::success(&r.call.tool_name, v, &r.call.tool_call_id),
                        ToolOutput::Return(ret) => {
                            let mut p =
                                ToolReturnPart::success(&r.call.tool_name, ret.return_value, &r.call.tool_call_id);
                            p.metadata = ret.metadata;
                            if let Some(content) = ret.content {
                                extra_content.extend(content);
                            }
                            p
                        }
                    };
                    parts.push((r.index, ModelRequestPart::ToolReturn(part)));
                }
                Done::Timeout(t) => {
                    let info = book.fail(&counts, &r.call.tool_name, r.max_retries, RetryCause::ModelRetry)?;
                    parts.push((
                        r.index,
                        retried_part(&r.call, Value::String(format!("Timed out after {} seconds.", py_float(t))), info),
                    ));
                }
                Done::Panic(message) => {
                    return Err(AgentRunError::ToolPanicked { tool: r.call.tool_name.clone(), message });
                }
                Done::Error(e) => match e {
                    ToolError::Retry(retry) => {
                        let info = book.fail(&counts, &r.call.tool_name, r.max_retries, RetryCause::ModelRetry)?;
                        parts.push((r.index, retried_part(&r.call, retry.content, info)));
                    }
                    ToolError::Validation(errors) => {
                        let info = book.fail(&counts, &r.call.tool_name, r.max_retries, RetryCause::ValidationError)?;
                        parts.push((
                            r.index,
                            retried_part(&r.call, serde_json::to_value(&errors).unwrap_or_default(), info),
                        ));
                    }
                    ToolError::ApprovalRequired(a) => {
                        if let Some(m) = a.metadata {
                            deferred.metadata.insert(r.call.tool_call_id.clone(), m);
                        }
                        deferred.approvals.push(r.call.clone());
                    }
                    ToolError::CallDeferred(d) => {
                        if let Some(m) = d.metadata {
                            deferred.metadata.insert(r.call.tool_call_id.clone(), m);
                        }
                        deferred.calls.push(r.call.clone());
                    }
                    ToolError::Failed { kind, message } => {
                        return Err(AgentRunError::ToolFailed { tool: r.call.tool_name.clone(), kind, message });
                    }
                },
            }
        }
    }

    deferred.approvals.extend(unapproved.into_iter().map(|r| r.call));
    deferred.calls.extend(external);

    let mut counts_now = (*state.retries).clone();
    book.apply(&mut counts_now);
    state.retries = Arc::new(counts_now);

    parts.sort_by_key(|(i, _)| *i);
    let mut all: Vec<ModelRequestPart> = parts.into_iter().map(|(_, p)| p).collect();
    all.extend(skipped);
    if !extra_content.is_empty() {
        all.push(ModelRequestPart::UserPrompt(UserPromptPart::new(extra_content)));
    }
    all.extend(resume_prompt.map(ModelRequestPart::UserPrompt));
    let no_parts = all.is_empty();
    if let Some(req) = state.last_request_mut() {
        req.parts = all;
    }

    if let Some(v) = final_output {
        return Ok(StepOutcome::Final(FinalOutput::Structured(v)));
    }
    if !deferred.is_empty() {
        if no_parts {
            state.pop_last();
        }
        return Ok(StepOutcome::Deferred(deferred));
    }
    Ok(StepOutcome::Continue)
}

async fn execute<D: Clone + Send + Sync + 'static>(inner: &AgentInner<D>, ctx: &RunContext<D>, r: &Ready<D>) -> Done {
    let mut c = ctx.clone();
    c.tool_name = Some(r.call.tool_name.clone());
    c.tool_call_id = Some(r.call.tool_call_id.clone());
    c.retry = r.retry;
    c.max_retries = r.max_retries;
    c.tool_call_approved = r.approved;
    c.tool_call_metadata = r.metadata.clone();
    let handler = r.tool.handler.clone();
    let args = r.args.clone();
    let invocation = match std::panic::catch_unwind(AssertUnwindSafe(move || handler(c, args))) {
        Ok(i) => i,
        Err(p) => return Done::Panic(panic_message(p)),
    };
    let fut = run_invocation(inner, invocation);
    let result = match r.timeout {
        Some(t) => match tokio::time::timeout(Duration::from_secs_f64(t), fut).await {
            Ok(res) => res,
            Err(_) => return Done::Timeout(t),
        },
        None => fut.await,
    };
    match result {
        Ok(Ok(out)) => Done::Output(out),
        Ok(Err(e)) => Done::Error(e),
        Err(panic) => Done::Panic(panic),
    }
}

async fn run_invocation<D>(inner: &AgentInner<D>, invocation: Invocation) -> Result<ToolResult, String> {
    match invocation {
        Invocation::Ready(r) => Ok(r),
        Invocation::Async(fut) => AssertUnwindSafe(fut).catch_unwind().await.map_err(panic_message),
        Invocation::Blocking(f) => {
            let permit = inner.blocking.clone().acquire_owned().await;
            let handle = tokio::task::spawn_blocking(move || {
                let _permit = permit;
                f()
            });
            match handle.await {
                Ok(r) => Ok(r),
                Err(e) if e.is_panic() => Err(panic_message(e.into_panic())),
                Err(e) => Err(e.to_string()),
            }
        }
    }
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}
