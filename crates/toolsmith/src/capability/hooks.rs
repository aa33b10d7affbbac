//! [`Hooks`]: a capability made of closures, for application code.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::{
    AgentNode, Capability, CapabilityOrdering, EventBoxStream, ModelRequestContext, ModelRequestNext, NodeNext,
    NodeResult, OutputInfo, OutputKind, OutputNext, RunNext, ToolCallInfo, ToolExecuteNext, ToolValidateNext,
};
use crate::agent::{AgentEvent, RunOutput};
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

/// The output a [`Hooks`] output hook is about, owned (see [`OutputInfo`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OwnedOutput {
    /// How the output came.
    pub kind: OutputKind,
    /// The output tool call, for tool output.
    pub call: Option<ToolCallPart>,
    /// The output tool's definition, for structured output.
    pub def: Option<ToolDefinition>,
}

impl From<OutputInfo<'_>> for OwnedOutput {
    fn from(info: OutputInfo<'_>) -> Self {
        OwnedOutput { kind: info.kind, call: info.call.cloned(), def: info.def.cloned() }
    }
}

type Fut<T> = BoxFuture<'static, T>;
type RunFn<D> = Arc<dyn Fn(RunContext<D>) -> Fut<Result<(), AgentRunError>> + Send + Sync>;
type AfterRunFn<D> = Arc<dyn Fn(RunContext<D>, RunOutput) -> Fut<Result<RunOutput, AgentRunError>> + Send + Sync>;
type RunErrorFn<D> = Arc<dyn Fn(RunContext<D>, AgentRunError) -> Fut<Result<RunOutput, AgentRunError>> + Send + Sync>;
type WrapRunFn<D> = Arc<
    dyn for<'a> Fn(&'a RunContext<D>, RunNext<'a>) -> BoxFuture<'a, Result<RunOutput, AgentRunError>> + Send + Sync,
>;
type BeforeNodeFn<D> = Arc<dyn Fn(RunContext<D>, AgentNode) -> Fut<Result<AgentNode, AgentRunError>> + Send + Sync>;
type AfterNodeFn<D> =
    Arc<dyn Fn(RunContext<D>, AgentNode, NodeResult) -> Fut<Result<NodeResult, AgentRunError>> + Send + Sync>;
type WrapNodeFn<D> = Arc<
    dyn for<'a> Fn(&'a RunContext<D>, AgentNode, NodeNext<'a>) -> BoxFuture<'a, Result<NodeResult, AgentRunError>>
        + Send
        + Sync,
>;
type NodeErrorFn<D> =
    Arc<dyn Fn(RunContext<D>, AgentNode, AgentRunError) -> Fut<Result<NodeResult, AgentRunError>> + Send + Sync>;
type EventFn = Arc<dyn Fn(AgentEvent) -> Fut<()> + Send + Sync>;
type OutputFn<D> = Arc<dyn Fn(RunContext<D>, OwnedOutput, Value) -> Fut<Result<Value, ToolError>> + Send + Sync>;
type OutputErrorFn<D> =
    Arc<dyn Fn(RunContext<D>, OwnedOutput, Value, ToolError) -> Fut<Result<Value, ToolError>> + Send + Sync>;
type WrapOutputFn<D> = Arc<
    dyn for<'a> Fn(&'a RunContext<D>, OutputInfo<'a>, Value, OutputNext<'a>) -> BoxFuture<'a, Result<Value, ToolError>>
        + Send
        + Sync,
>;
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
///     .on_run_error(|_ctx, error| async move { Err(error) });
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
    after_run: Vec<AfterRunFn<D>>,
    on_run_error: Vec<RunErrorFn<D>>,
    wrap_run: Vec<WrapRunFn<D>>,
    before_node_run: Vec<BeforeNodeFn<D>>,
    after_node_run: Vec<AfterNodeFn<D>>,
    wrap_node_run: Vec<WrapNodeFn<D>>,
    on_node_run_error: Vec<NodeErrorFn<D>>,
    on_event: Vec<EventFn>,
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
    before_output_validate: Vec<OutputFn<D>>,
    after_output_validate: Vec<OutputFn<D>>,
    wrap_output_validate: Vec<WrapOutputFn<D>>,
    on_output_validate_error: Vec<OutputErrorFn<D>>,
    before_output_process: Vec<OutputFn<D>>,
    after_output_process: Vec<OutputFn<D>>,
    wrap_output_process: Vec<WrapOutputFn<D>>,
    on_output_process_error: Vec<OutputErrorFn<D>>,
}

impl<D> Default for Hooks<D> {
    fn default() -> Self {
        Hooks {
            name: None,
            ordering: None,
            before_run: Vec::new(),
            after_run: Vec::new(),
            on_run_error: Vec::new(),
            wrap_run: Vec::new(),
            before_node_run: Vec::new(),
            after_node_run: Vec::new(),
            wrap_node_run: Vec::new(),
            on_node_run_error: Vec::new(),
            on_event: Vec::new(),
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
            before_output_validate: Vec::new(),
            after_output_validate: Vec::new(),
            wrap_output_validate: Vec::new(),
            on_output_validate_error: Vec::new(),
            before_output_process: Vec::new(),
            after_output_process: Vec::new(),
            wrap_output_process: Vec::new(),
            on_output_process_error: Vec::new(),
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
            wrap_run: self.wrap_run.clone(),
            before_node_run: self.before_node_run.clone(),
            after_node_run: self.after_node_run.clone(),
            wrap_node_run: self.wrap_node_run.clone(),
            on_node_run_error: self.on_node_run_error.clone(),
            on_event: self.on_event.clone(),
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
            before_output_validate: self.before_output_validate.clone(),
            after_output_validate: self.after_output_validate.clone(),
            wrap_output_validate: self.wrap_output_validate.clone(),
            on_output_validate_error: self.on_output_validate_error.clone(),
            before_output_process: self.before_output_process.clone(),
            after_output_process: self.after_output_process.clone(),
            wrap_output_process: self.wrap_output_process.clone(),
            on_output_process_error: self.on_output_process_error.clone(),
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

    /// When a run ends with an output or deferred requests: may change the output.
    pub fn after_run<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, RunOutput) -> R + Send + Sync + 'static,
        R: Future<Output = Result<RunOutput, AgentRunError>> + Send + 'static,
    {
        self.after_run.push(Arc::new(move |ctx, out| Box::pin(f(ctx, out))));
        self
    }

    /// Around the whole run: `next.run()` runs it.
    pub fn wrap_run<F>(mut self, f: F) -> Self
    where
        F: for<'a> Fn(&'a RunContext<D>, RunNext<'a>) -> BoxFuture<'a, Result<RunOutput, AgentRunError>>
            + Send
            + Sync
            + 'static,
    {
        self.wrap_run.push(Arc::new(f));
        self
    }

    /// When a run fails: `Err` passes the error (or another one) on, `Ok(output)` recovers.
    pub fn on_run_error<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, AgentRunError) -> R + Send + Sync + 'static,
        R: Future<Output = Result<RunOutput, AgentRunError>> + Send + 'static,
    {
        self.on_run_error.push(Arc::new(move |ctx, e| Box::pin(f(ctx, e))));
        self
    }

    /// Before each node of the run: may replace it with a node of the same kind.
    pub fn before_node_run<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, AgentNode) -> R + Send + Sync + 'static,
        R: Future<Output = Result<AgentNode, AgentRunError>> + Send + 'static,
    {
        self.before_node_run.push(Arc::new(move |ctx, node| Box::pin(f(ctx, node))));
        self
    }

    /// After each node that succeeded: may change what comes next.
    pub fn after_node_run<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, AgentNode, NodeResult) -> R + Send + Sync + 'static,
        R: Future<Output = Result<NodeResult, AgentRunError>> + Send + 'static,
    {
        self.after_node_run.push(Arc::new(move |ctx, node, result| Box::pin(f(ctx, node, result))));
        self
    }

    /// Around each node: `next.run(node)` runs it.
    pub fn wrap_node_run<F>(mut self, f: F) -> Self
    where
        F: for<'a> Fn(&'a RunContext<D>, AgentNode, NodeNext<'a>) -> BoxFuture<'a, Result<NodeResult, AgentRunError>>
            + Send
            + Sync
            + 'static,
    {
        self.wrap_node_run.push(Arc::new(f));
        self
    }

    /// When a node fails: `Err` passes the error on, `Ok(result)` recovers.
    pub fn on_node_run_error<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, AgentNode, AgentRunError) -> R + Send + Sync + 'static,
        R: Future<Output = Result<NodeResult, AgentRunError>> + Send + 'static,
    {
        self.on_node_run_error.push(Arc::new(move |ctx, node, e| Box::pin(f(ctx, node, e))));
        self
    }

    /// With each event of the run, in order (the events pass on unchanged; see
    /// [`ProcessEventStream`](super::ProcessEventStream) to change them). A run with such a
    /// hook produces its events even without an event handler.
    pub fn on_event<F, R>(mut self, f: F) -> Self
    where
        F: Fn(AgentEvent) -> R + Send + Sync + 'static,
        R: Future<Output = ()> + Send + 'static,
    {
        self.on_event.push(Arc::new(move |e| Box::pin(f(e))));
        self
    }

    /// Before structured output is validated: may change the raw output, or ask for a retry.
    pub fn before_output_validate<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, OwnedOutput, Value) -> R + Send + Sync + 'static,
        R: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.before_output_validate.push(Arc::new(move |ctx, out, v| Box::pin(f(ctx, out, v))));
        self
    }

    /// After the output validated: may change the value, or ask for a retry.
    pub fn after_output_validate<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, OwnedOutput, Value) -> R + Send + Sync + 'static,
        R: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.after_output_validate.push(Arc::new(move |ctx, out, v| Box::pin(f(ctx, out, v))));
        self
    }

    /// Around the output's validation: `next.run(raw)` validates.
    pub fn wrap_output_validate<F>(mut self, f: F) -> Self
    where
        F: for<'a> Fn(
                &'a RunContext<D>,
                OutputInfo<'a>,
                Value,
                OutputNext<'a>,
            ) -> BoxFuture<'a, Result<Value, ToolError>>
            + Send
            + Sync
            + 'static,
    {
        self.wrap_output_validate.push(Arc::new(f));
        self
    }

    /// When the output fails validation: `Ok(value)` recovers (the closure gets the raw output).
    pub fn on_output_validate_error<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, OwnedOutput, Value, ToolError) -> R + Send + Sync + 'static,
        R: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.on_output_validate_error.push(Arc::new(move |ctx, out, v, e| Box::pin(f(ctx, out, v, e))));
        self
    }

    /// Before the validated output is processed: may change it, or ask for a retry.
    pub fn before_output_process<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, OwnedOutput, Value) -> R + Send + Sync + 'static,
        R: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.before_output_process.push(Arc::new(move |ctx, out, v| Box::pin(f(ctx, out, v))));
        self
    }

    /// After the output was processed: may change the result, or ask for a retry.
    pub fn after_output_process<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, OwnedOutput, Value) -> R + Send + Sync + 'static,
        R: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.after_output_process.push(Arc::new(move |ctx, out, v| Box::pin(f(ctx, out, v))));
        self
    }

    /// Around the output's processing: `next.run(value)` processes.
    pub fn wrap_output_process<F>(mut self, f: F) -> Self
    where
        F: for<'a> Fn(
                &'a RunContext<D>,
                OutputInfo<'a>,
                Value,
                OutputNext<'a>,
            ) -> BoxFuture<'a, Result<Value, ToolError>>
            + Send
            + Sync
            + 'static,
    {
        self.wrap_output_process.push(Arc::new(f));
        self
    }

    /// When processing fails (not a retry): `Ok(value)` recovers.
    pub fn on_output_process_error<F, R>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, OwnedOutput, Value, ToolError) -> R + Send + Sync + 'static,
        R: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.on_output_process_error.push(Arc::new(move |ctx, out, v, e| Box::pin(f(ctx, out, v, e))));
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

    fn wrap_run_at<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        next: Arc<RunNext<'a>>,
    ) -> BoxFuture<'a, Result<RunOutput, AgentRunError>> {
        match self.wrap_run.get(i) {
            None => next.run(),
            Some(f) => {
                let inner = RunNext::new(move || self.wrap_run_at(i + 1, ctx, next.clone()));
                f(ctx, inner)
            }
        }
    }

    fn wrap_node_at<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        node: AgentNode,
        next: Arc<NodeNext<'a>>,
    ) -> BoxFuture<'a, Result<NodeResult, AgentRunError>> {
        match self.wrap_node_run.get(i) {
            None => next.run(node),
            Some(f) => {
                let inner = NodeNext::new(move |n| self.wrap_node_at(i + 1, ctx, n, next.clone()));
                f(ctx, node, inner)
            }
        }
    }

    fn wrap_output_at<'a>(
        &'a self,
        wraps: &'a [WrapOutputFn<D>],
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: Value,
        next: Arc<OutputNext<'a>>,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        match wraps.split_first() {
            None => next.run(value),
            Some((f, rest)) => {
                let inner = OutputNext::new(move |v| self.wrap_output_at(rest, ctx, output, v, next.clone()));
                f(ctx, output, value, inner)
            }
        }
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

/// Each closure on the previous one's value (the output `before_*` / `after_*` hooks).
async fn thread_output<D: Clone>(
    fns: &[OutputFn<D>],
    ctx: &RunContext<D>,
    output: OutputInfo<'_>,
    mut value: Value,
) -> Result<Value, ToolError> {
    for f in fns {
        value = f(ctx.clone(), output.into(), value).await?;
    }
    Ok(value)
}

/// The error offered to each closure until one recovers (the output `on_*_error` hooks).
async fn recover_output<D: Clone>(
    fns: &[OutputErrorFn<D>],
    ctx: &RunContext<D>,
    output: OutputInfo<'_>,
    value: &Value,
    error: ToolError,
) -> Result<Value, ToolError> {
    let mut outcome = Err(error);
    for f in fns {
        let Err(e) = outcome else { break };
        outcome = f(ctx.clone(), output.into(), value.clone(), e).await;
    }
    outcome
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for Hooks<D> {
    fn name(&self) -> String {
        self.name.clone().unwrap_or_else(|| "Hooks".into())
    }

    fn ordering(&self) -> Option<CapabilityOrdering> {
        self.ordering.clone()
    }

    fn has_prepare_tools(&self) -> bool {
        !self.prepare_tools.is_empty()
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

    async fn after_run(&self, ctx: &RunContext<D>, mut output: RunOutput) -> Result<RunOutput, AgentRunError> {
        for f in &self.after_run {
            output = f(ctx.clone(), output).await?;
        }
        Ok(output)
    }

    fn wrap_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        next: RunNext<'a>,
    ) -> impl Future<Output = Result<RunOutput, AgentRunError>> + Send + 'a {
        self.wrap_run_at(0, ctx, Arc::new(next))
    }

    async fn on_run_error(&self, ctx: &RunContext<D>, error: AgentRunError) -> Result<RunOutput, AgentRunError> {
        let mut outcome = Err(error);
        for f in &self.on_run_error {
            match outcome {
                Err(e) => outcome = f(ctx.clone(), e).await,
                Ok(_) => break,
            }
        }
        outcome
    }

    async fn before_node_run(&self, ctx: &RunContext<D>, mut node: AgentNode) -> Result<AgentNode, AgentRunError> {
        for f in &self.before_node_run {
            node = f(ctx.clone(), node).await?;
        }
        Ok(node)
    }

    async fn after_node_run(
        &self,
        ctx: &RunContext<D>,
        node: &AgentNode,
        mut result: NodeResult,
    ) -> Result<NodeResult, AgentRunError> {
        for f in &self.after_node_run {
            result = f(ctx.clone(), node.clone(), result).await?;
        }
        Ok(result)
    }

    fn wrap_node_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        node: AgentNode,
        next: NodeNext<'a>,
    ) -> impl Future<Output = Result<NodeResult, AgentRunError>> + Send + 'a {
        self.wrap_node_at(0, ctx, node, Arc::new(next))
    }

    async fn on_node_run_error(
        &self,
        ctx: &RunContext<D>,
        node: &AgentNode,
        error: AgentRunError,
    ) -> Result<NodeResult, AgentRunError> {
        let mut outcome = Err(error);
        for f in &self.on_node_run_error {
            match outcome {
                Err(e) => outcome = f(ctx.clone(), node.clone(), e).await,
                Ok(_) => break,
            }
        }
        outcome
    }

    fn wraps_event_stream(&self) -> bool {
        !self.on_event.is_empty()
    }

    fn wrap_event_stream(&self, _ctx: &RunContext<D>, events: EventBoxStream) -> EventBoxStream {
        use futures::StreamExt;
        let handlers = self.on_event.clone();
        events
            .then(move |event| {
                let seen: Vec<_> = handlers.iter().map(|f| f(event.clone())).collect();
                async move {
                    for s in seen {
                        s.await;
                    }
                    event
                }
            })
            .boxed()
    }

    async fn before_output_validate(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        raw: Value,
    ) -> Result<Value, ToolError> {
        thread_output(&self.before_output_validate, ctx, output, raw).await
    }

    async fn after_output_validate(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: Value,
    ) -> Result<Value, ToolError> {
        thread_output(&self.after_output_validate, ctx, output, value).await
    }

    fn wrap_output_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        raw: Value,
        next: OutputNext<'a>,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
        self.wrap_output_at(&self.wrap_output_validate, ctx, output, raw, Arc::new(next))
    }

    async fn on_output_validate_error(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        raw: &Value,
        error: ToolError,
    ) -> Result<Value, ToolError> {
        recover_output(&self.on_output_validate_error, ctx, output, raw, error).await
    }

    async fn before_output_process(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: Value,
    ) -> Result<Value, ToolError> {
        thread_output(&self.before_output_process, ctx, output, value).await
    }

    async fn after_output_process(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: Value,
    ) -> Result<Value, ToolError> {
        thread_output(&self.after_output_process, ctx, output, value).await
    }

    fn wrap_output_process<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: Value,
        next: OutputNext<'a>,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
        self.wrap_output_at(&self.wrap_output_process, ctx, output, value, Arc::new(next))
    }

    async fn on_output_process_error(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: &Value,
        error: ToolError,
    ) -> Result<Value, ToolError> {
        recover_output(&self.on_output_process_error, ctx, output, value, error).await
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
