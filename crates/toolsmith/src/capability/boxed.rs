//! [`BoxedCapability`]: a capability of any type behind one type, and the dyn-compatible
//! `DynCapability` (boxed futures) it holds.

use std::any::Any;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::{
    AgentNode, Capability, CapabilityOrdering, EventBoxStream, ModelRequestContext, ModelRequestNext, NodeNext,
    NodeResult, OutputInfo, OutputNext, RunNext, ToolCallInfo, ToolExecuteNext, ToolValidateNext,
};
use crate::agent::RunOutput;
use crate::context::RunContext;
use crate::deferred::{DeferredToolRequests, DeferredToolResults};
use crate::error::AgentRunError;
use crate::messages::ModelResponse;
use crate::model::ModelSettings;
use crate::tool::{ToolDefinition, ToolError, ToolOutput};
use crate::toolset::BoxedToolset;

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
