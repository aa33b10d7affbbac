//! Capabilities: hooks around every stage of a run.
//!
//! A [`Capability`] observes or changes a run at each stage: the run itself, each node of the
//! run ([`AgentNode`]), each model request, the validation and the execution of each tool call,
//! the validation and the processing of the output, the run's event stream, and the tool
//! definitions offered each step (`prepare_tools`). Every hook has a default that does nothing,
//! so a capability implements only what it needs.
//!
//! Several capabilities combine with the first one outermost: `before_*` hooks run in list order,
//! `after_*` and `on_*_error` hooks in reverse order, `wrap_*` hooks nest (the first wraps the
//! others), and `prepare_tools` runs in list order, each on the previous one's result. A
//! capability may constrain its place with [`Capability::ordering`] (see [`CapabilityOrdering`]);
//! the agent builder sorts the list to satisfy every constraint, keeping the order the
//! capabilities were added in wherever the constraints leave a choice.
//!
//! Application code that needs a few hooks uses [`Hooks`] (closures, no trait impl);
//! [`DynamicCapability`] builds a capability from the run context at the start of each run. The
//! built-ins: [`Toolset`], [`PrepareTools`], [`PrepareOutputTools`], [`HandleDeferredToolCalls`],
//! [`IncludeToolReturnSchemas`], [`PrefixTools`], [`SetToolMetadata`], [`ThreadExecutor`],
//! [`ProcessHistory`], [`ReinjectSystemPrompt`], [`ProcessEventStream`], [`Thinking`] and
//! [`Instrumentation`]. Most of them can also be written in a JSON or YAML spec (see [`spec`]).
//!
//! Return values decide what happens next: an `Err(ToolError::Retry(..))` from a tool hook is an
//! ordinary retry of that tool, and from an output hook a retry of the output; an
//! `Err(AgentRunError::Retry(..))` (`ModelRetry::new(..).into()`) from a model-request hook asks
//! the model to try again, the response it gave staying in the history; an `on_*_error` hook
//! recovers by returning `Ok(value)` or passes the error on by returning it.
//!
//! ```
//! use toolsmith::capability::{Capability, ToolCallInfo};
//! use toolsmith::prelude::*;
//! use toolsmith::tool::ToolOutput;
//! use serde_json::Value;
//!
//! /// Refuses to run `delete_file` on paths outside `/tmp`.
//! struct Guard;
//!
//! impl<D: Clone + Send + Sync + 'static> Capability<D> for Guard {
//!     async fn before_tool_execute(&self, _ctx: &RunContext<D>, call: ToolCallInfo<'_>, args: Value) -> Result<Value, ToolError> {
//!         let path = args.get("path").and_then(Value::as_str).unwrap_or_default();
//!         if call.def.name == "delete_file" && !path.starts_with("/tmp/") {
//!             return Err(ModelRetry::new("Only files under /tmp may be deleted.").into());
//!         }
//!         Ok(args)
//!     }
//! }
//! ```

/// The hook methods of a wrapper, each passed on to `self.$inner` (a `DynCapability`).
macro_rules! delegate_hooks {
    ($inner:tt) => {
        fn has_prepare_tools(&self) -> bool {
            self.$inner.has_prepare_tools()
        }
        fn wrapper_toolset(
            &self,
            toolset: $crate::toolset::BoxedToolset<D>,
        ) -> Option<$crate::toolset::BoxedToolset<D>> {
            self.$inner.wrapper_toolset(toolset)
        }
        fn instructions(&self, ctx: &RunContext<D>) -> impl Future<Output = Option<String>> + Send {
            async move { self.$inner.instructions(ctx).await }
        }
        fn model_settings(&self, ctx: &RunContext<D>) -> Option<ModelSettings> {
            self.$inner.model_settings(ctx)
        }
        fn handle_deferred_tool_calls(
            &self,
            ctx: &RunContext<D>,
            requests: &DeferredToolRequests,
        ) -> impl Future<Output = Option<DeferredToolResults>> + Send {
            async move { self.$inner.handle_deferred_tool_calls(ctx, requests).await }
        }
        fn prepare_output_tools(
            &self,
            ctx: &RunContext<D>,
            tools: Vec<ToolDefinition>,
        ) -> impl Future<Output = Result<Vec<ToolDefinition>, AgentRunError>> + Send {
            async move { self.$inner.prepare_output_tools(ctx, tools).await }
        }
        fn before_run(&self, ctx: &RunContext<D>) -> impl Future<Output = Result<(), AgentRunError>> + Send {
            async move { self.$inner.before_run(ctx).await }
        }
        fn after_run(
            &self,
            ctx: &RunContext<D>,
            output: $crate::agent::RunOutput,
        ) -> impl Future<Output = Result<$crate::agent::RunOutput, AgentRunError>> + Send {
            async move { self.$inner.after_run(ctx, output).await }
        }
        fn wrap_run<'a>(
            &'a self,
            ctx: &'a RunContext<D>,
            next: $crate::capability::RunNext<'a>,
        ) -> impl Future<Output = Result<$crate::agent::RunOutput, AgentRunError>> + Send + 'a {
            self.$inner.wrap_run(ctx, next)
        }
        fn on_run_error(
            &self,
            ctx: &RunContext<D>,
            error: AgentRunError,
        ) -> impl Future<Output = Result<$crate::agent::RunOutput, AgentRunError>> + Send {
            async move { self.$inner.on_run_error(ctx, error).await }
        }
        fn before_node_run(
            &self,
            ctx: &RunContext<D>,
            node: $crate::capability::AgentNode,
        ) -> impl Future<Output = Result<$crate::capability::AgentNode, AgentRunError>> + Send {
            async move { self.$inner.before_node_run(ctx, node).await }
        }
        fn after_node_run(
            &self,
            ctx: &RunContext<D>,
            node: &$crate::capability::AgentNode,
            result: $crate::capability::NodeResult,
        ) -> impl Future<Output = Result<$crate::capability::NodeResult, AgentRunError>> + Send {
            async move { self.$inner.after_node_run(ctx, node, result).await }
        }
        fn wrap_node_run<'a>(
            &'a self,
            ctx: &'a RunContext<D>,
            node: $crate::capability::AgentNode,
            next: $crate::capability::NodeNext<'a>,
        ) -> impl Future<Output = Result<$crate::capability::NodeResult, AgentRunError>> + Send + 'a {
            self.$inner.wrap_node_run(ctx, node, next)
        }
        fn on_node_run_error(
            &self,
            ctx: &RunContext<D>,
            node: &$crate::capability::AgentNode,
            error: AgentRunError,
        ) -> impl Future<Output = Result<$crate::capability::NodeResult, AgentRunError>> + Send {
            async move { self.$inner.on_node_run_error(ctx, node, error).await }
        }
        fn wraps_event_stream(&self) -> bool {
            self.$inner.wraps_event_stream()
        }
        fn wrap_event_stream(
            &self,
            ctx: &RunContext<D>,
            events: $crate::capability::EventBoxStream,
        ) -> $crate::capability::EventBoxStream {
            self.$inner.wrap_event_stream(ctx, events)
        }
        fn before_output_validate(
            &self,
            ctx: &RunContext<D>,
            output: $crate::capability::OutputInfo<'_>,
            raw: Value,
        ) -> impl Future<Output = Result<Value, ToolError>> + Send {
            async move { self.$inner.before_output_validate(ctx, output, raw).await }
        }
        fn after_output_validate(
            &self,
            ctx: &RunContext<D>,
            output: $crate::capability::OutputInfo<'_>,
            value: Value,
        ) -> impl Future<Output = Result<Value, ToolError>> + Send {
            async move { self.$inner.after_output_validate(ctx, output, value).await }
        }
        fn wrap_output_validate<'a>(
            &'a self,
            ctx: &'a RunContext<D>,
            output: $crate::capability::OutputInfo<'a>,
            raw: Value,
            next: $crate::capability::OutputNext<'a>,
        ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
            self.$inner.wrap_output_validate(ctx, output, raw, next)
        }
        fn on_output_validate_error(
            &self,
            ctx: &RunContext<D>,
            output: $crate::capability::OutputInfo<'_>,
            raw: &Value,
            error: ToolError,
        ) -> impl Future<Output = Result<Value, ToolError>> + Send {
            async move { self.$inner.on_output_validate_error(ctx, output, raw, error).await }
        }
        fn before_output_process(
            &self,
            ctx: &RunContext<D>,
            output: $crate::capability::OutputInfo<'_>,
            value: Value,
        ) -> impl Future<Output = Result<Value, ToolError>> + Send {
            async move { self.$inner.before_output_process(ctx, output, value).await }
        }
        fn after_output_process(
            &self,
            ctx: &RunContext<D>,
            output: $crate::capability::OutputInfo<'_>,
            value: Value,
        ) -> impl Future<Output = Result<Value, ToolError>> + Send {
            async move { self.$inner.after_output_process(ctx, output, value).await }
        }
        fn wrap_output_process<'a>(
            &'a self,
            ctx: &'a RunContext<D>,
            output: $crate::capability::OutputInfo<'a>,
            value: Value,
            next: $crate::capability::OutputNext<'a>,
        ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
            self.$inner.wrap_output_process(ctx, output, value, next)
        }
        fn on_output_process_error(
            &self,
            ctx: &RunContext<D>,
            output: $crate::capability::OutputInfo<'_>,
            value: &Value,
            error: ToolError,
        ) -> impl Future<Output = Result<Value, ToolError>> + Send {
            async move { self.$inner.on_output_process_error(ctx, output, value, error).await }
        }
        fn prepare_tools(
            &self,
            ctx: &RunContext<D>,
            tools: Vec<ToolDefinition>,
        ) -> impl Future<Output = Result<Vec<ToolDefinition>, AgentRunError>> + Send {
            async move { self.$inner.prepare_tools(ctx, tools).await }
        }
        fn before_model_request(
            &self,
            ctx: &RunContext<D>,
            request: ModelRequestContext,
        ) -> impl Future<Output = Result<ModelRequestContext, AgentRunError>> + Send {
            async move { self.$inner.before_model_request(ctx, request).await }
        }
        fn after_model_request(
            &self,
            ctx: &RunContext<D>,
            request: &ModelRequestContext,
            response: ModelResponse,
        ) -> impl Future<Output = Result<ModelResponse, AgentRunError>> + Send {
            async move { self.$inner.after_model_request(ctx, request, response).await }
        }
        fn wrap_model_request<'a>(
            &'a self,
            ctx: &'a RunContext<D>,
            request: ModelRequestContext,
            next: ModelRequestNext<'a>,
        ) -> impl Future<Output = Result<ModelResponse, AgentRunError>> + Send + 'a {
            self.$inner.wrap_model_request(ctx, request, next)
        }
        fn on_model_request_error(
            &self,
            ctx: &RunContext<D>,
            request: &ModelRequestContext,
            error: AgentRunError,
        ) -> impl Future<Output = Result<ModelResponse, AgentRunError>> + Send {
            async move { self.$inner.on_model_request_error(ctx, request, error).await }
        }
        fn before_tool_validate(
            &self,
            ctx: &RunContext<D>,
            call: ToolCallInfo<'_>,
            args: Value,
        ) -> impl Future<Output = Result<Value, ToolError>> + Send {
            async move { self.$inner.before_tool_validate(ctx, call, args).await }
        }
        fn after_tool_validate(
            &self,
            ctx: &RunContext<D>,
            call: ToolCallInfo<'_>,
            args: Value,
        ) -> impl Future<Output = Result<Value, ToolError>> + Send {
            async move { self.$inner.after_tool_validate(ctx, call, args).await }
        }
        fn on_tool_validate_error(
            &self,
            ctx: &RunContext<D>,
            call: ToolCallInfo<'_>,
            error: ToolError,
        ) -> impl Future<Output = Result<Value, ToolError>> + Send {
            async move { self.$inner.on_tool_validate_error(ctx, call, error).await }
        }
        fn wrap_tool_validate<'a>(
            &'a self,
            ctx: &'a RunContext<D>,
            call: ToolCallInfo<'a>,
            args: Value,
            next: ToolValidateNext<'a>,
        ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
            self.$inner.wrap_tool_validate(ctx, call, args, next)
        }
        fn before_tool_execute(
            &self,
            ctx: &RunContext<D>,
            call: ToolCallInfo<'_>,
            args: Value,
        ) -> impl Future<Output = Result<Value, ToolError>> + Send {
            async move { self.$inner.before_tool_execute(ctx, call, args).await }
        }
        fn after_tool_execute(
            &self,
            ctx: &RunContext<D>,
            call: ToolCallInfo<'_>,
            args: &Value,
            result: ToolOutput,
        ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send {
            async move { self.$inner.after_tool_execute(ctx, call, args, result).await }
        }
        fn on_tool_execute_error(
            &self,
            ctx: &RunContext<D>,
            call: ToolCallInfo<'_>,
            args: &Value,
            error: ToolError,
        ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send {
            async move { self.$inner.on_tool_execute_error(ctx, call, args, error).await }
        }
        fn wrap_tool_execute<'a>(
            &'a self,
            ctx: &'a RunContext<D>,
            call: ToolCallInfo<'a>,
            args: Value,
            next: ToolExecuteNext<'a>,
        ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send + 'a {
            self.$inner.wrap_tool_execute(ctx, call, args, next)
        }
    };
}

mod chain;
mod dynamic;
mod handle_deferred;
mod hooks;
mod instrumentation;
mod ordering;
#[cfg(feature = "otel")]
pub mod otel;
mod prefix_tools;
mod prepare_output_tools;
mod prepare_tools;
mod process_event_stream;
mod process_history;
mod reinject_system_prompt;
mod return_schemas;
mod set_metadata;
pub mod spec;
mod thinking;
mod thread_executor;
mod toolset;

use std::any::Any;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

pub(crate) use chain::{Capabilities, OutputStage};
pub use dynamic::DynamicCapability;
pub use handle_deferred::HandleDeferredToolCalls;
pub use hooks::{Hooks, OwnedOutput, OwnedToolCall};
pub use instrumentation::{Instrumentation, InstrumentationSettings};
pub use ordering::{CapabilityOrdering, CapabilityPosition};
pub use prefix_tools::PrefixTools;
pub use prepare_output_tools::PrepareOutputTools;
pub use prepare_tools::PrepareTools;
pub use process_event_stream::ProcessEventStream;
pub use process_history::ProcessHistory;
pub use reinject_system_prompt::ReinjectSystemPrompt;
pub use return_schemas::IncludeToolReturnSchemas;
pub use set_metadata::SetToolMetadata;
pub use spec::{CapabilityRegistry, CapabilitySpec, LoadedSpec, SpecArgs, SpecError};
pub use thinking::{Thinking, ThinkingEffort, ThinkingFormat};
pub use thread_executor::ThreadExecutor;
pub use toolset::Toolset;

use crate::agent::{AgentEvent, RunOutput};
use crate::context::RunContext;
use crate::deferred::{DeferredToolRequests, DeferredToolResults};
use crate::error::AgentRunError;
use crate::messages::{ModelMessage, ModelResponse, ToolCallPart};
use crate::model::{ModelRequestParameters, ModelSettings};
use crate::tool::{ToolDefinition, ToolError, ToolOutput};
use crate::toolset::BoxedToolset;

/// The call a tool hook is about: the model's call and the tool's definition.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ToolCallInfo<'a> {
    /// The call as the model made it (name, raw arguments, id).
    pub call: &'a ToolCallPart,
    /// The definition of the called tool, as shown to the model this step.
    pub def: &'a ToolDefinition,
}

/// What is about to be sent to the model; `before_model_request` may change it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ModelRequestContext {
    /// The messages sent, history included.
    pub messages: Arc<Vec<ModelMessage>>,
    /// The model settings.
    pub settings: Option<ModelSettings>,
    /// The tools and output options.
    pub params: ModelRequestParameters,
}

/// The rest of a `wrap_model_request` chain: call [`ModelRequestNext::run`] to make the request.
pub struct ModelRequestNext<'a> {
    f: Box<dyn Fn(ModelRequestContext) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>> + Send + Sync + 'a>,
}

impl<'a> ModelRequestNext<'a> {
    pub(crate) fn new(
        f: impl Fn(ModelRequestContext) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>> + Send + Sync + 'a,
    ) -> Self {
        ModelRequestNext { f: Box::new(f) }
    }

    /// Runs the rest of the chain (it may be called more than once, e.g. to retry).
    pub fn run(&self, request: ModelRequestContext) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>> {
        (self.f)(request)
    }
}

/// The rest of a `wrap_tool_validate` chain: call [`ToolValidateNext::run`] to validate.
pub struct ToolValidateNext<'a> {
    f: Box<dyn Fn(Value) -> BoxFuture<'a, Result<Value, ToolError>> + Send + Sync + 'a>,
}

impl<'a> ToolValidateNext<'a> {
    pub(crate) fn new(f: impl Fn(Value) -> BoxFuture<'a, Result<Value, ToolError>> + Send + Sync + 'a) -> Self {
        ToolValidateNext { f: Box::new(f) }
    }

    /// Runs the rest of the chain (it may be called more than once, e.g. to retry).
    pub fn run(&self, args: Value) -> BoxFuture<'a, Result<Value, ToolError>> {
        (self.f)(args)
    }
}

/// The rest of a `wrap_tool_execute` chain: call [`ToolExecuteNext::run`] to execute.
pub struct ToolExecuteNext<'a> {
    f: Box<dyn Fn(Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> + Send + Sync + 'a>,
}

impl<'a> ToolExecuteNext<'a> {
    pub(crate) fn new(f: impl Fn(Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> + Send + Sync + 'a) -> Self {
        ToolExecuteNext { f: Box::new(f) }
    }

    /// Runs the rest of the chain (it may be called more than once, e.g. to retry).
    pub fn run(&self, args: Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        (self.f)(args)
    }
}

/// The rest of a `wrap_run` chain: call [`RunNext::run`] to run the agent to the end.
pub struct RunNext<'a> {
    f: Box<dyn Fn() -> BoxFuture<'a, Result<RunOutput, AgentRunError>> + Send + Sync + 'a>,
}

impl<'a> RunNext<'a> {
    pub(crate) fn new(f: impl Fn() -> BoxFuture<'a, Result<RunOutput, AgentRunError>> + Send + Sync + 'a) -> Self {
        RunNext { f: Box::new(f) }
    }

    /// Runs the rest of the chain, then the run itself. A run runs once: a second call, once it
    /// has ended, is an error.
    pub fn run(&self) -> BoxFuture<'a, Result<RunOutput, AgentRunError>> {
        (self.f)()
    }
}

/// A node of a run, as the node hooks see it: what is about to happen.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AgentNode {
    /// The start: the first request is built from the prompt (or the deferred results given
    /// to the run are settled).
    UserPrompt,
    /// The history is sent to the model.
    ModelRequest,
    /// The model's response is handled: its tool calls run, or its text becomes the output.
    CallTools {
        /// The response (already in the history).
        response: ModelResponse,
    },
}

impl AgentNode {
    /// The node's name, as Pydantic AI names its graph nodes.
    pub fn name(&self) -> &'static str {
        match self {
            AgentNode::UserPrompt => "UserPromptNode",
            AgentNode::ModelRequest => "ModelRequestNode",
            AgentNode::CallTools { .. } => "CallToolsNode",
        }
    }
}

/// What a node led to: the next node, or the end of the run with its output.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum NodeResult {
    /// The run goes on with this node.
    Next(AgentNode),
    /// The run ends with this output.
    End(RunOutput),
}

/// The rest of a `wrap_node_run` chain: call [`NodeNext::run`] to run the node.
pub struct NodeNext<'a> {
    f: Box<dyn Fn(AgentNode) -> BoxFuture<'a, Result<NodeResult, AgentRunError>> + Send + Sync + 'a>,
}

impl<'a> NodeNext<'a> {
    pub(crate) fn new(
        f: impl Fn(AgentNode) -> BoxFuture<'a, Result<NodeResult, AgentRunError>> + Send + Sync + 'a,
    ) -> Self {
        NodeNext { f: Box::new(f) }
    }

    /// Runs the rest of the chain, then the node (it may be called more than once, e.g. to
    /// retry a model request).
    pub fn run(&self, node: AgentNode) -> BoxFuture<'a, Result<NodeResult, AgentRunError>> {
        (self.f)(node)
    }
}

/// A run's events as a boxed stream, what [`Capability::wrap_event_stream`] takes and returns.
pub type EventBoxStream = futures::stream::BoxStream<'static, AgentEvent>;

/// How the output being validated or processed came from the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputKind {
    /// The arguments of an output tool call.
    Tool,
    /// Text parsed as the output schema (a model that answered with JSON text).
    StructuredText,
    /// Plain text output (processing hooks only: there is nothing to validate).
    Text,
}

/// What an output hook is about.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct OutputInfo<'a> {
    /// How the output came.
    pub kind: OutputKind,
    /// The output tool call, for tool output.
    pub call: Option<&'a ToolCallPart>,
    /// The output tool's definition, for structured output.
    pub def: Option<&'a ToolDefinition>,
}

/// The rest of a `wrap_output_validate` or `wrap_output_process` chain: call
/// [`OutputNext::run`] to go on.
pub struct OutputNext<'a> {
    f: Box<dyn Fn(Value) -> BoxFuture<'a, Result<Value, ToolError>> + Send + Sync + 'a>,
}

impl<'a> OutputNext<'a> {
    pub(crate) fn new(f: impl Fn(Value) -> BoxFuture<'a, Result<Value, ToolError>> + Send + Sync + 'a) -> Self {
        OutputNext { f: Box::new(f) }
    }

    /// Runs the rest of the chain (it may be called more than once).
    pub fn run(&self, value: Value) -> BoxFuture<'a, Result<Value, ToolError>> {
        (self.f)(value)
    }
}

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

    /// Wraps the run's event stream: observe events, or change, drop or add them. Capabilities
    /// nest as for the other `wrap_*` hooks: the first one sees the stream the others made,
    /// and the run's event handler sees the first one's. Events reach the handler in order; the
    /// run waits for the last one before it returns. See [`ProcessEventStream`].
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

    /// Whether [`Capability::prepare_tools`] may change anything. The default `true` is always
    /// right; a capability that does not override `prepare_tools` may say `false`, and a step
    /// then skips copying every tool definition (which matters with large deferred catalogues).
    fn has_prepare_tools(&self) -> bool {
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

/// A capability of any type, behind one type (what [`Capability::for_run`] returns). It is a
/// capability itself, delegating everything to the boxed one. Cheap to clone.
///
/// ```
/// use toolsmith::capability::{BoxedCapability, Capability, SetToolMetadata, Thinking};
///
/// let caps: Vec<BoxedCapability<()>> = vec![
///     BoxedCapability::new(Thinking::high()),
///     BoxedCapability::new(SetToolMetadata::new(serde_json::json!({"team": "search"}))),
/// ];
/// assert_eq!(caps[0].name(), "Thinking");
/// ```
pub struct BoxedCapability<D>(pub(crate) Arc<dyn DynCapability<D>>);

impl<D> std::fmt::Debug for BoxedCapability<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("BoxedCapability").field(&self.0.name()).finish()
    }
}

impl<D> Clone for BoxedCapability<D> {
    fn clone(&self) -> Self {
        BoxedCapability(self.0.clone())
    }
}

impl<D: Sync + 'static> BoxedCapability<D> {
    /// Boxes a capability.
    pub fn new(capability: impl Capability<D>) -> Self {
        BoxedCapability(Arc::new(capability))
    }
}

/// The dyn-compatible form of [`Capability`].
pub(crate) trait DynCapability<D>: Send + Sync {
    fn name(&self) -> String;
    fn ordering(&self) -> Option<CapabilityOrdering>;
    fn apply(&self, visitor: &mut dyn FnMut(&dyn Any));
    fn for_run(&self, ctx: &RunContext<D>) -> Option<BoxedCapability<D>>;
    fn toolset(&self) -> Option<BoxedToolset<D>>;
    fn has_prepare_tools(&self) -> bool;
    fn wrapper_toolset(&self, toolset: BoxedToolset<D>) -> Option<BoxedToolset<D>>;
    fn instructions<'a>(&'a self, ctx: &'a RunContext<D>) -> BoxFuture<'a, Option<String>>;
    fn model_settings(&self, ctx: &RunContext<D>) -> Option<ModelSettings>;
    fn handle_deferred_tool_calls<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        requests: &'a DeferredToolRequests,
    ) -> BoxFuture<'a, Option<DeferredToolResults>>;
    fn prepare_output_tools<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> BoxFuture<'a, Result<Vec<ToolDefinition>, AgentRunError>>;
    fn before_run<'a>(&'a self, ctx: &'a RunContext<D>) -> BoxFuture<'a, Result<(), AgentRunError>>;
    fn after_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: RunOutput,
    ) -> BoxFuture<'a, Result<RunOutput, AgentRunError>>;
    fn wrap_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        next: RunNext<'a>,
    ) -> BoxFuture<'a, Result<RunOutput, AgentRunError>>;
    fn on_run_error<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        error: AgentRunError,
    ) -> BoxFuture<'a, Result<RunOutput, AgentRunError>>;
    fn before_node_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        node: AgentNode,
    ) -> BoxFuture<'a, Result<AgentNode, AgentRunError>>;
    fn after_node_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        node: &'a AgentNode,
        result: NodeResult,
    ) -> BoxFuture<'a, Result<NodeResult, AgentRunError>>;
    fn wrap_node_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        node: AgentNode,
        next: NodeNext<'a>,
    ) -> BoxFuture<'a, Result<NodeResult, AgentRunError>>;
    fn on_node_run_error<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        node: &'a AgentNode,
        error: AgentRunError,
    ) -> BoxFuture<'a, Result<NodeResult, AgentRunError>>;
    fn wraps_event_stream(&self) -> bool;
    fn wrap_event_stream(&self, ctx: &RunContext<D>, events: EventBoxStream) -> EventBoxStream;
    fn before_output_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        raw: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
    fn after_output_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
    fn wrap_output_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        raw: Value,
        next: OutputNext<'a>,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
    fn on_output_validate_error<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        raw: &'a Value,
        error: ToolError,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
    fn before_output_process<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
    fn after_output_process<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
    fn wrap_output_process<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: Value,
        next: OutputNext<'a>,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
    fn on_output_process_error<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: &'a Value,
        error: ToolError,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
    fn prepare_tools<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> BoxFuture<'a, Result<Vec<ToolDefinition>, AgentRunError>>;
    fn before_model_request<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        request: ModelRequestContext,
    ) -> BoxFuture<'a, Result<ModelRequestContext, AgentRunError>>;
    fn after_model_request<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        request: &'a ModelRequestContext,
        response: ModelResponse,
    ) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>>;
    fn wrap_model_request<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        request: ModelRequestContext,
        next: ModelRequestNext<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>>;
    fn on_model_request_error<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        request: &'a ModelRequestContext,
        error: AgentRunError,
    ) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>>;
    fn before_tool_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
    fn after_tool_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
    fn on_tool_validate_error<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        error: ToolError,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
    fn wrap_tool_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolValidateNext<'a>,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
    fn before_tool_execute<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
    fn after_tool_execute<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: &'a Value,
        result: ToolOutput,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
    fn on_tool_execute_error<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: &'a Value,
        error: ToolError,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
    fn wrap_tool_execute<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolExecuteNext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

impl<D: Sync, C: Capability<D>> DynCapability<D> for C {
    fn name(&self) -> String {
        Capability::name(self)
    }
    fn ordering(&self) -> Option<CapabilityOrdering> {
        Capability::ordering(self)
    }
    fn apply(&self, visitor: &mut dyn FnMut(&dyn Any)) {
        Capability::apply(self, visitor)
    }
    fn for_run(&self, ctx: &RunContext<D>) -> Option<BoxedCapability<D>> {
        Capability::for_run(self, ctx)
    }
    fn toolset(&self) -> Option<BoxedToolset<D>> {
        Capability::toolset(self)
    }
    fn wrapper_toolset(&self, toolset: BoxedToolset<D>) -> Option<BoxedToolset<D>> {
        Capability::wrapper_toolset(self, toolset)
    }
    fn has_prepare_tools(&self) -> bool {
        Capability::has_prepare_tools(self)
    }
    fn instructions<'a>(&'a self, ctx: &'a RunContext<D>) -> BoxFuture<'a, Option<String>> {
        Box::pin(Capability::instructions(self, ctx))
    }
    fn model_settings(&self, ctx: &RunContext<D>) -> Option<ModelSettings> {
        Capability::model_settings(self, ctx)
    }
    fn handle_deferred_tool_calls<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        requests: &'a DeferredToolRequests,
    ) -> BoxFuture<'a, Option<DeferredToolResults>> {
        Box::pin(Capability::handle_deferred_tool_calls(self, ctx, requests))
    }
    fn prepare_output_tools<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> BoxFuture<'a, Result<Vec<ToolDefinition>, AgentRunError>> {
        Box::pin(Capability::prepare_output_tools(self, ctx, tools))
    }
    fn before_run<'a>(&'a self, ctx: &'a RunContext<D>) -> BoxFuture<'a, Result<(), AgentRunError>> {
        Box::pin(Capability::before_run(self, ctx))
    }
    fn after_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: RunOutput,
    ) -> BoxFuture<'a, Result<RunOutput, AgentRunError>> {
        Box::pin(Capability::after_run(self, ctx, output))
    }
    fn wrap_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        next: RunNext<'a>,
    ) -> BoxFuture<'a, Result<RunOutput, AgentRunError>> {
        Box::pin(Capability::wrap_run(self, ctx, next))
    }
    fn on_run_error<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        error: AgentRunError,
    ) -> BoxFuture<'a, Result<RunOutput, AgentRunError>> {
        Box::pin(Capability::on_run_error(self, ctx, error))
    }
    fn before_node_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        node: AgentNode,
    ) -> BoxFuture<'a, Result<AgentNode, AgentRunError>> {
        Box::pin(Capability::before_node_run(self, ctx, node))
    }
    fn after_node_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        node: &'a AgentNode,
        result: NodeResult,
    ) -> BoxFuture<'a, Result<NodeResult, AgentRunError>> {
        Box::pin(Capability::after_node_run(self, ctx, node, result))
    }
    fn wrap_node_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        node: AgentNode,
        next: NodeNext<'a>,
    ) -> BoxFuture<'a, Result<NodeResult, AgentRunError>> {
        Box::pin(Capability::wrap_node_run(self, ctx, node, next))
    }
    fn on_node_run_error<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        node: &'a AgentNode,
        error: AgentRunError,
    ) -> BoxFuture<'a, Result<NodeResult, AgentRunError>> {
        Box::pin(Capability::on_node_run_error(self, ctx, node, error))
    }
    fn wraps_event_stream(&self) -> bool {
        Capability::wraps_event_stream(self)
    }
    fn wrap_event_stream(&self, ctx: &RunContext<D>, events: EventBoxStream) -> EventBoxStream {
        Capability::wrap_event_stream(self, ctx, events)
    }
    fn before_output_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        raw: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(Capability::before_output_validate(self, ctx, output, raw))
    }
    fn after_output_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(Capability::after_output_validate(self, ctx, output, value))
    }
    fn wrap_output_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        raw: Value,
        next: OutputNext<'a>,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(Capability::wrap_output_validate(self, ctx, output, raw, next))
    }
    fn on_output_validate_error<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        raw: &'a Value,
        error: ToolError,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(Capability::on_output_validate_error(self, ctx, output, raw, error))
    }
    fn before_output_process<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(Capability::before_output_process(self, ctx, output, value))
    }
    fn after_output_process<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(Capability::after_output_process(self, ctx, output, value))
    }
    fn wrap_output_process<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: Value,
        next: OutputNext<'a>,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(Capability::wrap_output_process(self, ctx, output, value, next))
    }
    fn on_output_process_error<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: &'a Value,
        error: ToolError,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(Capability::on_output_process_error(self, ctx, output, value, error))
    }
    fn prepare_tools<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> BoxFuture<'a, Result<Vec<ToolDefinition>, AgentRunError>> {
        Box::pin(Capability::prepare_tools(self, ctx, tools))
    }
    fn before_model_request<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        request: ModelRequestContext,
    ) -> BoxFuture<'a, Result<ModelRequestContext, AgentRunError>> {
        Box::pin(Capability::before_model_request(self, ctx, request))
    }
    fn after_model_request<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        request: &'a ModelRequestContext,
        response: ModelResponse,
    ) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>> {
        Box::pin(Capability::after_model_request(self, ctx, request, response))
    }
    fn wrap_model_request<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        request: ModelRequestContext,
        next: ModelRequestNext<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>> {
        Box::pin(Capability::wrap_model_request(self, ctx, request, next))
    }
    fn on_model_request_error<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        request: &'a ModelRequestContext,
        error: AgentRunError,
    ) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>> {
        Box::pin(Capability::on_model_request_error(self, ctx, request, error))
    }
    fn before_tool_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(Capability::before_tool_validate(self, ctx, call, args))
    }
    fn after_tool_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(Capability::after_tool_validate(self, ctx, call, args))
    }
    fn on_tool_validate_error<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        error: ToolError,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(Capability::on_tool_validate_error(self, ctx, call, error))
    }
    fn wrap_tool_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolValidateNext<'a>,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(Capability::wrap_tool_validate(self, ctx, call, args, next))
    }
    fn before_tool_execute<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(Capability::before_tool_execute(self, ctx, call, args))
    }
    fn after_tool_execute<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: &'a Value,
        result: ToolOutput,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(Capability::after_tool_execute(self, ctx, call, args, result))
    }
    fn on_tool_execute_error<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: &'a Value,
        error: ToolError,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(Capability::on_tool_execute_error(self, ctx, call, args, error))
    }
    fn wrap_tool_execute<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolExecuteNext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(Capability::wrap_tool_execute(self, ctx, call, args, next))
    }
}

impl<D: Send + Sync + 'static> Capability<D> for BoxedCapability<D> {
    fn name(&self) -> String {
        self.0.name()
    }
    fn ordering(&self) -> Option<CapabilityOrdering> {
        self.0.ordering()
    }
    fn apply(&self, visitor: &mut dyn FnMut(&dyn Any)) {
        self.0.apply(visitor)
    }
    fn for_run(&self, ctx: &RunContext<D>) -> Option<BoxedCapability<D>> {
        self.0.for_run(ctx)
    }
    fn toolset(&self) -> Option<BoxedToolset<D>> {
        self.0.toolset()
    }
    delegate_hooks!(0);
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
