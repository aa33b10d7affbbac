//! Capabilities: hooks around every stage of a run.
//!
//! A [`Capability`] observes or changes a run at each stage: the run itself, each model request,
//! the validation and the execution of each tool call, and the tool definitions offered each
//! step (`prepare_tools`). Every hook has a default that does nothing, so a capability implements
//! only what it needs.
//!
//! Several capabilities combine with the first one outermost: `before_*` hooks run in list order,
//! `after_*` and `on_*_error` hooks in reverse order, `wrap_*` hooks nest (the first wraps the
//! others), and `prepare_tools` runs in list order, each on the previous one's result.
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

mod chain;
mod handle_deferred;
mod prepare_tools;
mod return_schemas;
mod set_metadata;

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

pub(crate) use chain::Capabilities;
pub use handle_deferred::HandleDeferredToolCalls;
pub use prepare_tools::PrepareTools;
pub use return_schemas::IncludeToolReturnSchemas;
pub use set_metadata::SetToolMetadata;

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
    /// A name for error messages and specs.
    fn name(&self) -> String {
        let full = std::any::type_name::<Self>();
        full.rsplit("::").next().unwrap_or(full).to_string()
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

/// A capability of any type, behind one type (what [`Capability::for_run`] returns).
pub struct BoxedCapability<D>(pub(crate) Arc<dyn DynCapability<D>>);

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
