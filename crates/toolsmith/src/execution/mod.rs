//! The per-step tool manager: which tools are visible, and how a response's tool calls become
//! the next request (validation, retry budgets, timeouts, concurrent segments split at
//! sequential barriers, usage limits, the end strategy, deferrals).

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;

use crate::agent::output::{RunOutput, output_failure, settle_output};
use crate::agent::{AgentEvent, AgentInner, EndStrategy, ParallelMode};
use crate::capability::{Capabilities, OutputInfo, OutputKind, ToolCallInfo};
use crate::context::RunContext;
use crate::deferred::{DeferredToolRequests, ExternalResult};
use crate::error::{AgentRunError, UserError};
use crate::messages::{
    ModelRequestPart, RetryCause, RetryInfo, ToolCallPart, ToolOutcome, ToolReturnPart, UserContent, UserPromptPart,
};
use crate::search::{self, SEARCH_TOOL_NAME, bridge};
use crate::tool::{Invocation, ModelRetry, ToolDefinition, ToolError, ToolKind, ToolOutput, ToolResult, ToolReturn};
use crate::toolset::{DynToolset, ToolsetTool};
use crate::usage::UsageLimits;
use rustc_hash::{FxHashMap, FxHashSet};

mod layout;
pub(crate) use layout::LayoutCache;

const FINAL_PROCESSED: &str = "Final result processed.";
const OUTPUT_NOT_USED: &str = "Output tool not used - a final result was already processed.";
const TOOL_NOT_EXECUTED: &str = "Tool not executed - a final result was already processed.";
const OUTPUT_NOT_FINAL: &str = "Output tool processed, but its value will not be the final result of the agent run.";
const OUTPUT_FAILED: &str = "Output tool not used - output failed validation.";
const RETRY_WINS: &str = "Output not used as the final result - addressing tool retries from this round first.";

/// What a tool of the step is to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// Offered to the model.
    Visible,
    /// Behind the bridge (bridge mode): reached through `tool_call`.
    Bridged,
}

/// Lookups by name are a scan for a few calls over a few tools, a map built once otherwise:
/// the map costs one hash per tool, a scan one comparison per tool and call.
const SCAN_LIMIT: usize = 4096;

/// The tools of one step: the ones shown to the model and the ones behind the bridge, with the
/// deferred catalogue whose tools are not discovered yet. Those stay in the catalogue, shared
/// between steps, so a step costs the tools it shows, however large the deferred catalogue.
pub(crate) struct ToolIndex<D> {
    tools: Vec<ToolsetTool<D>>,
    shown: Vec<Shown>,
    by_name: OnceLock<FxHashMap<String, usize>>,
    /// The deferred catalogue, when there is one: its tools not in `tools` are hidden.
    deferred: Option<layout::Hidden>,
    /// Whether `search_tools` is the search tool this index injected.
    search: bool,
    /// Whether the bridge is open this step.
    bridge: bool,
}

impl<D> Default for ToolIndex<D> {
    fn default() -> Self {
        ToolIndex {
            tools: Vec::new(),
            shown: Vec::new(),
            by_name: OnceLock::new(),
            deferred: None,
            search: false,
            bridge: false,
        }
    }
}

fn duplicate_error(new_label: &str, old_label: &str, name: &str) -> AgentRunError {
    AgentRunError::User(UserError::new(format!(
        "{new_label} defines a tool whose name conflicts with existing tool from {old_label}: '{name}'. Rename the tool or wrap the toolset in a `PrefixedToolset` to avoid name conflicts."
    )))
}

impl<D: Clone + Send + Sync + 'static> ToolIndex<D> {
    /// The tools of every toolset (agent tools first), after each tool's `prepare` and the
    /// capabilities' `prepare_tools`, with tool search and bridge mode applied.
    pub(crate) async fn collect(
        inner: &AgentInner<D>,
        toolsets: &[Arc<dyn DynToolset<D>>],
        caps: &Capabilities<D>,
        ctx: &RunContext<D>,
    ) -> Result<Self, AgentRunError> {
        let mut lists = Self::collect_toolsets(inner, toolsets, ctx).await?;
        if caps.has_prepare_tools() {
            let tools = lists.iter().flat_map(|l| l.iter().cloned()).collect();
            lists = vec![Self::prepared(tools, caps, ctx).await?.into()];
        }
        let index = Self::with_tool_search(lists, inner, ctx)?;
        index.with_bridge(inner, ctx)
    }

    /// The capabilities' `prepare_tools` over the toolsets' tools (the search and bridge tools,
    /// added after, wrap everything else and are not shown to it).
    async fn prepared(
        tools: Vec<ToolsetTool<D>>,
        caps: &Capabilities<D>,
        ctx: &RunContext<D>,
    ) -> Result<Vec<ToolsetTool<D>>, AgentRunError> {
        let defs = caps.prepare_tools(ctx, tools.iter().map(|t| (*t.def).clone()).collect()).await?;
        let mut slots: Vec<Option<ToolsetTool<D>>> = tools.into_iter().map(Some).collect();
        let positions: FxHashMap<String, usize> =
            slots.iter().enumerate().filter_map(|(i, t)| t.as_ref().map(|t| (t.def.name.clone(), i))).collect();
        let mut prepared = Vec::new();
        for def in defs {
            let Some(&i) = positions.get(&def.name) else {
                return Err(AgentRunError::User(UserError::new(format!(
                    "prepare_tools returned a tool named '{}' that no toolset defines: it may edit, drop or reorder definitions, not add or rename them",
                    def.name
                ))));
            };
            let Some(mut tool) = slots[i].take() else { continue };
            tool.def = Arc::new(def);
            prepared.push(tool);
        }
        Ok(prepared)
    }

    /// Bridge mode: hides the deferrable tools behind `tool_search` / `tool_describe` /
    /// `tool_call` when the configuration says so.
    fn with_bridge(mut self, inner: &AgentInner<D>, ctx: &RunContext<D>) -> Result<Self, AgentRunError> {
        let Some(config) = inner.bridge.clone() else { return Ok(self) };
        let deferrable: Vec<&ToolDefinition> = self
            .tools
            .iter()
            .zip(&self.shown)
            .filter(|(t, s)| **s == Shown::Visible && config.is_deferrable(&t.def))
            .map(|(t, _)| &*t.def)
            .collect();
        let Some(catalogue) = inner.bridge_cache.open(&config, &deferrable, &ctx.model) else { return Ok(self) };
        for name in [bridge::TOOL_SEARCH, bridge::TOOL_DESCRIBE, bridge::TOOL_CALL] {
            if self.tools.iter().any(|t| t.def.name == name) {
                return Err(AgentRunError::User(UserError::new(format!(
                    "'{name}' is the name of a bridge-mode tool: rename your tool, or turn bridge mode off"
                ))));
            }
        }
        for (tool, shown) in self.tools.iter().zip(self.shown.iter_mut()) {
            if *shown == Shown::Visible && config.is_deferrable(&tool.def) {
                *shown = Shown::Bridged;
            }
        }
        let config = Arc::new(config);
        for def in bridge::bridge_definitions(&config) {
            let validator = crate::validation::Validator::compile(&def.parameters_json_schema).ok();
            let (config, catalogue, name) = (config.clone(), catalogue.clone(), def.name.clone());
            let handler: crate::tool::Handler<D> =
                Arc::new(move |_ctx, args| bridge::bridge_invocation(&config, &catalogue, &name, &args));
            self.tools.push(ToolsetTool::new(def, handler, validator, Arc::from("ToolSearchBridge")));
            self.shown.push(Shown::Visible);
        }
        self.bridge = true;
        Ok(self)
    }

    async fn collect_toolsets(
        inner: &AgentInner<D>,
        toolsets: &[Arc<dyn DynToolset<D>>],
        ctx: &RunContext<D>,
    ) -> Result<layout::Lists<D>, AgentRunError> {
        let mut lists = Vec::with_capacity(toolsets.len());
        for toolset in toolsets {
            lists.push(toolset.get_tools_shared_boxed(ctx).await?);
        }
        inner.tool_layout.check_duplicates(&lists)?;
        Ok(lists)
    }
}

impl<D> ToolIndex<D> {
    /// The definitions shown to the model.
    pub(crate) fn definitions(&self) -> Vec<Arc<ToolDefinition>> {
        self.tools.iter().zip(&self.shown).filter(|(_, s)| **s == Shown::Visible).map(|(t, _)| t.def.clone()).collect()
    }

    /// Where the tool with this name is, whatever it is to the model.
    fn position(&self, name: &str) -> Option<usize> {
        if let Some(map) = self.by_name.get() {
            return map.get(name).copied();
        }
        self.tools.iter().position(|t| t.def.name == name)
    }

    /// Prepares lookups for `calls` calls: past a few comparisons, a map is built once.
    fn prepare_lookups(&self, calls: usize) {
        if calls.saturating_mul(self.tools.len()) > SCAN_LIMIT {
            self.by_name
                .get_or_init(|| self.tools.iter().enumerate().rev().map(|(i, t)| (t.def.name.clone(), i)).collect());
        }
    }

    /// A visible or bridged tool (hidden deferred tools are not callable).
    fn get(&self, name: &str) -> Option<&ToolsetTool<D>> {
        self.position(name).map(|i| &self.tools[i])
    }

    /// Rewrites `tool_call(tool_name, tool_args)` calls to a bridged or visible tool into calls
    /// of that tool (same id); returns the ids rewritten. Other `tool_call`s are left for its
    /// own validation and answer.
    fn unwrap_bridge_calls(&self, calls: &mut [ToolCallPart]) -> HashSet<String> {
        let mut rewritten = HashSet::new();
        if !self.bridge {
            return rewritten;
        }
        for call in calls.iter_mut() {
            if call.tool_name != bridge::TOOL_CALL {
                continue;
            }
            let args = match &call.args {
                Value::String(raw) => crate::validation::parse_json_args(raw).unwrap_or(Value::Null),
                other => other.clone(),
            };
            let Some(name) = args.get("tool_name").and_then(Value::as_str) else { continue };
            if name == bridge::TOOL_CALL || self.get(name).is_none() {
                continue;
            }
            let Some(tool_args) = args.get("tool_args").cloned() else { continue };
            call.tool_name = name.to_string();
            call.args = tool_args;
            rewritten.insert(call.tool_call_id.clone());
        }
        rewritten
    }

    fn tool_kind(&self, name: &str) -> Option<&'static str> {
        (self.search && name == SEARCH_TOOL_NAME).then_some(search::SEARCH_TOOL_KIND)
    }

    /// The visible tools' names (output tool included), sorted, for the unknown-tool message.
    fn available_names(&self, output_tool: Option<&str>) -> String {
        let mut names: Vec<&str> = self
            .tools
            .iter()
            .zip(&self.shown)
            .filter(|(_, s)| **s == Shown::Visible)
            .map(|(t, _)| t.def.name.as_str())
            .chain(output_tool)
            .collect();
        names.sort_unstable();
        names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")
    }
}

/// What a step ended with.
pub(crate) enum StepOutcome {
    /// A final output was found.
    Final(RunOutput),
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
    failed: FxHashSet<String>,
    succeeded: FxHashSet<String>,
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

/// The part for a rich return (its metadata kept on the part), and the content sent after it.
fn return_part(call: &ToolCallPart, ret: ToolReturn) -> (ToolReturnPart, Option<Vec<UserContent>>) {
    let mut part = ToolReturnPart::success(&call.tool_name, ret.return_value, &call.tool_call_id);
    part.metadata = ret.metadata;
    (part, ret.content)
}

fn success_part(call: &ToolCallPart, content: Value) -> ModelRequestPart {
    ModelRequestPart::ToolReturn(ToolReturnPart::success(&call.tool_name, content, &call.tool_call_id))
}

/// A call to a known function tool: raw arguments until validated, then the validated ones.
struct Ready<D> {
    index: usize,
    call: ToolCallPart,
    tool: ToolsetTool<D>,
    args: Value,
    max_retries: u32,
    timeout: Option<f64>,
    /// The context the tool and its hooks see.
    ctx: RunContext<D>,
}

/// Turns a failed validation or execution into the next request's part, a deferral, or the
/// error that ends the run.
fn settle_error<D>(
    error: ToolError,
    r: &Ready<D>,
    counts: &HashMap<String, u32>,
    book: &mut RetryBook,
    parts: &mut Vec<(usize, ModelRequestPart)>,
    deferred: &mut DeferredToolRequests,
) -> Result<(), AgentRunError> {
    let name = &r.call.tool_name;
    match error {
        ToolError::Retry(retry) => {
            let info = book.fail(counts, name, r.max_retries, RetryCause::ModelRetry)?;
            parts.push((r.index, retried_part(&r.call, retry.content, info)));
        }
        ToolError::Validation(errors) => {
            let info = book.fail(counts, name, r.max_retries, RetryCause::ValidationError)?;
            parts.push((r.index, retried_part(&r.call, serde_json::to_value(&errors).unwrap_or_default(), info)));
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
            return Err(AgentRunError::ToolFailed { tool: name.clone(), kind, message });
        }
        ToolError::Panicked { message } => {
            return Err(AgentRunError::ToolPanicked { tool: name.clone(), message });
        }
    }
    Ok(())
}

/// Validates raw arguments against the tool's schema (when it has a validator), then runs its
/// arguments validator.
fn validate_args<D>(tool: &ToolsetTool<D>, ctx: &RunContext<D>, raw: &Value) -> Result<Value, ToolError> {
    let validated = match &tool.validator {
        Some(v) => match raw {
            Value::String(s) => v.validate_str(s),
            Value::Null => v.validate(&Value::Object(Default::default())),
            other => v.validate(other),
        },
        None => match raw {
            Value::String(s) => crate::validation::parse_json_args(s).map_err(|e| vec![e]),
            Value::Null => Ok(Value::Object(Default::default())),
            other => Ok(other.clone()),
        },
    }
    .map_err(ToolError::Validation)?;
    if let Some(check) = &tool.args_validator {
        check(ctx, &validated).map_err(ToolError::Retry)?;
    }
    Ok(validated)
}

/// Validation of one call's arguments (taken from `r`: the validated ones replace them)
/// through the capabilities' validate hooks.
async fn validate_call<D: Clone + Send + Sync + 'static>(
    caps: &Capabilities<D>,
    r: &mut Ready<D>,
) -> Result<Value, ToolError> {
    let args = std::mem::take(&mut r.args);
    let r = &*r;
    let core = |raw: Value| -> BoxFuture<'_, Result<Value, ToolError>> {
        let result = validate_args(&r.tool, &r.ctx, &raw);
        Box::pin(async move { result })
    };
    let info = ToolCallInfo { call: &r.call, def: &r.tool.def };
    caps.validate(0, &r.ctx, info, args, &core).await
}

/// Execution of one call (with its validated `args`) through the capabilities' execute hooks;
/// also says whether the tool itself returned successfully (what `tool_calls` counts).
async fn execute_call<D: Clone + Send + Sync + 'static>(
    inner: &AgentInner<D>,
    caps: &Capabilities<D>,
    r: &Ready<D>,
    args: Value,
) -> (Result<ToolOutput, ToolError>, bool) {
    let ran_ok = AtomicBool::new(false);
    let core = |args: Value| -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        let ran_ok = &ran_ok;
        Box::pin(async move {
            let result = run_tool(inner, r, args).await;
            if result.is_ok() {
                ran_ok.store(true, Ordering::Relaxed);
            }
            result
        })
    };
    let info = ToolCallInfo { call: &r.call, def: &r.tool.def };
    let result = caps.execute(0, &r.ctx, info, args, &core).await;
    (result, ran_ok.load(Ordering::Relaxed))
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
    /// Deferred calls being handled inline: those left without a result are deferred again.
    pub(crate) pending: Option<DeferredToolRequests>,
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

/// How one call of a response is to be handled this step.
enum Plan<D> {
    /// An output tool call.
    Output(usize, ToolCallPart),
    /// A call to a function tool (or an approved call).
    Function(Ready<D>),
    /// A call the step answers with a retry without running anything (unknown or hidden tool).
    Refused { index: usize, call: ToolCallPart, message: String, cause: RetryCause, charged: bool },
    /// A result supplied from outside (resumed deferred calls: a denial or an external result).
    Settled(usize, ModelRequestPart, Option<Vec<UserContent>>),
    /// A call to an external tool: it waits for a result from outside.
    External(usize, ToolCallPart),
    /// A call that needs approval: validated after the step's executions, then it waits.
    Unapproved(Ready<D>),
}

/// The working state of one step.
struct Step<'a, D> {
    inner: &'a AgentInner<D>,
    caps: &'a Capabilities<D>,
    tools: &'a ToolIndex<D>,
    counts: Arc<HashMap<String, u32>>,
    book: RetryBook,
    /// The parts of the next request with their call's index, in the order the strategy
    /// produces them.
    parts: Vec<(usize, ModelRequestPart)>,
    /// Content sent with tool returns, one user prompt per call, in call order.
    content: Vec<(usize, Vec<UserContent>)>,
    deferred: DeferredToolRequests,
    kinded: FxHashMap<String, &'static str>,
    /// Whether a function tool was retried this step (a retry wins over a final result).
    function_retried: bool,
    /// The winning output, and the index of its call.
    final_output: Option<(Value, usize)>,
}

impl<'a, D: Clone + Send + Sync + 'static> Step<'a, D> {
    /// Answers one output tool call: its arguments validated and processed through the
    /// capabilities' output hooks.
    #[allow(clippy::too_many_arguments)]
    async fn output(
        &mut self,
        state: &mut crate::agent::run::RunState,
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
                        (serde_json::to_value(&errors).unwrap_or_default(), RetryCause::ValidationError)
                    }
                    ToolError::Retry(retry) => (retry.content, RetryCause::ModelRetry),
                    other => return Err(output_failure(other)),
                };
                if state.output_retries >= max {
                    if strategy == EndStrategy::Exhaustive {
                        // Absorbed if another output of the step is valid; decided at the end.
                        absorbed.push(index);
                        self.parts.push((index, success_part(call, Value::String(OUTPUT_FAILED.into()))));
                        return Ok(());
                    }
                    return Err(output_budget_exceeded(max));
                }
                state.output_retries += 1;
                let info = self.book.fail(&self.counts, &call.tool_name, max, cause)?;
                self.parts.push((index, retried_part(call, content, info)));
            }
        }
        Ok(())
    }

    /// Validates, then runs, a batch of calls; their parts follow in call order.
    async fn flush(
        &mut self,
        state: &mut crate::agent::run::RunState,
        batch: Vec<Plan<D>>,
    ) -> Result<(), AgentRunError> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut out: Vec<(usize, ModelRequestPart)> = Vec::with_capacity(batch.len());
        let mut to_run: Vec<Ready<D>> = Vec::with_capacity(batch.len());
        for plan in batch {
            match plan {
                Plan::Settled(index, part, content) => {
                    if let Some(c) = content {
                        self.content.push((index, c));
                    }
                    out.push((index, part));
                }
                Plan::Refused { index, call, message, cause, charged } => {
                    let info = if charged {
                        let max = self.inner.retries;
                        self.book.fail(&self.counts, &call.tool_name, max, cause)?
                    } else {
                        RetryInfo::uncounted(cause)
                    };
                    out.push((index, retried_part(&call, Value::String(message), info)));
                }
                Plan::Function(mut r) => {
                    let validated = validate_call(self.caps, &mut r).await;
                    state.emit(|| AgentEvent::FunctionToolCall { call: r.call.clone(), args_valid: validated.is_ok() });
                    match validated {
                        Ok(args) => {
                            if let Some(kind) = self.tools.tool_kind(&r.call.tool_name) {
                                self.kinded.insert(r.call.tool_call_id.clone(), kind);
                                state.mark_call_kind(&r.call.tool_call_id, kind);
                            }
                            r.args = args;
                            to_run.push(r);
                        }
                        Err(e) => self.settle(e, &r, &mut out)?,
                    }
                }
                Plan::Output(..) | Plan::External(..) | Plan::Unapproved(_) => {}
            }
        }

        // Execute in segments split at sequential tools.
        let mut segments: Vec<Vec<Ready<D>>> = Vec::new();
        let mut segment: Vec<Ready<D>> = Vec::with_capacity(to_run.len());
        for r in to_run {
            if r.tool.def.sequential || self.inner.parallel_mode == ParallelMode::Sequential {
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
        for mut segment in segments {
            let args: Vec<Value> = segment.iter_mut().map(|r| std::mem::take(&mut r.args)).collect();
            let results = futures::future::join_all(
                segment.iter().zip(args).map(|(r, args)| execute_call(self.inner, self.caps, r, args)),
            )
            .await;
            for (r, (result, ran_ok)) in segment.iter().zip(results) {
                if ran_ok {
                    state.usage.tool_calls += 1;
                }
                match result {
                    Ok(output) => {
                        if !self.book.succeeded.contains(&r.call.tool_name) {
                            self.book.succeeded.insert(r.call.tool_name.clone());
                        }
                        let part = match output {
                            ToolOutput::Value(v) => ToolReturnPart::success(&r.call.tool_name, v, &r.call.tool_call_id),
                            ToolOutput::Return(ret) => {
                                let (p, content) = return_part(&r.call, ret);
                                if let Some(content) = content {
                                    self.content.push((r.index, content));
                                }
                                p
                            }
                        };
                        out.push((r.index, ModelRequestPart::ToolReturn(part)));
                    }
                    Err(e) => self.settle(e, r, &mut out)?,
                }
            }
        }
        out.sort_by_key(|(i, _)| *i);
        self.parts.extend(out);
        Ok(())
    }

    /// A failed validation or execution: a retry part, a deferral, or the error that ends the run.
    fn settle(
        &mut self,
        error: ToolError,
        r: &Ready<D>,
        out: &mut Vec<(usize, ModelRequestPart)>,
    ) -> Result<(), AgentRunError> {
        if matches!(error, ToolError::Retry(_) | ToolError::Validation(_)) && r.tool.def.kind != ToolKind::Unapproved {
            self.function_retried = true;
        }
        settle_error(error, r, &self.counts, &mut self.book, out, &mut self.deferred)
    }
}

fn output_budget_exceeded(max: u32) -> AgentRunError {
    AgentRunError::unexpected(format!("Exceeded maximum output retries ({max})"))
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
    inner: &AgentInner<D>,
    caps: &Capabilities<D>,
    state: &mut crate::agent::run::RunState,
    tools: &ToolIndex<D>,
    ctx: RunContext<D>,
    limits: &UsageLimits,
    calls: Vec<ToolCallPart>,
    resume: Option<Resume>,
) -> Result<StepOutcome, AgentRunError> {
    tools.prepare_lookups(calls.len());
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
        deferred: DeferredToolRequests::default(),
        kinded: FxHashMap::default(),
        function_retried: false,
        final_output: None,
    };

    let (resolutions, resume_prompt) = match resume {
        Some(mut r) => {
            let expected: Vec<String> = calls
                .iter()
                .filter(|c| !matches!(r.resolutions.get(&c.tool_call_id), Some(Resolution::Skip)))
                .map(|c| c.tool_call_id.clone())
                .collect();
            if let Some(pending) = r.pending.take() {
                // Handled inline: what is left waits again, in the same lists.
                let left = |c: &&ToolCallPart| !r.resolutions.contains_key(&c.tool_call_id);
                step.deferred.approvals.extend(pending.approvals.iter().filter(left).cloned());
                step.deferred.calls.extend(pending.calls.iter().filter(left).cloned());
                for c in step.deferred.approvals.iter().chain(&step.deferred.calls) {
                    if let Some(m) = pending.metadata.get(&c.tool_call_id) {
                        step.deferred.metadata.insert(c.tool_call_id.clone(), m.clone());
                    }
                    r.resolutions.insert(c.tool_call_id.clone(), Resolution::Skip);
                }
            } else if expected.iter().any(|id| !r.resolutions.contains_key(id)) {
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

    // Plan every call.
    let output_tool = inner.output.output_tool().map(|t| t.name.clone());
    let mut plans: Vec<Plan<D>> = Vec::with_capacity(calls.len());
    for (index, call) in calls.into_iter().enumerate() {
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
                    plans.push(Plan::Settled(index, ModelRequestPart::ToolReturn(p), None));
                    continue;
                }
                Some(Resolution::External(_))
                    if tools.get(&call.tool_name).is_some_and(|t| t.def.kind == ToolKind::Unapproved) =>
                {
                    return Err(AgentRunError::User(UserError::new(format!(
                        "Tool call '{}' waits for approval, not a result: give a decision in `approvals`.",
                        call.tool_call_id
                    ))));
                }
                Some(Resolution::External(result)) => {
                    let (part, content) = match result {
                        ExternalResult::Value(v) => {
                            (ToolReturnPart::success(&call.tool_name, v.clone(), &call.tool_call_id), None)
                        }
                        ExternalResult::Return(ret) => return_part(&call, ret.clone()),
                        ExternalResult::Retry(r) => (
                            ToolReturnPart::retried(
                                &call.tool_name,
                                r.content.clone(),
                                &call.tool_call_id,
                                RetryInfo::uncounted(RetryCause::ModelRetry),
                            ),
                            None,
                        ),
                    };
                    plans.push(Plan::Settled(index, ModelRequestPart::ToolReturn(part), content));
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
            plans.push(Plan::Output(index, call));
            continue;
        }
        if tools.is_hidden(&call.tool_name) {
            let message = format!(
                "Tool '{}' is not available yet: search for it first, then call it again once you've seen its schema.",
                call.tool_name
            );
            let charged = !state.refused.insert(call.tool_name.clone());
            plans.push(Plan::Refused { index, call, message, cause: RetryCause::UnavailableTool, charged });
            continue;
        }
        let Some(tool) = tools.get(&call.tool_name) else {
            let available = tools.available_names(output_tool.as_deref());
            let message = if available.is_empty() {
                format!("Unknown tool name: '{}'. No tools available.", call.tool_name)
            } else {
                format!("Unknown tool name: '{}'. Available tools: {available}", call.tool_name)
            };
            plans.push(Plan::Refused { index, call, message, cause: RetryCause::UnknownTool, charged: true });
            continue;
        };
        if approved && tool.def.kind == ToolKind::External {
            return Err(AgentRunError::User(UserError::new(format!(
                "Tool call '{}' waits for an external result, not an approval: give its result in `calls`.",
                call.tool_call_id
            ))));
        }
        if tool.def.kind == ToolKind::External {
            plans.push(Plan::External(index, call));
            continue;
        }
        let max_retries = tool.max_retries.unwrap_or(inner.retries);
        let mut c = ctx.clone();
        c.tool_name = Some(call.tool_name.clone());
        c.tool_call_id = Some(call.tool_call_id.clone());
        c.retry = step.counts.get(&call.tool_name).copied().unwrap_or(0);
        c.max_retries = max_retries;
        c.tool_call_approved = approved;
        c.tool_call_metadata = call_metadata;
        let args = args_override.unwrap_or_else(|| call.args.clone());
        let r = Ready {
            index,
            call,
            tool: tool.clone(),
            args,
            max_retries,
            timeout: tool.def.timeout.or(tool.toolset_timeout).or(inner.tool_timeout),
            ctx: c,
        };
        plans.push(if tool.def.kind == ToolKind::Unapproved && !approved {
            Plan::Unapproved(r)
        } else {
            Plan::Function(r)
        });
    }

    // The tool call limit counts every function and unknown call of the step, before anything runs.
    if let Some(limit) = limits.tool_calls_limit {
        let calls_now = plans.iter().filter(|p| matches!(p, Plan::Function(_) | Plan::Refused { .. })).count() as u32;
        let projected = state.usage.tool_calls + calls_now;
        if calls_now > 0 && projected > limit {
            return Err(AgentRunError::UsageLimitExceeded {
                message: format!(
                    "The next tool call(s) would exceed the tool_calls_limit of {limit} (tool_calls={projected}). Consider raising the limit, or see the docs on usage limits for budget-aware patterns: https://pydantic.dev/docs/ai/core-concepts/agent/#usage-limits"
                ),
            });
        }
    }

    // Run the strategy.
    let strategy = if resolutions.is_some() { EndStrategy::Graceful } else { inner.end_strategy };
    let mut deferred_kinds: Vec<Plan<D>> = Vec::new();
    let n_plans = plans.len();
    let mut absorbed: Vec<usize> = Vec::new();
    let outcome: Result<(), AgentRunError> = async {
        match strategy {
            EndStrategy::Early => {
                let mut rest = Vec::with_capacity(n_plans);
                for plan in plans {
                    match plan {
                        Plan::Output(i, call) => step.output(state, &ctx, i, &call, strategy, &mut absorbed).await?,
                        Plan::External(..) | Plan::Unapproved(_) => deferred_kinds.push(plan),
                        other => rest.push(other),
                    }
                }
                if step.final_output.is_some() {
                    let mut out: Vec<(usize, ModelRequestPart)> = Vec::new();
                    let mut refused = Vec::new();
                    for plan in rest {
                        match plan {
                            Plan::Function(r) => {
                                out.push((r.index, success_part(&r.call, Value::String(TOOL_NOT_EXECUTED.into()))))
                            }
                            other => refused.push(other),
                        }
                    }
                    step.flush(state, refused).await?;
                    out.sort_by_key(|(i, _)| *i);
                    step.parts.extend(out);
                } else {
                    step.flush(state, rest).await?;
                }
            }
            EndStrategy::Graceful => {
                let mut pending = Vec::with_capacity(n_plans);
                for plan in plans {
                    match plan {
                        Plan::Output(i, call) => {
                            step.flush(state, std::mem::take(&mut pending)).await?;
                            step.output(state, &ctx, i, &call, strategy, &mut absorbed).await?;
                        }
                        Plan::External(..) | Plan::Unapproved(_) => deferred_kinds.push(plan),
                        other => pending.push(other),
                    }
                }
                step.flush(state, pending).await?;
            }
            EndStrategy::Exhaustive => {
                let mut pending = Vec::with_capacity(n_plans);
                for plan in plans {
                    match plan {
                        Plan::Output(i, call) => step.output(state, &ctx, i, &call, strategy, &mut absorbed).await?,
                        Plan::External(..) | Plan::Unapproved(_) => deferred_kinds.push(plan),
                        other => pending.push(other),
                    }
                }
                step.flush(state, pending).await?;
            }
        }
        Ok(())
    }
    .await;
    if strategy != EndStrategy::Early {
        step.parts.sort_by_key(|(i, _)| *i);
    }
    if let Err(e) = outcome {
        // What the step produced before the error stays in the history.
        if matches!(&e, AgentRunError::UnexpectedModelBehavior { message } if message.starts_with("Exceeded maximum output retries"))
            && let Some(req) = state.last_request_mut()
        {
            req.parts = step.parts.into_iter().map(|(_, p)| p).collect();
        }
        return Err(e);
    }
    if !absorbed.is_empty() && step.final_output.is_none() {
        if let Some(req) = state.last_request_mut() {
            req.parts = step.parts.into_iter().filter(|(i, _)| !absorbed.contains(i)).map(|(_, p)| p).collect();
        }
        return Err(output_budget_exceeded(inner.output_retries));
    }

    // A function tool's retry wins over a final result from the same response.
    if strategy != EndStrategy::Early
        && step.function_retried
        && let Some((_, at)) = step.final_output.take()
        && let Some((_, ModelRequestPart::ToolReturn(t))) = step.parts.iter_mut().find(|(i, _)| *i == at)
    {
        t.content = Value::String(RETRY_WINS.into());
    }

    // Calls that wait for approval or an external result.
    if step.final_output.is_some() {
        let mut stubs: Vec<(usize, ModelRequestPart)> = deferred_kinds
            .iter()
            .filter_map(|p| match p {
                Plan::External(i, call) => Some((*i, success_part(call, Value::String(TOOL_NOT_EXECUTED.into())))),
                Plan::Unapproved(r) => Some((r.index, success_part(&r.call, Value::String(TOOL_NOT_EXECUTED.into())))),
                _ => None,
            })
            .collect();
        stubs.sort_by_key(|(i, _)| *i);
        step.parts.extend(stubs);
    } else {
        let mut out: Vec<(usize, ModelRequestPart)> = Vec::new();
        for plan in deferred_kinds {
            match plan {
                Plan::External(_, call) => step.deferred.calls.push(call),
                Plan::Unapproved(mut r) => match validate_call(caps, &mut r).await {
                    Ok(_) => step.deferred.approvals.push(r.call),
                    Err(e) => step.settle(e, &r, &mut out)?,
                },
                _ => {}
            }
        }
        out.sort_by_key(|(i, _)| *i);
        step.parts.extend(out);
    }

    // The contexts share the history: with the last of them gone, it is filled in without a copy.
    drop(ctx);
    let Step { book, parts, mut content, deferred, kinded, final_output, .. } = step;
    let mut parts: Vec<ModelRequestPart> = parts.into_iter().map(|(_, p)| p).collect();
    let mut counts_now = (*state.retries).clone();
    book.apply(&mut counts_now);
    state.retries = Arc::new(counts_now);

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
    content.sort_by_key(|(i, _)| *i);
    parts.extend(content.into_iter().map(|(_, c)| ModelRequestPart::UserPrompt(UserPromptPart::new(c))));
    parts.extend(resume_prompt.map(ModelRequestPart::UserPrompt));
    let no_parts = parts.is_empty();
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

    if let Some((v, _)) = final_output {
        return Ok(StepOutcome::Final(RunOutput::Structured(v)));
    }
    if !deferred.is_empty() {
        if no_parts {
            state.pop_last();
        }
        return Ok(StepOutcome::Deferred(deferred));
    }
    Ok(StepOutcome::Continue)
}

/// Runs the tool itself: its handler, on the runtime or the blocking pool, under its timeout,
/// with panics caught.
async fn run_tool<D: Clone + Send + Sync + 'static>(
    inner: &AgentInner<D>,
    r: &Ready<D>,
    args: Value,
) -> Result<ToolOutput, ToolError> {
    let handler = r.tool.handler.clone();
    let ctx = r.ctx.clone();
    let invocation = match std::panic::catch_unwind(AssertUnwindSafe(move || handler(ctx, args))) {
        Ok(i) => i,
        Err(p) => return Err(ToolError::Panicked { message: panic_message(p) }),
    };
    let fut = run_invocation(inner, invocation);
    let result = match r.timeout {
        Some(t) => match tokio::time::timeout(Duration::from_secs_f64(t), fut).await {
            Ok(res) => res,
            Err(_) => {
                return Err(ToolError::Retry(ModelRetry::new(format!("Timed out after {} seconds.", py_float(t)))));
            }
        },
        None => fut.await,
    };
    match result {
        Ok(r) => r,
        Err(message) => Err(ToolError::Panicked { message }),
    }
}

async fn run_invocation<D>(inner: &AgentInner<D>, invocation: Invocation) -> Result<ToolResult, String> {
    match invocation {
        Invocation::Ready(r) => Ok(r),
        Invocation::Async(fut) => AssertUnwindSafe(fut).catch_unwind().await.map_err(panic_message),
        Invocation::Blocking(f) => {
            let permit = inner.blocking.clone().acquire_owned().await;
            // The tool runs on a pool thread with the caller's subscriber, inside the span it
            // was called in (e.g. the `Instrumentation` span of its execution).
            let dispatch = tracing::dispatcher::get_default(Clone::clone);
            let span = tracing::Span::current();
            let handle = tokio::task::spawn_blocking(move || {
                let _permit = permit;
                tracing::dispatcher::with_default(&dispatch, || span.in_scope(f))
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
