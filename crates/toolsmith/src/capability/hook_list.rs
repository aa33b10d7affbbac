//! The hooks of [`Capability`](super::Capability), listed once.
//!
//! `Capability` itself is written out by hand, each hook with its documentation and its
//! default. What only passes hooks on is generated from the list in `for_each_hook!`:
//!
//! - the hook methods of `DynCapability`, the dyn-compatible form with boxed futures
//!   (`dyn_hooks!`), and of its blanket impl for every capability (`forward_hooks!`), both in
//!   `boxed.rs`;
//! - `delegate_hooks!(field)`: the hook methods of a wrapper, each passed on to the
//!   `DynCapability` in `self.field` (`BoxedCapability`, `PrefixTools`);
//! - the hook methods of the public `WrapperCapability` trait, each passing the call on to the
//!   wrapped capability, and of the `Capability` impl of `Wrapper` (`wrapper.rs`).
//!
//! To add a hook: declare it in `Capability` (documentation, default), add its signature here,
//! dispatch it in `chain.rs`, and give `Hooks` a closure for it if application code may want
//! one. A hook missing from the list, or listed with another signature, does not compile: the
//! chain calls it through `DynCapability`, and the blanket impl calls `Capability`'s.
//!
//! The methods that are not hooks (`name`, `ordering`, `apply`, `for_run`, `toolset`) and the
//! cheap checks that say which hooks do something (`has_prepare_tools`, `wraps_event_stream`,
//! `hooks_stage`) are not in the list: a wrapper decides them itself (a `WrapperCapability`
//! that overrides a hook must not be skipped because the capability it wraps says it has none).

/// Calls `$callback!` once per kind of hook, with the signature of each hook of that kind as
/// [`Capability`](super::Capability) declares it, then the tokens `$extra` in brackets:
///
/// - `sync`: plain methods;
/// - `async`: the hooks that return a future (`impl Future + Send`) holding their borrowed
///   arguments. `Capability` leaves those lifetimes out, one per argument; `DynCapability`
///   gives them all the lifetime of its boxed future. So they are written `$a`: `'_` for the
///   first form, `'a` for the second;
/// - `wrap`: the `wrap_*` hooks, whose future lives for the `'a` that `Capability` names.
///
/// Every method takes `&self`; the callback writes the receiver's lifetime. The types are
/// named as [`hook_types`] exports them: a module expanding the list imports
/// `hook_types::*`.
macro_rules! for_each_hook {
    ($a:lifetime, $callback:ident $(, $extra:tt)*) => {
        $callback! { sync [$($extra)*]
            fn hook_timeout(&self, hook: &str) -> Option<Duration>;
            fn wrapper_toolset(&self, toolset: BoxedToolset<D>) -> Option<BoxedToolset<D>>;
            fn model_settings(&self, ctx: &RunContext<D>) -> Option<ModelSettings>;
            fn native_tools(&self) -> Vec<NativeTool>;
            fn wrap_event_stream(&self, ctx: &RunContext<D>, events: EventBoxStream) -> EventBoxStream;
        }
        $callback! { async [$($extra)*]
            fn instructions(&self, ctx: &$a RunContext<D>) -> Option<String>;
            fn handle_deferred_tool_calls(
                &self,
                ctx: &$a RunContext<D>,
                requests: &$a DeferredToolRequests,
            ) -> Option<DeferredToolResults>;
            fn pending_messages(
                &self,
                ctx: &$a RunContext<D>,
                at: DeliveryPoint,
            ) -> Result<Delivery, AgentRunError>;
            fn prepare_tools(
                &self,
                ctx: &$a RunContext<D>,
                tools: Vec<ToolDefinition>,
            ) -> Result<Vec<ToolDefinition>, AgentRunError>;
            fn prepare_output_tools(
                &self,
                ctx: &$a RunContext<D>,
                tools: Vec<ToolDefinition>,
            ) -> Result<Vec<ToolDefinition>, AgentRunError>;

            fn before_run(&self, ctx: &$a RunContext<D>) -> Result<(), AgentRunError>;
            fn after_run(&self, ctx: &$a RunContext<D>, output: RunOutput) -> Result<RunOutput, AgentRunError>;
            fn on_run_error(&self, ctx: &$a RunContext<D>, error: AgentRunError) -> Result<RunOutput, AgentRunError>;

            fn before_node_run(&self, ctx: &$a RunContext<D>, node: AgentNode) -> Result<AgentNode, AgentRunError>;
            fn after_node_run(
                &self,
                ctx: &$a RunContext<D>,
                node: &$a AgentNode,
                result: NodeResult,
            ) -> Result<NodeResult, AgentRunError>;
            fn on_node_run_error(
                &self,
                ctx: &$a RunContext<D>,
                node: &$a AgentNode,
                error: AgentRunError,
            ) -> Result<NodeResult, AgentRunError>;

            fn before_model_request(
                &self,
                ctx: &$a RunContext<D>,
                request: ModelRequestContext,
            ) -> Result<ModelRequestContext, AgentRunError>;
            fn after_model_request(
                &self,
                ctx: &$a RunContext<D>,
                request: &$a ModelRequestContext,
                response: ModelResponse,
            ) -> Result<ModelResponse, AgentRunError>;
            fn on_model_request_error(
                &self,
                ctx: &$a RunContext<D>,
                request: &$a ModelRequestContext,
                error: AgentRunError,
            ) -> Result<ModelResponse, AgentRunError>;

            fn before_tool_validate(
                &self,
                ctx: &$a RunContext<D>,
                call: ToolCallInfo<$a>,
                args: Value,
            ) -> Result<Value, ToolError>;
            fn after_tool_validate(
                &self,
                ctx: &$a RunContext<D>,
                call: ToolCallInfo<$a>,
                args: Value,
            ) -> Result<Value, ToolError>;
            fn on_tool_validate_error(
                &self,
                ctx: &$a RunContext<D>,
                call: ToolCallInfo<$a>,
                error: ToolError,
            ) -> Result<Value, ToolError>;

            fn before_tool_execute(
                &self,
                ctx: &$a RunContext<D>,
                call: ToolCallInfo<$a>,
                args: Value,
            ) -> Result<Value, ToolError>;
            fn after_tool_execute(
                &self,
                ctx: &$a RunContext<D>,
                call: ToolCallInfo<$a>,
                args: &$a Value,
                result: ToolOutput,
            ) -> Result<ToolOutput, ToolError>;
            fn on_tool_execute_error(
                &self,
                ctx: &$a RunContext<D>,
                call: ToolCallInfo<$a>,
                args: &$a Value,
                error: ToolError,
            ) -> Result<ToolOutput, ToolError>;

            fn before_output_validate(
                &self,
                ctx: &$a RunContext<D>,
                output: OutputInfo<$a>,
                raw: Value,
            ) -> Result<Value, ToolError>;
            fn after_output_validate(
                &self,
                ctx: &$a RunContext<D>,
                output: OutputInfo<$a>,
                value: Value,
            ) -> Result<Value, ToolError>;
            fn on_output_validate_error(
                &self,
                ctx: &$a RunContext<D>,
                output: OutputInfo<$a>,
                raw: &$a Value,
                error: ToolError,
            ) -> Result<Value, ToolError>;

            fn before_output_process(
                &self,
                ctx: &$a RunContext<D>,
                output: OutputInfo<$a>,
                value: Value,
            ) -> Result<Value, ToolError>;
            fn after_output_process(
                &self,
                ctx: &$a RunContext<D>,
                output: OutputInfo<$a>,
                value: Value,
            ) -> Result<Value, ToolError>;
            fn on_output_process_error(
                &self,
                ctx: &$a RunContext<D>,
                output: OutputInfo<$a>,
                value: &$a Value,
                error: ToolError,
            ) -> Result<Value, ToolError>;
        }
        $callback! { wrap [$($extra)*]
            fn wrap_run(&self, ctx: &'a RunContext<D>, next: RunNext<'a>) -> Result<RunOutput, AgentRunError>;
            fn wrap_node_run(
                &self,
                ctx: &'a RunContext<D>,
                node: AgentNode,
                next: NodeNext<'a>,
            ) -> Result<NodeResult, AgentRunError>;
            fn wrap_model_request(
                &self,
                ctx: &'a RunContext<D>,
                request: ModelRequestContext,
                next: ModelRequestNext<'a>,
            ) -> Result<ModelResponse, AgentRunError>;
            fn wrap_tool_validate(
                &self,
                ctx: &'a RunContext<D>,
                call: ToolCallInfo<'a>,
                args: Value,
                next: ToolValidateNext<'a>,
            ) -> Result<Value, ToolError>;
            fn wrap_tool_execute(
                &self,
                ctx: &'a RunContext<D>,
                call: ToolCallInfo<'a>,
                args: Value,
                next: ToolExecuteNext<'a>,
            ) -> Result<ToolOutput, ToolError>;
            fn wrap_output_validate(
                &self,
                ctx: &'a RunContext<D>,
                output: OutputInfo<'a>,
                raw: Value,
                next: OutputNext<'a>,
            ) -> Result<Value, ToolError>;
            fn wrap_output_process(
                &self,
                ctx: &'a RunContext<D>,
                output: OutputInfo<'a>,
                value: Value,
                next: OutputNext<'a>,
            ) -> Result<Value, ToolError>;
        }
    };
}

/// The types the hook list names, for `use super::hook_list::hook_types::*` where it is
/// expanded.
pub(super) mod hook_types {
    pub(crate) use super::super::{
        AgentNode, Delivery, DeliveryPoint, EventBoxStream, HookStage, ModelRequestContext, ModelRequestNext, NodeNext,
        NodeResult, OutputInfo, OutputNext, RunNext, ToolCallInfo, ToolExecuteNext, ToolValidateNext,
    };
    pub(crate) use crate::context::RunContext;
    pub(crate) use crate::deferred::{DeferredToolRequests, DeferredToolResults};
    pub(crate) use crate::error::AgentRunError;
    pub(crate) use crate::messages::ModelResponse;
    pub(crate) use crate::model::ModelSettings;
    pub(crate) use crate::native::NativeTool;
    pub(crate) use crate::run::RunOutput;
    pub(crate) use crate::tool::{ToolDefinition, ToolError, ToolOutput};
    pub(crate) use crate::toolset::BoxedToolset;
    pub(crate) use serde_json::Value;
    pub(crate) use std::time::Duration;
}

/// The hook methods of `DynCapability` (in its trait definition): an `async` or `wrap` hook
/// returns a boxed future that holds every borrow for `'a`.
macro_rules! dyn_hooks {
    (sync [] $(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        $(fn $name(&self $(, $arg: $ty)*) -> $ret;)*
    };
    (async [] $(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        $(fn $name<'a>(&'a self $(, $arg: $ty)*) -> ::futures::future::BoxFuture<'a, $ret>;)*
    };
    (wrap [] $(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        dyn_hooks! { async [] $(fn $name(&self $(, $arg: $ty)*) -> $ret;)* }
    };
}

/// The hook methods of the blanket `impl<C: Capability<D>> DynCapability<D> for C`: each calls
/// `Capability`'s, boxing its future.
macro_rules! forward_hooks {
    (sync [] $(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        $(fn $name(&self $(, $arg: $ty)*) -> $ret {
            Capability::$name(self $(, $arg)*)
        })*
    };
    (async [] $(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        $(fn $name<'a>(&'a self $(, $arg: $ty)*) -> ::futures::future::BoxFuture<'a, $ret> {
            Box::pin(Capability::$name(self $(, $arg)*))
        })*
    };
    (wrap [] $(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        forward_hooks! { async [] $(fn $name(&self $(, $arg: $ty)*) -> $ret;)* }
    };
}

/// The hook methods of a wrapper's `Capability` impl, each passed on to `self.$inner` (a
/// `DynCapability`, such as the `Arc<dyn DynCapability<D>>` of a `BoxedCapability`).
macro_rules! delegate_hooks {
    ($inner:tt) => {
        for_each_hook!('_, delegate_hooks, [$inner]);
    };
    (sync [[$inner:tt]] $(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        $(fn $name(&self $(, $arg: $ty)*) -> $ret {
            self.$inner.$name($($arg),*)
        })*
    };
    (async [[$inner:tt]] $(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        $(fn $name(&self $(, $arg: $ty)*) -> impl ::std::future::Future<Output = $ret> + Send {
            async move { self.$inner.$name($($arg),*).await }
        })*
    };
    (wrap [[$inner:tt]] $(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        $(fn $name<'a>(&'a self $(, $arg: $ty)*) -> impl ::std::future::Future<Output = $ret> + Send + 'a {
            self.$inner.$name($($arg),*)
        })*
    };
}
