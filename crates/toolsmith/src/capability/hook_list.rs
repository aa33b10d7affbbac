//! The hook methods of a wrapper capability, each passed on to the capability it wraps.

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
