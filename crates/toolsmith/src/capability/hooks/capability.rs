//! How [`Hooks`] runs its closures as the hooks of a [`Capability`]: the `before_*`, `after_*`
//! and `prepare_*` closures each on the previous one's value, the `on_*_error` closures until
//! one recovers, the `wrap_*` closures nested (the first outermost).

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::Hooks;
use crate::capability::{
    AgentNode, Capability, CapabilityOrdering, Delivery, DeliveryPoint, EventBoxStream, ModelRequestContext,
    ModelRequestNext, NodeNext, NodeResult, OutputInfo, OutputNext, RunNext, ToolCallInfo, ToolExecuteNext,
    ToolValidateNext,
};
use crate::context::RunContext;
use crate::deferred::{DeferredToolRequests, DeferredToolResults};
use crate::error::AgentRunError;
use crate::messages::ModelResponse;
use crate::run::RunOutput;
use crate::tool::{ToolDefinition, ToolError, ToolOutput};

/// Each closure on the previous one's value; the first error stops the chain.
async fn thread<F, T, E>(
    closures: &[F],
    mut value: T,
    call: impl Fn(&F, T) -> BoxFuture<'static, Result<T, E>>,
) -> Result<T, E> {
    for f in closures {
        value = call(f, value).await?;
    }
    Ok(value)
}

/// The error offered to each closure until one recovers with `Ok`.
async fn recover<F, T, E>(
    closures: &[F],
    error: E,
    call: impl Fn(&F, E) -> BoxFuture<'static, Result<T, E>>,
) -> Result<T, E> {
    let mut outcome = Err(error);
    for f in closures {
        let Err(e) = outcome else { break };
        outcome = call(f, e).await;
    }
    outcome
}

/// The `wrap_*` closures nested around `next`, the first outermost: `wrap` calls one closure
/// with the input and, as its `next`, the closures after it (then `next` itself).
fn nest<'a, F, N>(
    closures: &'a [F],
    input: N::Input,
    next: Arc<N>,
    wrap: impl Fn(&'a F, N::Input, N) -> BoxFuture<'a, N::Output> + Copy + Send + Sync + 'a,
) -> BoxFuture<'a, N::Output>
where
    F: Sync,
    N: ChainNext<'a>,
{
    match closures.split_first() {
        None => next.call(input),
        Some((f, rest)) => {
            let inner = next.clone();
            wrap(f, input, N::from_fn(&next, move |input| nest(rest, input, inner.clone(), wrap)))
        }
    }
}

/// A `*Next` handle, as [`nest`] makes and calls them.
trait ChainNext<'a>: Sized + Send + Sync + 'a {
    /// What the chain is run with (`()` for [`RunNext`]).
    type Input;
    /// What the chain gives.
    type Output;
    /// A handle calling `f`, carrying what `outer` carries besides its function.
    fn from_fn(outer: &Self, f: impl Fn(Self::Input) -> BoxFuture<'a, Self::Output> + Send + Sync + 'a) -> Self;
    fn call(&self, input: Self::Input) -> BoxFuture<'a, Self::Output>;
}

impl<'a> ChainNext<'a> for RunNext<'a> {
    type Input = ();
    type Output = Result<RunOutput, AgentRunError>;
    fn from_fn(_: &Self, f: impl Fn(()) -> BoxFuture<'a, Self::Output> + Send + Sync + 'a) -> Self {
        RunNext::new(move || f(()))
    }
    fn call(&self, (): ()) -> BoxFuture<'a, Self::Output> {
        self.run()
    }
}

macro_rules! chain_next {
    ($($next:ident($input:ty) -> $output:ty;)*) => {$(
        impl<'a> ChainNext<'a> for $next<'a> {
            type Input = $input;
            type Output = $output;
            fn from_fn(_: &Self, f: impl Fn($input) -> BoxFuture<'a, $output> + Send + Sync + 'a) -> Self {
                $next::new(f)
            }
            fn call(&self, input: $input) -> BoxFuture<'a, $output> {
                self.run(input)
            }
        }
    )*};
}

chain_next! {
    NodeNext(AgentNode) -> Result<NodeResult, AgentRunError>;
    ModelRequestNext(ModelRequestContext) -> Result<ModelResponse, AgentRunError>;
    ToolValidateNext(Value) -> Result<Value, ToolError>;
    OutputNext(Value) -> Result<Value, ToolError>;
}

impl<'a> ChainNext<'a> for ToolExecuteNext<'a> {
    type Input = Value;
    type Output = Result<ToolOutput, ToolError>;
    fn from_fn(outer: &Self, f: impl Fn(Value) -> BoxFuture<'a, Self::Output> + Send + Sync + 'a) -> Self {
        ToolExecuteNext::new(f, outer.ran_flag())
    }
    fn call(&self, input: Value) -> BoxFuture<'a, Self::Output> {
        self.run(input)
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for Hooks<D> {
    fn name(&self) -> String {
        self.name.clone().unwrap_or_else(|| "Hooks".into())
    }

    fn ordering(&self) -> Option<CapabilityOrdering> {
        self.ordering.clone()
    }

    fn hook_timeout(&self, hook: &str) -> Option<std::time::Duration> {
        // Only the hooks given closures: the others pass through (a `wrap_run` that only
        // calls `next` takes as long as the run).
        self.timeout.filter(|_| self.closures.has(hook))
    }

    fn has_prepare_tools(&self) -> bool {
        !self.closures.prepare_tools.is_empty()
    }

    fn hooks_stage(&self, stage: super::super::HookStage) -> bool {
        stage.hooks().iter().any(|hook| self.closures.has(hook))
    }

    async fn handle_deferred_tool_calls(
        &self,
        ctx: &RunContext<D>,
        requests: &DeferredToolRequests,
    ) -> Option<DeferredToolResults> {
        let mut results: Option<DeferredToolResults> = None;
        let mut remaining = requests.clone();
        for f in &self.closures.handle_deferred_tool_calls {
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

    async fn pending_messages(&self, ctx: &RunContext<D>, at: DeliveryPoint) -> Result<Delivery, AgentRunError> {
        let mut delivery = Delivery::default();
        for f in &self.closures.pending_messages {
            delivery.extend(f(ctx.clone(), at).await?);
        }
        Ok(delivery)
    }

    async fn prepare_output_tools(
        &self,
        ctx: &RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        thread(&self.closures.prepare_output_tools, tools, |f, tools| f(ctx.clone(), tools)).await
    }

    async fn before_run(&self, ctx: &RunContext<D>) -> Result<(), AgentRunError> {
        thread(&self.closures.before_run, (), |f, ()| f(ctx.clone())).await
    }

    async fn after_run(&self, ctx: &RunContext<D>, output: RunOutput) -> Result<RunOutput, AgentRunError> {
        thread(&self.closures.after_run, output, |f, output| f(ctx.clone(), output)).await
    }

    fn wrap_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        next: RunNext<'a>,
    ) -> impl Future<Output = Result<RunOutput, AgentRunError>> + Send + 'a {
        nest(&self.closures.wrap_run, (), Arc::new(next), move |f, (), next| f(ctx, next))
    }

    async fn on_run_error(&self, ctx: &RunContext<D>, error: AgentRunError) -> Result<RunOutput, AgentRunError> {
        recover(&self.closures.on_run_error, error, |f, e| f(ctx.clone(), e)).await
    }

    async fn before_node_run(&self, ctx: &RunContext<D>, node: AgentNode) -> Result<AgentNode, AgentRunError> {
        thread(&self.closures.before_node_run, node, |f, node| f(ctx.clone(), node)).await
    }

    async fn after_node_run(
        &self,
        ctx: &RunContext<D>,
        node: &AgentNode,
        result: NodeResult,
    ) -> Result<NodeResult, AgentRunError> {
        thread(&self.closures.after_node_run, result, |f, result| f(ctx.clone(), node.clone(), result)).await
    }

    fn wrap_node_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        node: AgentNode,
        next: NodeNext<'a>,
    ) -> impl Future<Output = Result<NodeResult, AgentRunError>> + Send + 'a {
        nest(&self.closures.wrap_node_run, node, Arc::new(next), move |f, node, next| f(ctx, node, next))
    }

    async fn on_node_run_error(
        &self,
        ctx: &RunContext<D>,
        node: &AgentNode,
        error: AgentRunError,
    ) -> Result<NodeResult, AgentRunError> {
        recover(&self.closures.on_node_run_error, error, |f, e| f(ctx.clone(), node.clone(), e)).await
    }

    fn wraps_event_stream(&self) -> bool {
        !self.closures.on_event.is_empty()
    }

    fn wrap_event_stream(&self, _ctx: &RunContext<D>, events: EventBoxStream) -> EventBoxStream {
        use futures::StreamExt;
        let handlers = self.closures.on_event.clone();
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
        thread(&self.closures.before_output_validate, raw, |f, raw| f(ctx.clone(), output.into(), raw)).await
    }

    async fn after_output_validate(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: Value,
    ) -> Result<Value, ToolError> {
        thread(&self.closures.after_output_validate, value, |f, value| f(ctx.clone(), output.into(), value)).await
    }

    fn wrap_output_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        raw: Value,
        next: OutputNext<'a>,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
        nest(&self.closures.wrap_output_validate, raw, Arc::new(next), move |f, raw, next| f(ctx, output, raw, next))
    }

    async fn on_output_validate_error(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        raw: &Value,
        error: ToolError,
    ) -> Result<Value, ToolError> {
        recover(&self.closures.on_output_validate_error, error, |f, e| f(ctx.clone(), output.into(), raw.clone(), e))
            .await
    }

    async fn before_output_process(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: Value,
    ) -> Result<Value, ToolError> {
        thread(&self.closures.before_output_process, value, |f, value| f(ctx.clone(), output.into(), value)).await
    }

    async fn after_output_process(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: Value,
    ) -> Result<Value, ToolError> {
        thread(&self.closures.after_output_process, value, |f, value| f(ctx.clone(), output.into(), value)).await
    }

    fn wrap_output_process<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: Value,
        next: OutputNext<'a>,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
        nest(&self.closures.wrap_output_process, value, Arc::new(next), move |f, value, next| {
            f(ctx, output, value, next)
        })
    }

    async fn on_output_process_error(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: &Value,
        error: ToolError,
    ) -> Result<Value, ToolError> {
        recover(&self.closures.on_output_process_error, error, |f, e| f(ctx.clone(), output.into(), value.clone(), e))
            .await
    }

    async fn prepare_tools(
        &self,
        ctx: &RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        thread(&self.closures.prepare_tools, tools, |f, tools| f(ctx.clone(), tools)).await
    }

    async fn before_model_request(
        &self,
        ctx: &RunContext<D>,
        request: ModelRequestContext,
    ) -> Result<ModelRequestContext, AgentRunError> {
        thread(&self.closures.before_model_request, request, |f, request| f(ctx.clone(), request)).await
    }

    async fn after_model_request(
        &self,
        ctx: &RunContext<D>,
        request: &ModelRequestContext,
        response: ModelResponse,
    ) -> Result<ModelResponse, AgentRunError> {
        thread(&self.closures.after_model_request, response, |f, response| f(ctx.clone(), request.clone(), response))
            .await
    }

    fn wrap_model_request<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        request: ModelRequestContext,
        next: ModelRequestNext<'a>,
    ) -> impl Future<Output = Result<ModelResponse, AgentRunError>> + Send + 'a {
        nest(&self.closures.wrap_model_request, request, Arc::new(next), move |f, request, next| f(ctx, request, next))
    }

    async fn on_model_request_error(
        &self,
        ctx: &RunContext<D>,
        request: &ModelRequestContext,
        error: AgentRunError,
    ) -> Result<ModelResponse, AgentRunError> {
        recover(&self.closures.on_model_request_error, error, |f, e| f(ctx.clone(), request.clone(), e)).await
    }

    async fn before_tool_validate(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        thread(&self.closures.before_tool_validate, args, |f, args| f(ctx.clone(), call.into(), args)).await
    }

    async fn after_tool_validate(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        thread(&self.closures.after_tool_validate, args, |f, args| f(ctx.clone(), call.into(), args)).await
    }

    async fn on_tool_validate_error(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        error: ToolError,
    ) -> Result<Value, ToolError> {
        recover(&self.closures.on_tool_validate_error, error, |f, e| f(ctx.clone(), call.into(), e)).await
    }

    fn wrap_tool_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolValidateNext<'a>,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
        nest(&self.closures.wrap_tool_validate, args, Arc::new(next), move |f, args, next| f(ctx, call, args, next))
    }

    async fn before_tool_execute(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        thread(&self.closures.before_tool_execute, args, |f, args| f(ctx.clone(), call.into(), args)).await
    }

    async fn after_tool_execute(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: &Value,
        result: ToolOutput,
    ) -> Result<ToolOutput, ToolError> {
        thread(&self.closures.after_tool_execute, result, |f, result| f(ctx.clone(), call.into(), args.clone(), result))
            .await
    }

    async fn on_tool_execute_error(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: &Value,
        error: ToolError,
    ) -> Result<ToolOutput, ToolError> {
        recover(&self.closures.on_tool_execute_error, error, |f, e| f(ctx.clone(), call.into(), args.clone(), e)).await
    }

    fn wrap_tool_execute<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolExecuteNext<'a>,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send + 'a {
        nest(&self.closures.wrap_tool_execute, args, Arc::new(next), move |f, args, next| f(ctx, call, args, next))
    }
}
