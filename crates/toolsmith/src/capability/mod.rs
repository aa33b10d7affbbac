//! Capabilities: hooks around every stage of a run.
//!
//! A [`Capability`] observes or changes a run at each stage: the run itself, each model request,
//! the validation and the execution of each tool call, and the tool definitions offered each
//! step (`prepare_tools`). Every hook has a default that does nothing, so a capability implements
//! only what it needs.
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
//! [`ProcessHistory`], [`ReinjectSystemPrompt`], [`Thinking`] and [`Instrumentation`]. Most of
//! them can also be written in a JSON or YAML spec (see [`spec`]).
//!
//! Return values decide what happens next: an `Err(ToolError::Retry(..))` from a tool hook is an
//! ordinary retry of that tool; an `on_*_error` hook recovers by returning `Ok(value)` or passes
//! the error on by returning it.
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
        fn after_run(&self, ctx: &RunContext<D>) -> impl Future<Output = Result<(), AgentRunError>> + Send {
            async move { self.$inner.after_run(ctx).await }
        }
        fn on_run_error(
            &self,
            ctx: &RunContext<D>,
            error: AgentRunError,
        ) -> impl Future<Output = AgentRunError> + Send {
            async move { self.$inner.on_run_error(ctx, error).await }
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

pub(crate) use chain::Capabilities;
pub use dynamic::DynamicCapability;
pub use handle_deferred::HandleDeferredToolCalls;
pub use hooks::{Hooks, OwnedToolCall};
pub use instrumentation::{Instrumentation, InstrumentationSettings};
pub use ordering::{CapabilityOrdering, CapabilityPosition};
pub use prefix_tools::PrefixTools;
pub use prepare_output_tools::PrepareOutputTools;
pub use prepare_tools::PrepareTools;
pub use process_history::ProcessHistory;
pub use reinject_system_prompt::ReinjectSystemPrompt;
pub use return_schemas::IncludeToolReturnSchemas;
pub use set_metadata::SetToolMetadata;
pub use spec::{CapabilityRegistry, CapabilitySpec, LoadedSpec, SpecArgs, SpecError};
pub use thinking::{Thinking, ThinkingEffort, ThinkingFormat};
pub use thread_executor::ThreadExecutor;
pub use toolset::Toolset;

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

    /// Called when a run ends with an output or deferred requests.
    fn after_run(&self, ctx: &RunContext<D>) -> impl Future<Output = Result<(), AgentRunError>> + Send {
        let _ = ctx;
        async { Ok(()) }
    }

    /// Called when a run fails; return the error (or another one) to pass it on.
    fn on_run_error(&self, ctx: &RunContext<D>, error: AgentRunError) -> impl Future<Output = AgentRunError> + Send {
        let _ = ctx;
        async { error }
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
    fn after_run<'a>(&'a self, ctx: &'a RunContext<D>) -> BoxFuture<'a, Result<(), AgentRunError>>;
    fn on_run_error<'a>(&'a self, ctx: &'a RunContext<D>, error: AgentRunError) -> BoxFuture<'a, AgentRunError>;
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
    fn after_run<'a>(&'a self, ctx: &'a RunContext<D>) -> BoxFuture<'a, Result<(), AgentRunError>> {
        Box::pin(Capability::after_run(self, ctx))
    }
    fn on_run_error<'a>(&'a self, ctx: &'a RunContext<D>, error: AgentRunError) -> BoxFuture<'a, AgentRunError> {
        Box::pin(Capability::on_run_error(self, ctx, error))
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
