//! [`Hooks`]: a capability made of closures, for application code.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::{
    Capability, CapabilityOrdering, ModelRequestContext, ModelRequestNext, ToolCallInfo, ToolExecuteNext,
    ToolValidateNext,
};
use crate::context::RunContext;
use crate::deferred::{DeferredToolRequests, DeferredToolResults};
use crate::error::AgentRunError;
use crate::messages::{ModelResponse, ToolCallPart};
use crate::tool::{ToolDefinition, ToolError, ToolOutput};

/// The call a [`Hooks`] tool hook is about, owned: the model's call and the tool's definition.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OwnedToolCall {
    /// The call as the model made it (name, raw arguments, id).
    pub call: ToolCallPart,
    /// The definition of the called tool, as shown to the model this step.
    pub def: ToolDefinition,
}

impl From<ToolCallInfo<'_>> for OwnedToolCall {
    fn from(info: ToolCallInfo<'_>) -> Self {
        OwnedToolCall { call: info.call.clone(), def: info.def.clone() }
    }
}

type Fut<T> = BoxFuture<'static, T>;
type RunFn<D> = Arc<dyn Fn(RunContext<D>) -> Fut<Result<(), AgentRunError>> + Send + Sync>;
type RunErrorFn<D> = Arc<dyn Fn(RunContext<D>, AgentRunError) -> Fut<AgentRunError> + Send + Sync>;
type PrepareFn<D> =
    Arc<dyn Fn(RunContext<D>, Vec<ToolDefinition>) -> Fut<Result<Vec<ToolDefinition>, AgentRunError>> + Send + Sync>;
type DeferredFn<D> = Arc<dyn Fn(RunContext<D>, DeferredToolRequests) -> Fut<Option<DeferredToolResults>> + Send + Sync>;
type BeforeModelFn<D> =
    Arc<dyn Fn(RunContext<D>, ModelRequestContext) -> Fut<Result<ModelRequestContext, AgentRunError>> + Send + Sync>;
type AfterModelFn<D> = Arc<
    dyn Fn(RunContext<D>, ModelRequestContext, ModelResponse) -> Fut<Result<ModelResponse, AgentRunError>>
        + Send
        + Sync,
>;
type ModelErrorFn<D> = Arc<
    dyn Fn(RunContext<D>, ModelRequestContext, AgentRunError) -> Fut<Result<ModelResponse, AgentRunError>>
        + Send
        + Sync,
>;
type WrapModelFn<D> = Arc<
    dyn for<'a> Fn(
            &'a RunContext<D>,
            ModelRequestContext,
            ModelRequestNext<'a>,
        ) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>>
        + Send
        + Sync,
>;
type ArgsFn<D> = Arc<dyn Fn(RunContext<D>, OwnedToolCall, Value) -> Fut<Result<Value, ToolError>> + Send + Sync>;
type ValidateErrorFn<D> =
    Arc<dyn Fn(RunContext<D>, OwnedToolCall, ToolError) -> Fut<Result<Value, ToolError>> + Send + Sync>;
type WrapValidateFn<D> = Arc<
    dyn for<'a> Fn(
            &'a RunContext<D>,
            ToolCallInfo<'a>,
            Value,
            ToolValidateNext<'a>,
        ) -> BoxFuture<'a, Result<Value, ToolError>>
        + Send
        + Sync,
>;
type AfterExecuteFn<D> =
    Arc<dyn Fn(RunContext<D>, OwnedToolCall, Value, ToolOutput) -> Fut<Result<ToolOutput, ToolError>> + Send + Sync>;
type ExecuteErrorFn<D> =
    Arc<dyn Fn(RunContext<D>, OwnedToolCall, Value, ToolError) -> Fut<Result<ToolOutput, ToolError>> + Send + Sync>;
type WrapExecuteFn<D> = Arc<
    dyn for<'a> Fn(
            &'a RunContext<D>,
            ToolCallInfo<'a>,
            Value,
            ToolExecuteNext<'a>,
        ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>
        + Send
        + Sync,
>;

/// A capability made of closures, one or more per hook: for application code that needs a few
/// hooks without writing a [`Capability`] impl.
///
/// Each closure gets what the hook gets, owned (the [`RunContext`] is a clone, the call an
/// [`OwnedToolCall`]), and returns a future (`async move { ... }`) with the same meaning as
/// the hook's return value: `before_*` and `after_*` return the (possibly changed) value, or an
/// error (`ToolError::Retry` from a tool hook asks the model to try again); `on_*_error`
/// recovers with `Ok(value)` or passes the error on. `wrap_*` closures borrow the context and
/// the call and return a boxed future (`Box::pin(async move { ... })`), calling `next.run(..)`
/// to go on.
///
/// Several closures for one hook run in the order they were added (for `wrap_*`, the first is
/// the outermost). The capability's [`Capability::name`] is `Hooks` unless set with
/// [`named`](Hooks::named), and it has the ordering constraints given to
/// [`with_ordering`](Hooks::with_ordering).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use toolsmith::capability::Hooks;
/// use toolsmith::prelude::*;
///
/// /// Add two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let log = Arc::new(Mutex::new(Vec::<String>::new()));
/// let (l1, l2) = (log.clone(), log.clone());
/// let hooks = Hooks::new()
///     .before_tool_execute(move |_ctx, call, args| {
///         l1.lock().unwrap().push(format!("call {} {args}", call.def.name));
///         async move { Ok(args) }
///     })
///     .wrap_tool_execute(move |_ctx, call, args, next| {
///         let log = l2.clone();
///         Box::pin(async move {
///             let result = next.run(args).await;
///             log.lock().unwrap().push(format!("done {}", call.def.name));
///             result
///         })
///     })
///     .on_run_error(|_ctx, error| async move { error });
///
/// let agent = Agent::builder(TestModel::default()).tool(add).capability(hooks).build()?;
/// agent.run("1 + 1?").run_sync()?;
/// assert_eq!(*log.lock().unwrap(), [r#"call add {"a":0,"b":0}"#, "done add"]);
/// # Ok(())
/// # }
/// ```
pub struct Hooks<D = ()> {
    name: Option<String>,
    ordering: Option<CapabilityOrdering>,
    before_run: Vec<RunFn<D>>,
    after_run: Vec<RunFn<D>>,
    on_run_error: Vec<RunErrorFn<D>>,
    prepare_tools: Vec<PrepareFn<D>>,
    prepare_output_tools: Vec<PrepareFn<D>>,
    handle_deferred: Vec<DeferredFn<D>>,
    before_model_request: Vec<BeforeModelFn<D>>,
    after_model_request: Vec<AfterModelFn<D>>,
    wrap_model_request: Vec<WrapModelFn<D>>,
    on_model_request_error: Vec<ModelErrorFn<D>>,
    before_tool_validate: Vec<ArgsFn<D>>,
    after_tool_validate: Vec<ArgsFn<D>>,
    wrap_tool_validate: Vec<WrapValidateFn<D>>,
    on_tool_validate_error: Vec<ValidateErrorFn<D>>,
    before_tool_execute: Vec<ArgsFn<D>>,
    after_tool_execute: Vec<AfterExecuteFn<D>>,
    wrap_tool_execute: Vec<WrapExecuteFn<D>>,
    on_tool_execute_error: Vec<ExecuteErrorFn<D>>,
}

impl<D> Default for Hooks<D> {
    fn default() -> Self {
        Hooks {
            name: None,
            ordering: None,
            before_run: Vec::new(),
            after_run: Vec::new(),
            on_run_error: Vec::new(),
            prepare_tools: Vec::new(),
            prepare_output_tools: Vec::new(),
            handle_deferred: Vec::new(),
            before_model_request: Vec::new(),
            after_model_request: Vec::new(),
            wrap_model_request: Vec::new(),
            on_model_request_error: Vec::new(),
            before_tool_validate: Vec::new(),
            after_tool_validate: Vec::new(),
            wrap_tool_validate: Vec::new(),
            on_tool_validate_error: Vec::new(),
            before_tool_execute: Vec::new(),
            after_tool_execute: Vec::new(),
            wrap_tool_execute: Vec::new(),
            on_tool_execute_error: Vec::new(),
        }
    }
}

impl<D> Clone for Hooks<D> {
    fn clone(&self) -> Self {
        Hooks {
            name: self.name.clone(),
            ordering: self.ordering.clone(),
            before_run: self.before_run.clone(),
            after_run: self.after_run.clone(),
            on_run_error: self.on_run_error.clone(),
            prepare_tools: self.prepare_tools.clone(),
            prepare_output_tools: self.prepare_output_tools.clone(),
            handle_deferred: self.handle_deferred.clone(),
            before_model_request: self.before_model_request.clone(),
            after_model_request: self.after_model_request.clone(),
            wrap_model_request: self.wrap_model_request.clone(),
            on_model_request_error: self.on_model_request_error.clone(),
            before_tool_validate: self.before_tool_validate.clone(),
            after_tool_validate: self.after_tool_validate.clone(),
            wrap_tool_validate: self.wrap_tool_validate.clone(),
            on_tool_validate_error: self.on_tool_validate_error.clone(),
            before_tool_execute: self.before_tool_execute.clone(),
            after_tool_execute: self.after_tool_execute.clone(),
            wrap_tool_execute: self.wrap_tool_execute.clone(),
            on_tool_execute_error: self.on_tool_execute_error.clone(),
        }
    }
}

impl<D> std::fmt::Debug for Hooks<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks").field("name", &self.name).field("ordering", &self.ordering).finish_non_exhaustive()
    }
}

impl<D: Clone + Send + Sync + 'static> Hooks<D> {
    /// No hooks yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Names the capability (for ordering constraints and error messages; default `Hooks`).
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the capability's ordering constraints.
    pub fn with_ordering(mut self, ordering: CapabilityOrdering) -> Self {
        self.ordering = Some(ordering);
        self
    }

    /// When a run starts; an error ends the run (through `on_run_error`).
    pub fn before_run<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>) -> R + Send + Sync + 'static,
        R: Future<Output = Result<(), AgentRunError>> + Send + 'static,
    {
        self.before_run.push(Arc::new(move |ctx| Box::pin(f(ctx))));
        self
    }

    /// When a run ends with an output or deferred requests.
    pub fn after_run<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>) -> R + Send + Sync + 'static,
        R: Future<Output = Result<(), AgentRunError>> + Send + 'static,
    {
        self.after_run.push(Arc::new(move |ctx| Box::pin(f(ctx))));
        self
    }

    /// When a run fails: return the error (or another one).
    pub fn on_run_error<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, AgentRunError) -> R + Send + Sync + 'static,
        R: Future<Output = AgentRunError> + Send + 'static,
    {
        self.on_run_error.push(Arc::new(move |ctx, e| Box::pin(f(ctx, e))));
        self
    }

    /// Filters or edits the function tool definitions of each step.
    pub fn prepare_tools<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, Vec<ToolDefinition>) -> R + Send + Sync + 'static,
        R: Future<Output = Result<Vec<ToolDefinition>, AgentRunError>> + Send + 'static,
    {
        self.prepare_tools.push(Arc::new(move |ctx, defs| Box::pin(f(ctx, defs))));
        self
    }

    /// Filters or edits the output tool definitions of each step.
    pub fn prepare_output_tools<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, Vec<ToolDefinition>) -> R + Send + Sync + 'static,
        R: Future<Output = Result<Vec<ToolDefinition>, AgentRunError>> + Send + 'static,
    {
        self.prepare_output_tools.push(Arc::new(move |ctx, defs| Box::pin(f(ctx, defs))));
        self
    }

    /// Settles deferred calls inline (see
    /// [`HandleDeferredToolCalls`](super::HandleDeferredToolCalls)); each closure gets the
    /// calls the previous ones left unanswered.
    pub fn handle_deferred_tool_calls<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, DeferredToolRequests) -> R + Send + Sync + 'static,
        R: Future<Output = Option<DeferredToolResults>> + Send + 'static,
    {
        self.handle_deferred.push(Arc::new(move |ctx, r| Box::pin(f(ctx, r))));
        self
    }

    /// Before each model request: may change the messages, settings and parameters sent.
    pub fn before_model_request<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, ModelRequestContext) -> R + Send + Sync + 'static,
        R: Future<Output = Result<ModelRequestContext, AgentRunError>> + Send + 'static,
    {
        self.before_model_request.push(Arc::new(move |ctx, req| Box::pin(f(ctx, req))));
        self
    }

    /// After each model response: may change it.
    pub fn after_model_request<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, ModelRequestContext, ModelResponse) -> R + Send + Sync + 'static,
        R: Future<Output = Result<ModelResponse, AgentRunError>> + Send + 'static,
    {
        self.after_model_request.push(Arc::new(move |ctx, req, resp| Box::pin(f(ctx, req, resp))));
        self
    }

    /// Around each model request: `next.run(request)` makes it.
    pub fn wrap_model_request<F>(mut self, f: F) -> Self
    where
        F: for<'a> Fn(
                &'a RunContext<D>,
                ModelRequestContext,
                ModelRequestNext<'a>,
            ) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>>
            + Send
            + Sync
            + 'static,
    {
        self.wrap_model_request.push(Arc::new(f));
        self
    }

    /// When a model request fails: `Ok(response)` recovers, `Err` passes the error on.
    pub fn on_model_request_error<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, ModelRequestContext, AgentRunError) -> R + Send + Sync + 'static,
        R: Future<Output = Result<ModelResponse, AgentRunError>> + Send + 'static,
    {
        self.on_model_request_error.push(Arc::new(move |ctx, req, e| Box::pin(f(ctx, req, e))));
        self
    }

    /// Before a call's arguments are validated: may change the raw arguments.
    pub fn before_tool_validate<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, OwnedToolCall, Value) -> R + Send + Sync + 'static,
        R: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.before_tool_validate.push(Arc::new(move |ctx, call, args| Box::pin(f(ctx, call, args))));
        self
    }

    /// After the arguments validated: may change the validated arguments.
    pub fn after_tool_validate<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, OwnedToolCall, Value) -> R + Send + Sync + 'static,
        R: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.after_tool_validate.push(Arc::new(move |ctx, call, args| Box::pin(f(ctx, call, args))));
        self
    }

    /// Around the validation of each call: `next.run(args)` validates.
    pub fn wrap_tool_validate<F>(mut self, f: F) -> Self
    where
        F: for<'a> Fn(
                &'a RunContext<D>,
                ToolCallInfo<'a>,
                Value,
                ToolValidateNext<'a>,
            ) -> BoxFuture<'a, Result<Value, ToolError>>
            + Send
            + Sync
            + 'static,
    {
        self.wrap_tool_validate.push(Arc::new(f));
        self
    }

    /// When validation fails: `Ok(args)` recovers with validated arguments.
    pub fn on_tool_validate_error<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, OwnedToolCall, ToolError) -> R + Send + Sync + 'static,
        R: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.on_tool_validate_error.push(Arc::new(move |ctx, call, e| Box::pin(f(ctx, call, e))));
        self
    }

    /// Before a tool runs: may change the validated arguments.
    pub fn before_tool_execute<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, OwnedToolCall, Value) -> R + Send + Sync + 'static,
        R: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.before_tool_execute.push(Arc::new(move |ctx, call, args| Box::pin(f(ctx, call, args))));
        self
    }

    /// After a tool returned: may change the result (the arguments are the ones it ran with).
    pub fn after_tool_execute<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, OwnedToolCall, Value, ToolOutput) -> R + Send + Sync + 'static,
        R: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        self.after_tool_execute.push(Arc::new(move |ctx, call, args, out| Box::pin(f(ctx, call, args, out))));
        self
    }

    /// Around the execution of each call: `next.run(args)` executes.
    pub fn wrap_tool_execute<F>(mut self, f: F) -> Self
    where
        F: for<'a> Fn(
                &'a RunContext<D>,
                ToolCallInfo<'a>,
                Value,
                ToolExecuteNext<'a>,
            ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>
            + Send
            + Sync
            + 'static,
    {
        self.wrap_tool_execute.push(Arc::new(f));
        self
    }

    /// When a tool fails (not a retry or a deferral): `Ok(result)` recovers.
    pub fn on_tool_execute_error<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, OwnedToolCall, Value, ToolError) -> R + Send + Sync + 'static,
        R: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        self.on_tool_execute_error.push(Arc::new(move |ctx, call, args, e| Box::pin(f(ctx, call, args, e))));
        self
    }

    fn wrap_model_at<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        request: ModelRequestContext,
        next: Arc<ModelRequestNext<'a>>,
    ) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>> {
        match self.wrap_model_request.get(i) {
            None => next.run(request),
            Some(f) => {
                let inner = ModelRequestNext::new(move |r| self.wrap_model_at(i + 1, ctx, r, next.clone()));
                f(ctx, request, inner)
            }
        }
    }

    fn wrap_validate_at<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: Arc<ToolValidateNext<'a>>,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        match self.wrap_tool_validate.get(i) {
            None => next.run(args),
            Some(f) => {
                let inner = ToolValidateNext::new(move |a| self.wrap_validate_at(i + 1, ctx, call, a, next.clone()));
                f(ctx, call, args, inner)
            }
        }
    }

    fn wrap_execute_at<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: Arc<ToolExecuteNext<'a>>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        match self.wrap_tool_execute.get(i) {
            None => next.run(args),
            Some(f) => {
                let inner = ToolExecuteNext::new(move |a| self.wrap_execute_at(i + 1, ctx, call, a, next.clone()));
                f(ctx, call, args, inner)
            }
        }
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for Hooks<D> {
    fn name(&self) -> String {
        self.name.clone().unwrap_or_else(|| "Hooks".into())
    }

    fn ordering(&self) -> Option<CapabilityOrdering> {
        self.ordering.clone()
    }

    async fn handle_deferred_tool_calls(
        &self,
        ctx: &RunContext<D>,
        requests: &DeferredToolRequests,
    ) -> Option<DeferredToolResults> {
        let mut results: Option<DeferredToolResults> = None;
        let mut remaining = requests.clone();
        for f in &self.handle_deferred {
            if remaining.is_empty() {
                break;
            }
            if let Some(r) = f(ctx.clone(), remaining.clone()).await {
                remaining = remaining.remaining(&r);
                results.get_or_insert_with(DeferredToolResults::new).update(r);
            }
        }
        results
    }

    async fn prepare_output_tools(
        &self,
        ctx: &RunContext<D>,
        mut tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        for f in &self.prepare_output_tools {
            tools = f(ctx.clone(), tools).await?;
        }
        Ok(tools)
    }

    async fn before_run(&self, ctx: &RunContext<D>) -> Result<(), AgentRunError> {
        for f in &self.before_run {
            f(ctx.clone()).await?;
        }
        Ok(())
    }

    async fn after_run(&self, ctx: &RunContext<D>) -> Result<(), AgentRunError> {
        for f in &self.after_run {
            f(ctx.clone()).await?;
        }
        Ok(())
    }

    async fn on_run_error(&self, ctx: &RunContext<D>, mut error: AgentRunError) -> AgentRunError {
        for f in &self.on_run_error {
            error = f(ctx.clone(), error).await;
        }
        error
    }

    async fn prepare_tools(
        &self,
        ctx: &RunContext<D>,
        mut tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        for f in &self.prepare_tools {
            tools = f(ctx.clone(), tools).await?;
        }
        Ok(tools)
    }

    async fn before_model_request(
        &self,
        ctx: &RunContext<D>,
        mut request: ModelRequestContext,
    ) -> Result<ModelRequestContext, AgentRunError> {
        for f in &self.before_model_request {
            request = f(ctx.clone(), request).await?;
        }
        Ok(request)
    }

    async fn after_model_request(
        &self,
        ctx: &RunContext<D>,
        request: &ModelRequestContext,
        mut response: ModelResponse,
    ) -> Result<ModelResponse, AgentRunError> {
        for f in &self.after_model_request {
            response = f(ctx.clone(), request.clone(), response).await?;
        }
        Ok(response)
    }

    fn wrap_model_request<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        request: ModelRequestContext,
        next: ModelRequestNext<'a>,
    ) -> impl Future<Output = Result<ModelResponse, AgentRunError>> + Send + 'a {
        self.wrap_model_at(0, ctx, request, Arc::new(next))
    }

    async fn on_model_request_error(
        &self,
        ctx: &RunContext<D>,
        request: &ModelRequestContext,
        error: AgentRunError,
    ) -> Result<ModelResponse, AgentRunError> {
        let mut outcome = Err(error);
        for f in &self.on_model_request_error {
            match outcome {
                Err(e) => outcome = f(ctx.clone(), request.clone(), e).await,
                Ok(_) => break,
            }
        }
        outcome
    }

    async fn before_tool_validate(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        mut args: Value,
    ) -> Result<Value, ToolError> {
        for f in &self.before_tool_validate {
            args = f(ctx.clone(), call.into(), args).await?;
        }
        Ok(args)
    }

    async fn after_tool_validate(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        mut args: Value,
    ) -> Result<Value, ToolError> {
        for f in &self.after_tool_validate {
            args = f(ctx.clone(), call.into(), args).await?;
        }
        Ok(args)
    }

    async fn on_tool_validate_error(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        error: ToolError,
    ) -> Result<Value, ToolError> {
        let mut outcome = Err(error);
        for f in &self.on_tool_validate_error {
            match outcome {
                Err(e) => outcome = f(ctx.clone(), call.into(), e).await,
                Ok(_) => break,
            }
        }
        outcome
    }

    fn wrap_tool_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolValidateNext<'a>,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
        self.wrap_validate_at(0, ctx, call, args, Arc::new(next))
    }

    async fn before_tool_execute(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        mut args: Value,
    ) -> Result<Value, ToolError> {
        for f in &self.before_tool_execute {
            args = f(ctx.clone(), call.into(), args).await?;
        }
        Ok(args)
    }

    async fn after_tool_execute(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: &Value,
        mut result: ToolOutput,
    ) -> Result<ToolOutput, ToolError> {
        for f in &self.after_tool_execute {
            result = f(ctx.clone(), call.into(), args.clone(), result).await?;
        }
        Ok(result)
    }

    async fn on_tool_execute_error(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: &Value,
        error: ToolError,
    ) -> Result<ToolOutput, ToolError> {
        let mut outcome = Err(error);
        for f in &self.on_tool_execute_error {
            match outcome {
                Err(e) => outcome = f(ctx.clone(), call.into(), args.clone(), e).await,
                Ok(_) => break,
            }
        }
        outcome
    }

    fn wrap_tool_execute<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolExecuteNext<'a>,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send + 'a {
        self.wrap_execute_at(0, ctx, call, args, Arc::new(next))
    }
}
