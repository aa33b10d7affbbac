//! One call: its validation and execution through the capabilities' hooks, the tool itself
//! under its timeout with panics caught, the parts its result becomes, and the retry budget.

use super::*;
use std::borrow::Cow;

/// Per-step retry bookkeeping: failures of one tool in one step charge one attempt; a success
/// resets the count; a tool not called keeps it.
pub(super) struct RetryBook {
    pub(super) failed: FxHashSet<String>,
    pub(super) succeeded: FxHashSet<String>,
}

impl RetryBook {
    /// Records a failure and returns the retry info for its part, or the exhaustion error.
    pub(super) fn fail(
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

    /// Charges the failures and resets the successes. The counts are shared with the contexts
    /// made from them: a step that changes no count copies none.
    pub(super) fn apply(self, counts: &mut Arc<HashMap<String, u32>>) {
        if self.failed.is_empty() && !self.succeeded.iter().any(|name| counts.contains_key(name)) {
            return;
        }
        let counts = Arc::make_mut(counts);
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

pub(super) fn retried_part(call: &ToolCallPart, content: Value, info: RetryInfo) -> ModelRequestPart {
    ModelRequestPart::ToolReturn(ToolReturnPart::retried(&call.tool_name, content, &call.tool_call_id, info))
}

/// The part for a rich return (its metadata kept on the part), and the content sent after it.
pub(super) fn return_part(call: &ToolCallPart, ret: ToolReturn) -> (ToolReturnPart, Option<Vec<UserContent>>) {
    let mut part = ToolReturnPart::success(&call.tool_name, ret.return_value, &call.tool_call_id);
    part.metadata = ret.metadata.map(Box::new);
    (part, ret.content)
}

pub(super) fn success_part(call: &ToolCallPart, content: Value) -> ModelRequestPart {
    ModelRequestPart::ToolReturn(ToolReturnPart::success(&call.tool_name, content, &call.tool_call_id))
}

/// A call of the response being handled: borrowed from the history that holds the response,
/// owned when it was rewritten (a bridged call) or given by a node hook. Boxed when owned, so
/// that it moves as a pointer either way.
pub(super) enum Call<'h> {
    Borrowed(&'h ToolCallPart),
    Owned(Box<ToolCallPart>),
}

impl Call<'_> {
    pub(super) fn owned(call: ToolCallPart) -> Self {
        Call::Owned(Box::new(call))
    }

    /// The call, owned (copied when borrowed).
    pub(super) fn into_owned(self) -> ToolCallPart {
        match self {
            Call::Borrowed(c) => c.clone(),
            Call::Owned(c) => *c,
        }
    }

    /// The call, to change (copied first when borrowed).
    pub(super) fn to_mut(&mut self) -> &mut ToolCallPart {
        if let Call::Borrowed(c) = self {
            *self = Call::owned((*c).clone());
        }
        match self {
            Call::Owned(c) => c,
            Call::Borrowed(_) => unreachable!("made owned above"),
        }
    }
}

impl std::ops::Deref for Call<'_> {
    type Target = ToolCallPart;

    fn deref(&self) -> &ToolCallPart {
        match self {
            Call::Borrowed(c) => c,
            Call::Owned(c) => c,
        }
    }
}

/// A call to a known function tool: its raw arguments (the call's own, or those an approval
/// replaced them with), then the validated ones.
pub(super) struct Ready<'h, D> {
    pub(super) index: usize,
    pub(super) call: Call<'h>,
    pub(super) tool: &'h ToolsetTool<D>,
    /// Arguments that replace the call's own (an approval's).
    pub(super) raw: Option<Box<Value>>,
    /// The validated arguments, when validation made a copy (coerced, filled in, parsed from
    /// text); `None` when the raw arguments are the validated ones, used where they are. Boxed,
    /// as the approval's arguments and metadata are: a call is moved from list to list by value.
    pub(super) args: Option<Box<Value>>,
    pub(super) max_retries: u32,
    pub(super) timeout: Option<Duration>,
    /// The step's context, from which the call's own is made when something needs it.
    pub(super) base: &'h RunContext<D>,
    /// The tool's retry count when the call was planned.
    pub(super) retry: u32,
    pub(super) approved: bool,
    pub(super) metadata: Option<Box<Value>>,
}

impl<D: Clone> Ready<'_, D> {
    /// The arguments to validate: the approval's, else the call's own.
    pub(super) fn raw_args(&self) -> &Value {
        self.raw.as_deref().unwrap_or(&self.call.args)
    }

    /// The validated arguments, taken: validation's copy, else the raw arguments where they are.
    pub(super) fn validated(&mut self) -> Option<Value> {
        self.args.take().map(|a| *a)
    }

    /// The context the tool and its hooks see (made when needed: most calls need it once, to
    /// hand to the tool).
    pub(super) fn context(&self) -> RunContext<D> {
        let mut c = self.base.clone();
        c.tool_name = Some(self.call.tool_name.clone());
        c.tool_call_id = Some(self.call.tool_call_id.clone());
        c.retry = self.retry;
        c.max_retries = self.max_retries;
        c.tool_call_approved = self.approved;
        c.tool_call_metadata = self.metadata.as_deref().cloned();
        c
    }
}

/// Turns a failed validation or execution into the next request's part, a deferral, or the
/// error that ends the run.
pub(super) fn settle_error<D>(
    error: ToolError,
    r: &Ready<'_, D>,
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
            parts.push((r.index, retried_part(&r.call, crate::validation::errors_for_model(&errors), info)));
        }
        ToolError::ApprovalRequired(a) => {
            if let Some(m) = a.metadata {
                deferred.metadata.insert(r.call.tool_call_id.clone(), m);
            }
            deferred.approvals.push((*r.call).clone());
        }
        ToolError::CallDeferred(d) => {
            if let Some(m) = d.metadata {
                deferred.metadata.insert(r.call.tool_call_id.clone(), m);
            }
            deferred.calls.push((*r.call).clone());
        }
        ToolError::Failed { kind, message, source } => {
            return Err(AgentRunError::ToolFailed { tool: name.clone(), kind, message, source });
        }
        ToolError::Panicked { message } => {
            return Err(AgentRunError::ToolPanicked { tool: name.clone(), message });
        }
        ToolError::RetriesExhausted { tool, max_retries } => return Err(exceeded(&tool, max_retries)),
    }
    Ok(())
}

/// The rest of an async arguments validator, to await before the call goes on.
pub(super) type PendingCheck = BoxFuture<'static, Result<(), ToolError>>;

/// Validates raw arguments against the tool's schema (when it has a validator), then runs its
/// arguments validator: an async one is returned to be awaited. The validated arguments are
/// `None` when they are the raw ones as they are (nothing to copy).
pub(super) fn validate_args<D>(
    tool: &ToolsetTool<D>,
    ctx: &RunContext<D>,
    raw: &Value,
) -> Result<(Option<Value>, Option<PendingCheck>), ToolError> {
    let validated = match &tool.validator {
        Some(v) => match raw {
            Value::String(s) => v.validate_str(s).map(Some),
            Value::Null => v.validate(&Value::Object(Default::default())).map(Some),
            other => v.validate_in_place(other).map(|args| match args {
                Cow::Borrowed(_) => None,
                Cow::Owned(args) => Some(args),
            }),
        },
        None => match raw {
            Value::String(s) => crate::validation::parse_json_args(s).map(Some).map_err(|e| vec![e]),
            Value::Null => Ok(Some(Value::Object(Default::default()))),
            _ => Ok(None),
        },
    }
    .map_err(ToolError::Validation)?;
    let pending = match tool.args_validator.as_ref().map(|check| check(ctx, validated.as_ref().unwrap_or(raw))) {
        None => None,
        Some(ArgsCheck::Done(result)) => {
            result?;
            None
        }
        Some(ArgsCheck::Pending(fut)) => Some(fut),
    };
    Ok((validated, pending))
}

/// Validation of one call's arguments through the capabilities' validate hooks: the validated
/// arguments. Without validate hooks the raw arguments are validated where they are, uncopied.
pub(super) async fn validate_call<D: Clone + Send + Sync + 'static>(
    caps: &Capabilities<D>,
    r: &Ready<'_, D>,
) -> Result<Option<Value>, ToolError> {
    // The tool's arguments validator is the tool's code: its panic is the tool's.
    let panicked = |p| ToolError::Panicked { message: panic_message(p) };
    let hooks = caps.hooks(HookStage::ToolValidate);
    // The usual call: the schema alone, the library's own code (nothing of the tool's to catch).
    if !hooks && r.tool.args_validator.is_none() {
        return validate_args(r.tool, r.base, r.raw_args()).map(|(args, _)| args);
    }
    // The call's own context, for the hooks or the arguments validator (one of them is here).
    let ctx = &r.context();
    let checked = |raw: &Value| {
        std::panic::catch_unwind(AssertUnwindSafe(|| validate_args(r.tool, ctx, raw)))
            .unwrap_or_else(|p| Err(panicked(p)))
    };
    let finish = async move |result: Result<(Option<Value>, Option<PendingCheck>), ToolError>| {
        let (args, pending) = result?;
        if let Some(check) = pending {
            AssertUnwindSafe(check).catch_unwind().await.unwrap_or_else(|p| Err(panicked(p)))?;
        }
        Ok(args)
    };
    if !hooks {
        return finish(checked(r.raw_args())).await;
    }
    let core = |raw: Value| -> BoxFuture<'_, Result<Value, ToolError>> {
        let result = checked(&raw);
        // Arguments valid as they are: the hook's own value goes on.
        Box::pin(async move { Ok(finish(result).await?.unwrap_or(raw)) })
    };
    let info = ToolCallInfo { call: &r.call, def: &r.tool.def };
    caps.validate(0, ctx, info, r.raw_args().clone(), &core).await.map(Some)
}

/// A call set going (with its validated `args`: see [`Ready::validated`]): its tool called now
/// when no capability has execute hooks (what is left to run polled by the returned future),
/// else through the hooks' chain, boxed (a call without execute hooks, which may wait long on
/// its tool, holds none of it). The future also says whether the tool itself returned
/// successfully (what `tool_calls` counts).
pub(super) fn start_call<'a, D: Clone + Send + Sync + 'static>(
    inner: &'a StepConfig<D>,
    caps: &'a Capabilities<D>,
    r: &'a Ready<'a, D>,
    args: Cow<'a, Value>,
) -> Exec<'a, D> {
    if caps.hooks(HookStage::ToolExecute) {
        return Exec::Hooked(Box::pin(execute_hooked(inner, caps, r, args.into_owned())));
    }
    Exec::Direct(ToolRun::start(inner, r, args))
}

/// [`start_call`] through the capabilities' execute hooks.
async fn execute_hooked<'a, D: Clone + Send + Sync + 'static>(
    inner: &'a StepConfig<D>,
    caps: &'a Capabilities<D>,
    r: &'a Ready<'a, D>,
    args: Value,
) -> (Result<ToolOutput, ToolError>, bool) {
    let ran_ok = AtomicBool::new(false);
    let ctx = r.context();
    let core = |args: Value| -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        let ran_ok = &ran_ok;
        Box::pin(async move {
            let (result, ok) = counted(r, ToolRun::start(inner, r, Cow::Owned(args)).await);
            if ok {
                ran_ok.store(true, Ordering::Relaxed);
            }
            result
        })
    };
    let info = ToolCallInfo { call: &r.call, def: &r.tool.def };
    let result = caps.execute(0, &ctx, info, args, &core, &ran_ok).await;
    (result, ran_ok.load(Ordering::Relaxed))
}

/// What a tool returned, with every value nested deeper than the history keeps written as a
/// string of its JSON text (see [`crate::messages::flatten_deep`]) before the hooks, the events
/// and the history copy or walk it.
pub(crate) fn bound_output(output: &mut ToolOutput) {
    match output {
        ToolOutput::Value(v) => crate::messages::flatten_deep(v),
        ToolOutput::Return(ret) => {
            crate::messages::flatten_deep(&mut ret.return_value);
            if let Some(metadata) = &mut ret.metadata {
                crate::messages::flatten_deep(metadata);
            }
            if let Some(content) = &mut ret.content {
                crate::messages::flatten_deep_content(content);
            }
        }
    }
}

pub(super) use crate::error::panic_message;
