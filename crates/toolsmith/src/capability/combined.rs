//! [`CombinedCapability`]: several capabilities as one.

use std::any::Any;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::hook_list::hook_types::*;
use super::{BoxedCapability, Capability, DynCapability};
use crate::toolset::CombinedToolset;

/// Several capabilities as one unit, in order: a bundle a library hands out, a spec builds, or a
/// [`DynamicCapability`](super::DynamicCapability) returns for one run.
///
/// Added to an agent ([`AgentBuilder::capability`](crate::agent::AgentBuilder::capability)), to
/// one run ([`RunBuilder::capability`](crate::agent::RunBuilder::capability)) or returned by a
/// `for_run`, a combination is spread out in its place: each capability in it is one of the
/// agent's, with its own [ordering constraints](super::CapabilityOrdering), hook timeouts and
/// panics named after it, exactly as if it had been added by itself. A combination nested in
/// another is spread into it.
///
/// Held by a wrapper ([`PrefixTools`](super::PrefixTools), a [`WrapperCapability`](super::WrapperCapability)),
/// it is one capability that dispatches each hook to its members the way an agent does:
/// `before_*` hooks in order, `after_*` and `on_*_error` hooks in reverse (an error hook stops
/// at the first member that recovers), `wrap_*` hooks nested with the first outermost. Its
/// members then keep the order given, its hook timeout for a hook is the shortest of its
/// members', and a panic or a timeout names the combination (`CombinedCapability`).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use toolsmith::capability::{CombinedCapability, Hooks};
/// use toolsmith::prelude::*;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let hook = |name: &'static str| {
///     let seen = seen.clone();
///     Hooks::new().named(name).before_run(move |_ctx| {
///         seen.lock().unwrap().push(name);
///         async { Ok(()) }
///     })
/// };
/// // A house style, handed out as one capability.
/// let house_style: CombinedCapability<()> = CombinedCapability::new().with(hook("audit")).with(hook("quota"));
/// assert_eq!(house_style.len(), 2);
///
/// let agent = Agent::builder(TestModel::default())
///     .capability(hook("first"))
///     .capability(house_style)
///     .build()?;
/// agent.run("hi").run_sync()?;
/// assert_eq!(*seen.lock().unwrap(), ["first", "audit", "quota"]);
/// # Ok(())
/// # }
/// ```
pub struct CombinedCapability<D> {
    caps: Vec<BoxedCapability<D>>,
}

impl<D> Clone for CombinedCapability<D> {
    fn clone(&self) -> Self {
        CombinedCapability { caps: self.caps.clone() }
    }
}

impl<D> Default for CombinedCapability<D> {
    fn default() -> Self {
        CombinedCapability { caps: Vec::new() }
    }
}

impl<D> std::fmt::Debug for CombinedCapability<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.caps.iter().map(|c| c.0.name())).finish()
    }
}

impl<D: Sync + 'static> CombinedCapability<D> {
    /// No capabilities yet.
    pub fn new() -> Self {
        CombinedCapability { caps: Vec::new() }
    }

    /// Adds a capability after the others (a combination is spread into this one).
    pub fn add(&mut self, capability: impl Capability<D>) {
        spread(BoxedCapability::new(capability).0, &mut self.caps);
    }

    /// Adds a capability after the others, builder style.
    pub fn with(mut self, capability: impl Capability<D>) -> Self {
        self.add(capability);
        self
    }

    /// The capabilities, in order.
    pub fn capabilities(&self) -> &[BoxedCapability<D>] {
        &self.caps
    }

    /// How many capabilities are combined.
    pub fn len(&self) -> usize {
        self.caps.len()
    }

    /// Whether no capability is combined.
    pub fn is_empty(&self) -> bool {
        self.caps.is_empty()
    }
}

impl<D: Sync + 'static> FromIterator<BoxedCapability<D>> for CombinedCapability<D> {
    fn from_iter<I: IntoIterator<Item = BoxedCapability<D>>>(iter: I) -> Self {
        let mut caps = Vec::new();
        for c in iter {
            spread(c.0, &mut caps);
        }
        CombinedCapability { caps }
    }
}

/// Pushes `cap` onto `out`, or its members if it is a combination (recursively).
fn spread<D: Sync + 'static>(cap: Arc<dyn DynCapability<D>>, out: &mut Vec<BoxedCapability<D>>) {
    match cap.combined_members() {
        Some(members) => members.into_iter().for_each(|m| spread(m.0, out)),
        None => out.push(BoxedCapability(cap)),
    }
}

/// The members of a combination, if `cap` is one (or a [`BoxedCapability`] holding one).
pub(crate) fn members_of<D: 'static>(cap: &dyn Any) -> Option<Vec<BoxedCapability<D>>> {
    if let Some(c) = cap.downcast_ref::<CombinedCapability<D>>() {
        return Some(c.caps.clone());
    }
    cap.downcast_ref::<BoxedCapability<D>>().and_then(|b| b.0.combined_members())
}

/// `caps`, each combination spread in its place.
pub(crate) fn spread_all<D: Sync + 'static>(
    caps: impl IntoIterator<Item = Arc<dyn DynCapability<D>>>,
) -> Vec<Arc<dyn DynCapability<D>>> {
    let mut out = Vec::new();
    for c in caps {
        spread(c, &mut out);
    }
    out.into_iter().map(|b| b.0).collect()
}

impl<D: Send + Sync + 'static> CombinedCapability<D> {
    fn wrap_run_from<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        next: &'a RunNext<'_>,
    ) -> BoxFuture<'a, Result<RunOutput, AgentRunError>> {
        match self.caps.get(i) {
            Some(c) => c.0.wrap_run(ctx, RunNext::new(move || self.wrap_run_from(i + 1, ctx, next))),
            None => next.run(),
        }
    }

    fn wrap_node_from<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        node: AgentNode,
        next: &'a NodeNext<'_>,
    ) -> BoxFuture<'a, Result<NodeResult, AgentRunError>> {
        match self.caps.get(i) {
            Some(c) => c.0.wrap_node_run(ctx, node, NodeNext::new(move |n| self.wrap_node_from(i + 1, ctx, n, next))),
            None => next.run(node),
        }
    }

    fn wrap_request_from<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        request: ModelRequestContext,
        next: &'a ModelRequestNext<'_>,
    ) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>> {
        match self.caps.get(i) {
            Some(c) => c.0.wrap_model_request(
                ctx,
                request,
                ModelRequestNext::new(move |r| self.wrap_request_from(i + 1, ctx, r, next)),
            ),
            None => next.run(request),
        }
    }

    fn wrap_validate_from<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: &'a ToolValidateNext<'_>,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        match self.caps.get(i) {
            Some(c) => c.0.wrap_tool_validate(
                ctx,
                call,
                args,
                ToolValidateNext::new(move |a| self.wrap_validate_from(i + 1, ctx, call, a, next)),
            ),
            None => next.run(args),
        }
    }

    fn wrap_execute_from<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: &'a ToolExecuteNext<'_>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        match self.caps.get(i) {
            Some(c) => c.0.wrap_tool_execute(
                ctx,
                call,
                args,
                ToolExecuteNext::new(move |a| self.wrap_execute_from(i + 1, ctx, call, a, next), next.ran_flag()),
            ),
            None => next.run(args),
        }
    }

    /// `wrap_output_validate` (`process` false) or `wrap_output_process` from member `i` in.
    fn wrap_output_from<'a>(
        &'a self,
        process: bool,
        i: usize,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: Value,
        next: &'a OutputNext<'_>,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        let Some(c) = self.caps.get(i) else { return next.run(value) };
        let inner = OutputNext::new(move |v| self.wrap_output_from(process, i + 1, ctx, output, v, next));
        if process {
            c.0.wrap_output_process(ctx, output, value, inner)
        } else {
            c.0.wrap_output_validate(ctx, output, value, inner)
        }
    }
}

/// Threads `$value` through `$hook` of each member, in order (`fwd`) or in reverse (`rev`).
macro_rules! thread {
    ($self:ident, fwd, $hook:ident, $value:ident $(, $arg:expr)*) => {{
        let mut $value = $value;
        for c in &$self.caps {
            $value = c.0.$hook($($arg,)* $value).await?;
        }
        Ok($value)
    }};
    ($self:ident, rev, $hook:ident, $value:ident $(, $arg:expr)*) => {{
        let mut $value = $value;
        for c in $self.caps.iter().rev() {
            $value = c.0.$hook($($arg,)* $value).await?;
        }
        Ok($value)
    }};
}

/// Offers `$error` to `$hook` of each member in reverse until one recovers.
macro_rules! recover {
    ($self:ident, $hook:ident, $error:ident $(, $arg:expr)*) => {{
        let mut outcome = Err($error);
        for c in $self.caps.iter().rev() {
            match outcome {
                Err(e) => outcome = c.0.$hook($($arg,)* e).await,
                Ok(_) => break,
            }
        }
        outcome
    }};
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for CombinedCapability<D> {
    fn name(&self) -> String {
        "CombinedCapability".into()
    }
    fn apply(&self, visitor: &mut dyn FnMut(&dyn Any)) {
        for c in &self.caps {
            c.0.apply(visitor);
        }
    }
    fn for_run(&self, ctx: &RunContext<D>) -> Option<BoxedCapability<D>> {
        let fresh: Vec<Option<BoxedCapability<D>>> = self.caps.iter().map(|c| c.0.for_run(ctx)).collect();
        if fresh.iter().all(Option::is_none) {
            return None;
        }
        let caps = fresh.into_iter().zip(&self.caps).map(|(f, c)| f.unwrap_or_else(|| c.clone()));
        Some(BoxedCapability::new(caps.collect::<CombinedCapability<D>>()))
    }
    fn toolset(&self) -> Option<BoxedToolset<D>> {
        let toolsets: Vec<_> = self.caps.iter().filter_map(|c| c.0.toolset()).map(|t| t.0).collect();
        (!toolsets.is_empty()).then(|| BoxedToolset::new(CombinedToolset::from_dyn(toolsets)))
    }

    fn hook_timeout(&self, hook: &str) -> Option<Duration> {
        self.caps.iter().filter_map(|c| c.0.hook_timeout(hook)).min()
    }
    fn has_prepare_tools(&self) -> bool {
        self.caps.iter().any(|c| c.0.has_prepare_tools())
    }
    fn wrapper_toolset(&self, toolset: BoxedToolset<D>) -> Option<BoxedToolset<D>> {
        let mut wrapped = None;
        for c in self.caps.iter().rev() {
            let current = wrapped.clone().unwrap_or_else(|| toolset.clone());
            if let Some(w) = c.0.wrapper_toolset(current) {
                wrapped = Some(w);
            }
        }
        wrapped
    }
    fn model_settings(&self, ctx: &RunContext<D>) -> Option<ModelSettings> {
        self.caps.iter().filter_map(|c| c.0.model_settings(ctx)).reduce(|base, s| base.merged(&s))
    }
    fn wraps_event_stream(&self) -> bool {
        self.caps.iter().any(|c| c.0.wraps_event_stream())
    }
    fn native_tools(&self) -> Vec<NativeTool> {
        self.caps.iter().flat_map(|c| c.0.native_tools()).collect()
    }
    fn hooks_stage(&self, stage: HookStage) -> bool {
        self.caps.iter().any(|c| c.0.hooks_stage(stage))
    }
    fn wrap_event_stream(&self, ctx: &RunContext<D>, mut events: EventBoxStream) -> EventBoxStream {
        for c in self.caps.iter().rev() {
            if c.0.wraps_event_stream() {
                events = c.0.wrap_event_stream(ctx, events);
            }
        }
        events
    }

    async fn instructions(&self, ctx: &RunContext<D>) -> Option<String> {
        let mut parts = Vec::new();
        for c in &self.caps {
            parts.extend(c.0.instructions(ctx).await);
        }
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }
    async fn handle_deferred_tool_calls(
        &self,
        ctx: &RunContext<D>,
        requests: &DeferredToolRequests,
    ) -> Option<DeferredToolResults> {
        let mut results: Option<DeferredToolResults> = None;
        let mut remaining = requests.clone();
        for c in &self.caps {
            if remaining.is_empty() {
                break;
            }
            if let Some(r) = c.0.handle_deferred_tool_calls(ctx, &remaining).await {
                remaining = remaining.remaining(&r);
                results.get_or_insert_with(DeferredToolResults::new).update(r);
            }
        }
        results
    }
    async fn pending_messages(
        &self,
        ctx: &RunContext<D>,
        at: crate::capability::DeliveryPoint,
    ) -> Result<crate::capability::Delivery, AgentRunError> {
        let mut delivery = crate::capability::Delivery::default();
        for c in &self.caps {
            delivery.extend(c.0.pending_messages(ctx, at).await?);
        }
        Ok(delivery)
    }
    async fn prepare_tools(
        &self,
        ctx: &RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        thread!(self, fwd, prepare_tools, tools, ctx)
    }
    async fn prepare_output_tools(
        &self,
        ctx: &RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        thread!(self, fwd, prepare_output_tools, tools, ctx)
    }

    async fn before_run(&self, ctx: &RunContext<D>) -> Result<(), AgentRunError> {
        for c in &self.caps {
            c.0.before_run(ctx).await?;
        }
        Ok(())
    }
    async fn after_run(&self, ctx: &RunContext<D>, output: RunOutput) -> Result<RunOutput, AgentRunError> {
        thread!(self, rev, after_run, output, ctx)
    }
    async fn wrap_run<'a>(&'a self, ctx: &'a RunContext<D>, next: RunNext<'a>) -> Result<RunOutput, AgentRunError> {
        self.wrap_run_from(0, ctx, &next).await
    }
    async fn on_run_error(&self, ctx: &RunContext<D>, error: AgentRunError) -> Result<RunOutput, AgentRunError> {
        recover!(self, on_run_error, error, ctx)
    }

    async fn before_node_run(&self, ctx: &RunContext<D>, node: AgentNode) -> Result<AgentNode, AgentRunError> {
        thread!(self, fwd, before_node_run, node, ctx)
    }
    async fn after_node_run(
        &self,
        ctx: &RunContext<D>,
        node: &AgentNode,
        result: NodeResult,
    ) -> Result<NodeResult, AgentRunError> {
        thread!(self, rev, after_node_run, result, ctx, node)
    }
    async fn wrap_node_run<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        node: AgentNode,
        next: NodeNext<'a>,
    ) -> Result<NodeResult, AgentRunError> {
        self.wrap_node_from(0, ctx, node, &next).await
    }
    async fn on_node_run_error(
        &self,
        ctx: &RunContext<D>,
        node: &AgentNode,
        error: AgentRunError,
    ) -> Result<NodeResult, AgentRunError> {
        recover!(self, on_node_run_error, error, ctx, node)
    }

    async fn before_model_request(
        &self,
        ctx: &RunContext<D>,
        request: ModelRequestContext,
    ) -> Result<ModelRequestContext, AgentRunError> {
        thread!(self, fwd, before_model_request, request, ctx)
    }
    async fn after_model_request(
        &self,
        ctx: &RunContext<D>,
        request: &ModelRequestContext,
        response: ModelResponse,
    ) -> Result<ModelResponse, AgentRunError> {
        thread!(self, rev, after_model_request, response, ctx, request)
    }
    async fn wrap_model_request<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        request: ModelRequestContext,
        next: ModelRequestNext<'a>,
    ) -> Result<ModelResponse, AgentRunError> {
        self.wrap_request_from(0, ctx, request, &next).await
    }
    async fn on_model_request_error(
        &self,
        ctx: &RunContext<D>,
        request: &ModelRequestContext,
        error: AgentRunError,
    ) -> Result<ModelResponse, AgentRunError> {
        recover!(self, on_model_request_error, error, ctx, request)
    }

    async fn before_tool_validate(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        thread!(self, fwd, before_tool_validate, args, ctx, call)
    }
    async fn after_tool_validate(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        thread!(self, rev, after_tool_validate, args, ctx, call)
    }
    async fn wrap_tool_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolValidateNext<'a>,
    ) -> Result<Value, ToolError> {
        self.wrap_validate_from(0, ctx, call, args, &next).await
    }
    async fn on_tool_validate_error(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        error: ToolError,
    ) -> Result<Value, ToolError> {
        recover!(self, on_tool_validate_error, error, ctx, call)
    }

    async fn before_tool_execute(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        thread!(self, fwd, before_tool_execute, args, ctx, call)
    }
    async fn after_tool_execute(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: &Value,
        result: ToolOutput,
    ) -> Result<ToolOutput, ToolError> {
        thread!(self, rev, after_tool_execute, result, ctx, call, args)
    }
    async fn wrap_tool_execute<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolExecuteNext<'a>,
    ) -> Result<ToolOutput, ToolError> {
        self.wrap_execute_from(0, ctx, call, args, &next).await
    }
    async fn on_tool_execute_error(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: &Value,
        error: ToolError,
    ) -> Result<ToolOutput, ToolError> {
        recover!(self, on_tool_execute_error, error, ctx, call, args)
    }

    async fn before_output_validate(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        raw: Value,
    ) -> Result<Value, ToolError> {
        thread!(self, fwd, before_output_validate, raw, ctx, output)
    }
    async fn after_output_validate(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: Value,
    ) -> Result<Value, ToolError> {
        thread!(self, rev, after_output_validate, value, ctx, output)
    }
    async fn wrap_output_validate<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        raw: Value,
        next: OutputNext<'a>,
    ) -> Result<Value, ToolError> {
        self.wrap_output_from(false, 0, ctx, output, raw, &next).await
    }
    async fn on_output_validate_error(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        raw: &Value,
        error: ToolError,
    ) -> Result<Value, ToolError> {
        recover!(self, on_output_validate_error, error, ctx, output, raw)
    }

    async fn before_output_process(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: Value,
    ) -> Result<Value, ToolError> {
        thread!(self, fwd, before_output_process, value, ctx, output)
    }
    async fn after_output_process(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: Value,
    ) -> Result<Value, ToolError> {
        thread!(self, rev, after_output_process, value, ctx, output)
    }
    async fn wrap_output_process<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        output: OutputInfo<'a>,
        value: Value,
        next: OutputNext<'a>,
    ) -> Result<Value, ToolError> {
        self.wrap_output_from(true, 0, ctx, output, value, &next).await
    }
    async fn on_output_process_error(
        &self,
        ctx: &RunContext<D>,
        output: OutputInfo<'_>,
        value: &Value,
        error: ToolError,
    ) -> Result<Value, ToolError> {
        recover!(self, on_output_process_error, error, ctx, output, value)
    }
}
