//! The [`Capability`] trait: every hook, with a default that changes nothing.

use std::any::Any;
use std::future::Future;
use std::time::Duration;

use serde_json::Value;

use super::{
    AgentNode, BoxedCapability, CapabilityOrdering, Delivery, DeliveryPoint, EventBoxStream, HookStage,
    ModelRequestContext, ModelRequestNext, NodeNext, NodeResult, OutputInfo, OutputNext, PrefixTools, RunNext,
    ToolCallInfo, ToolExecuteNext, ToolValidateNext,
};
use crate::context::RunContext;
use crate::deferred::{DeferredToolRequests, DeferredToolResults};
use crate::error::AgentRunError;
use crate::messages::ModelResponse;
use crate::model::ModelSettings;
use crate::run::RunOutput;
use crate::tool::{ToolDefinition, ToolError, ToolOutput};
use crate::toolset::BoxedToolset;

/// Hooks around every stage of a run. Every method has a default that changes nothing.
pub trait Capability<D>: Send + Sync + 'static {
    /// A name for error messages, ordering constraints and specs: by default the type's name
    /// without its path or generic parameters (`PrepareTools`, not `PrepareTools<my::Deps>`).
    fn name(&self) -> String {
        short_type_name(std::any::type_name::<Self>())
    }

    /// Constraints on this capability's place in the chain: outermost or innermost, around or
    /// inside other capabilities (by [`Capability::name`]), and capabilities it needs. The agent
    /// builder sorts its capabilities to satisfy them and reports a cycle or a missing
    /// requirement as a [`UserError`](crate::UserError). The default: no constraint.
    fn ordering(&self) -> Option<CapabilityOrdering> {
        None
    }

    /// Calls `visitor` on each leaf capability: this one, or (for wrappers such as
    /// [`PrefixTools`] and [`BoxedCapability`]) the capability they wrap. Downcast the
    /// [`Any`] to find a capability of a given type.
    fn apply(&self, visitor: &mut dyn FnMut(&dyn Any))
    where
        Self: Sized,
    {
        visitor(self)
    }

    /// This capability with the names of the tools of its [`Capability::toolset`] prefixed
    /// (`{prefix}_{name}`); its hooks are unchanged. See [`PrefixTools`].
    fn prefix_tools(self, prefix: impl Into<String>) -> PrefixTools<D>
    where
        Self: Sized,
        D: Sync + 'static,
    {
        PrefixTools::new(prefix, self)
    }

    /// The instance to use for one run (called once at the start of each run, before any other
    /// hook). Return a fresh instance to keep per-run state apart; the default shares `self`.
    fn for_run(&self, ctx: &RunContext<D>) -> Option<BoxedCapability<D>> {
        let _ = ctx;
        None
    }

    /// A toolset this capability contributes to every run (collected when the agent is built).
    fn toolset(&self) -> Option<BoxedToolset<D>> {
        None
    }

    /// Wraps the run's assembled toolset (the agent's toolsets and the capabilities', combined;
    /// output tools are not in it), or `None` to leave it. Called once per run, after
    /// `for_run`; with several capabilities, the first one's wrapper is the outermost. The
    /// capabilities' `prepare_tools` then apply to the tools it offers. Use it for cross-cutting
    /// adaptors such as [`ToolsetExt::filtered`](crate::toolset::ToolsetExt::filtered).
    fn wrapper_toolset(&self, toolset: BoxedToolset<D>) -> Option<BoxedToolset<D>> {
        let _ = toolset;
        None
    }

    /// Instructions added to each request of the run (joined after the agent's own).
    fn instructions(&self, ctx: &RunContext<D>) -> impl Future<Output = Option<String>> + Send {
        let _ = ctx;
        async { None }
    }

    /// Model settings for this step, merged over the agent's and the run's (a per-step
    /// `tool_choice`, for example).
    fn model_settings(&self, ctx: &RunContext<D>) -> Option<ModelSettings> {
        let _ = ctx;
        None
    }

    /// Tools the model's provider runs itself, added to every request (see
    /// [`native`](crate::native)). A model that cannot run one is refused when the agent is
    /// built.
    fn native_tools(&self) -> Vec<crate::native::NativeTool> {
        Vec::new()
    }

    /// Resolves deferred calls inline: return results for some or all of them and the run goes
    /// on with those; calls left unresolved pass to the next capability, then end the run as
    /// deferred requests.
    fn handle_deferred_tool_calls(
        &self,
        ctx: &RunContext<D>,
        requests: &DeferredToolRequests,
    ) -> impl Future<Output = Option<DeferredToolResults>> + Send {
        let _ = (ctx, requests);
        async { None }
    }

    /// Messages to deliver into the conversation: content produced outside the model's turn
    /// (a background task's result, a notification) that the run writes into the history as a
    /// request of its own, with Pydantic AI's `ctx.enqueue` and its queue drain. Asked
    /// [`DeliveryPoint::BeforeRequest`] before every model request, where what is returned is
    /// sent with that request; and [`DeliveryPoint::RunEnd`] when the run is about to end with
    /// its output, where what is returned is sent in one more request instead (the run goes
    /// on, and its output is the model's answer to it). At `RunEnd` a capability with work in
    /// progress may wait for it. The default: nothing to deliver.
    fn pending_messages(
        &self,
        ctx: &RunContext<D>,
        at: DeliveryPoint,
    ) -> impl Future<Output = Result<Delivery, AgentRunError>> + Send {
        let _ = (ctx, at);
        async { Ok(Delivery::default()) }
    }

    /// Filters or edits the output tool definitions offered this step.
    fn prepare_output_tools(
        &self,
        ctx: &RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> impl Future<Output = Result<Vec<ToolDefinition>, AgentRunError>> + Send {
        let _ = ctx;
        async { Ok(tools) }
    }

    /// Called when a run starts.
    fn before_run(&self, ctx: &RunContext<D>) -> impl Future<Output = Result<(), AgentRunError>> + Send {
        let _ = ctx;
        async { Ok(()) }
    }

    /// Called when a run ends with an output or deferred requests; may change the output (the
    /// agent's output type is made from what the last one returns).
    fn after_run(
        &self,
        ctx: &RunContext<D>,
        output: RunOutput,
    ) -> impl Future<Output = Result<RunOutput, AgentRunError>> + Send {
        let _ = ctx;
        async { Ok(output) }
    }

    /// Wraps a whole run: `next.run()` runs it (every node, to the end). Return another output
    /// to replace the run's, recover from its error with `Ok(..)`, or skip the run by not
    /// calling `next`. A run driven to the end (`.await`, `run_sync`, `stream`) goes through
    /// it; a run stepped with [`AgentRun::next`](crate::agent::AgentRun::next) is driven by its
    /// caller and does not (every other hook fires).
    fn wrap_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        next: RunNext<'a>,
    ) -> impl Future<Output = Result<RunOutput, AgentRunError>> + Send + 'a {
        let _ = ctx;
        next.run()
    }

    /// Called when a run fails (after `wrap_run` had its chance): return the error (or another
    /// one) to pass it on, or `Ok(output)` to recover and end the run with that output.
    fn on_run_error(
        &self,
        ctx: &RunContext<D>,
        error: AgentRunError,
    ) -> impl Future<Output = Result<RunOutput, AgentRunError>> + Send {
        let _ = ctx;
        async { Err(error) }
    }

    /// Called before each node of the run (see [`AgentNode`]); may replace the node with one
    /// of the same kind (e.g. a `CallTools` node with an edited response).
    fn before_node_run(
        &self,
        ctx: &RunContext<D>,
        node: AgentNode,
    ) -> impl Future<Output = Result<AgentNode, AgentRunError>> + Send {
        let _ = ctx;
        async { Ok(node) }
    }

    /// Called after each node that succeeded; may change what comes next (another node, or the
    /// end of the run with an output).
    fn after_node_run(
        &self,
        ctx: &RunContext<D>,
        node: &AgentNode,
        result: NodeResult,
    ) -> impl Future<Output = Result<NodeResult, AgentRunError>> + Send {
        let _ = (ctx, node);
        async { Ok(result) }
    }

    /// Wraps each node: `next.run(node)` runs it and says what comes next. Call it again to
    /// retry, or return another result to redirect the run.
    fn wrap_node_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        node: AgentNode,
        next: NodeNext<'a>,
    ) -> impl Future<Output = Result<NodeResult, AgentRunError>> + Send + 'a {
        let _ = ctx;
        next.run(node)
    }

    /// Called when a node fails: return the error to pass it on, or a result to recover (for
    /// example `NodeResult::Next(AgentNode::ModelRequest)` to ask the model again).
    fn on_node_run_error(
        &self,
        ctx: &RunContext<D>,
        node: &AgentNode,
        error: AgentRunError,
    ) -> impl Future<Output = Result<NodeResult, AgentRunError>> + Send {
        let _ = (ctx, node);
        async { Err(error) }
    }

    /// Whether this capability overrides [`Capability::wrap_event_stream`]. Return `true` when
    /// it does: a run then produces its events even without an event handler.
    fn wraps_event_stream(&self) -> bool {
        false
    }

    /// Wraps the run's event stream: observe events, or change, drop or add them. Called once
    /// for each ModelRequest and CallTools node with that node's events (`ctx.run_step` is the
    /// node's step); the node's stream ends before the next node starts. Capabilities nest as
    /// for the other `wrap_*` hooks: the first one sees the stream the others made, and the
    /// run's event handler sees the first one's. Events reach the handler in order; the run
    /// waits for a node's last event before it goes on. See [`ProcessEventStream`](super::ProcessEventStream).
    fn wrap_event_stream(&self, ctx: &RunContext<D>, events: EventBoxStream) -> EventBoxStream {
        let _ = ctx;
        events
    }

    /// Called before structured output is validated (the output tool's arguments, or text
    /// parsed as the output schema; not plain text output); may change the raw output. An
    /// `Err(ToolError::Retry(..))` asks the model to try again.
    fn before_output_validate(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        raw: Value,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send {
        let _ = (ctx, output);
        async { Ok(raw) }
    }

    /// Called after the output validated; may change the validated value, or reject it with
    /// `Err(ToolError::Retry(..))`.
    fn after_output_validate(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: Value,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send {
        let _ = (ctx, output);
        async { Ok(value) }
    }

    /// Wraps the output's validation; `next.run(raw)` validates.
    fn wrap_output_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        raw: Value,
        next: OutputNext<'a>,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
        let _ = (ctx, output);
        next.run(raw)
    }

    /// Called when the output fails validation (`ToolError::Validation`, or a
    /// `ToolError::Retry` from inside the validation); return a validated value to recover, or
    /// the error.
    fn on_output_validate_error(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        raw: &Value,
        error: ToolError,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send {
        let _ = (ctx, output, raw);
        async { Err(error) }
    }

    /// Called before the validated output is processed into the run's output (text output
    /// included, as a JSON string); may change it, or ask for a retry.
    fn before_output_process(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: Value,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send {
        let _ = (ctx, output);
        async { Ok(value) }
    }

    /// Called after the output was processed; may change the result, or ask for a retry.
    fn after_output_process(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: Value,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send {
        let _ = (ctx, output);
        async { Ok(value) }
    }

    /// Wraps the output's processing; `next.run(value)` processes.
    fn wrap_output_process<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: Value,
        next: OutputNext<'a>,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
        let _ = (ctx, output);
        next.run(value)
    }

    /// Called when processing fails with an error that is not a retry; return a value to use as
    /// the output, or the error.
    fn on_output_process_error(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: &Value,
        error: ToolError,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send {
        let _ = (ctx, output, value);
        async { Err(error) }
    }

    /// How long the hook named `hook` (`before_model_request`, `wrap_tool_execute`, ...) may
    /// run before the run stops with [`AgentRunError::HookTimeout`] naming this capability and
    /// the hook. A `wrap_*` hook's time includes what it wraps. The default: no timeout.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolsmith::capability::Capability;
    /// use toolsmith::prelude::*;
    ///
    /// struct Audit;
    ///
    /// impl Capability<()> for Audit {
    ///     fn hook_timeout(&self, hook: &str) -> Option<Duration> {
    ///         (hook == "before_run").then(|| Duration::from_millis(20))
    ///     }
    ///     async fn before_run(&self, _ctx: &RunContext<()>) -> Result<(), AgentRunError> {
    ///         tokio::time::sleep(Duration::from_secs(5)).await; // an audit log that hangs
    ///         Ok(())
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let agent = Agent::builder(TestModel::default()).capability(Audit).build().unwrap();
    /// match agent.run("hi").await.unwrap_err() {
    ///     AgentRunError::HookTimeout { capability, hook, timeout } => {
    ///         assert_eq!((capability.as_str(), hook.as_str()), ("Audit", "before_run"));
    ///         assert_eq!(timeout, Duration::from_millis(20));
    ///     }
    ///     other => panic!("unexpected {other}"),
    /// }
    /// # }
    /// ```
    fn hook_timeout(&self, hook: &str) -> Option<Duration> {
        let _ = hook;
        None
    }

    /// Whether [`Capability::prepare_tools`] may change anything. The default `true` is always
    /// right; a capability that does not override `prepare_tools` may say `false`, and a step
    /// then skips copying every tool definition (which matters with large deferred catalogues).
    fn has_prepare_tools(&self) -> bool {
        true
    }

    /// Whether this capability hooks `stage` (any of its `before_*`, `after_*`, `wrap_*` and
    /// `on_*_error` hooks may do something). The default `true` is always right; a capability
    /// may say `false` for the stages it leaves alone, and the engine then skips it there
    /// (each tool call, model request and node goes through only the capabilities that hook
    /// it). The built-ins and [`Hooks`](super::Hooks) say so for every stage they leave alone.
    ///
    /// ```
    /// use serde_json::Value;
    /// use toolsmith::capability::{Capability, HookStage, ToolCallInfo};
    /// use toolsmith::prelude::*;
    ///
    /// /// Counts tool calls; nothing else.
    /// struct CountCalls(std::sync::atomic::AtomicUsize);
    ///
    /// impl Capability<()> for CountCalls {
    ///     fn hooks_stage(&self, stage: HookStage) -> bool {
    ///         stage == HookStage::ToolExecute
    ///     }
    ///     async fn before_tool_execute(&self, _: &RunContext<()>, _: ToolCallInfo<'_>, args: Value) -> Result<Value, ToolError> {
    ///         self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ///         Ok(args)
    ///     }
    /// }
    /// ```
    fn hooks_stage(&self, stage: HookStage) -> bool {
        let _ = stage;
        true
    }

    /// Filters or edits the function tool definitions offered this step.
    fn prepare_tools(
        &self,
        ctx: &RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> impl Future<Output = Result<Vec<ToolDefinition>, AgentRunError>> + Send {
        let _ = ctx;
        async { Ok(tools) }
    }

    /// Called before each model request; may change the messages, settings and parameters.
    fn before_model_request(
        &self,
        ctx: &RunContext<D>,
        request: ModelRequestContext,
    ) -> impl Future<Output = Result<ModelRequestContext, AgentRunError>> + Send {
        let _ = ctx;
        async { Ok(request) }
    }

    /// Called after each model response; may change it.
    fn after_model_request(
        &self,
        ctx: &RunContext<D>,
        request: &ModelRequestContext,
        response: ModelResponse,
    ) -> impl Future<Output = Result<ModelResponse, AgentRunError>> + Send {
        let _ = (ctx, request);
        async { Ok(response) }
    }

    /// Wraps each model request; `next.run(request)` makes it.
    fn wrap_model_request<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        request: ModelRequestContext,
        next: ModelRequestNext<'a>,
    ) -> impl Future<Output = Result<ModelResponse, AgentRunError>> + Send + 'a {
        let _ = ctx;
        next.run(request)
    }

    /// Called when a model request fails; return a response to recover, or the error.
    fn on_model_request_error(
        &self,
        ctx: &RunContext<D>,
        request: &ModelRequestContext,
        error: AgentRunError,
    ) -> impl Future<Output = Result<ModelResponse, AgentRunError>> + Send {
        let _ = (ctx, request);
        async { Err(error) }
    }

    /// Called before a tool call's arguments are validated; may change the raw arguments.
    fn before_tool_validate(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: Value,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send {
        let _ = (ctx, call);
        async { Ok(args) }
    }

    /// Called after the arguments validated; may change the validated arguments.
    fn after_tool_validate(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: Value,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send {
        let _ = (ctx, call);
        async { Ok(args) }
    }

    /// Called when validation fails (a `ToolError::Validation` or a `ToolError::Retry` from an
    /// arguments validator); return validated arguments to recover, or the error.
    fn on_tool_validate_error(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        error: ToolError,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send {
        let _ = (ctx, call);
        async { Err(error) }
    }

    /// Wraps the validation of each call; `next.run(args)` validates.
    fn wrap_tool_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolValidateNext<'a>,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
        let _ = (ctx, call);
        next.run(args)
    }

    /// Called before a tool runs; may change the validated arguments.
    fn before_tool_execute(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: Value,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send {
        let _ = (ctx, call);
        async { Ok(args) }
    }

    /// Called after a tool returned (or an error was recovered); may change the result.
    fn after_tool_execute(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: &Value,
        result: ToolOutput,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send {
        let _ = (ctx, call, args);
        async { Ok(result) }
    }

    /// Called when a tool fails with an error that is not a retry or a deferral; return a
    /// result to recover, or the error.
    fn on_tool_execute_error(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: &Value,
        error: ToolError,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send {
        let _ = (ctx, call, args);
        async { Err(error) }
    }

    /// Wraps the execution of each call; `next.run(args)` executes.
    fn wrap_tool_execute<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolExecuteNext<'a>,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send + 'a {
        let _ = (ctx, call);
        next.run(args)
    }
}

/// `a::b::Name<c::D>` -> `Name`.
pub(crate) fn short_type_name(full: &str) -> String {
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base).to_string()
}

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn short_names_drop_paths_and_generics() {
        assert_eq!(short_type_name("toolsmith::capability::PrepareTools<my::Deps>"), "PrepareTools");
        assert_eq!(short_type_name("a::b::Guard"), "Guard");
        assert_eq!(short_type_name("Plain"), "Plain");
    }
}
