//! [`Hooks`]: a capability made of closures, for application code.
//!
//! This file holds the closures: listed once in `for_each_hook_closure!`, from which their
//! storage and the builder methods are generated. `capability.rs` runs them as the hooks of a
//! [`Capability`](super::Capability).

mod capability;

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::{
    AgentNode, CapabilityOrdering, Delivery, DeliveryPoint, ModelRequestContext, ModelRequestNext, NodeNext,
    NodeResult, OutputInfo, OutputKind, OutputNext, RunNext, ToolCallInfo, ToolExecuteNext, ToolValidateNext,
};
use crate::context::RunContext;
use crate::deferred::{DeferredToolRequests, DeferredToolResults};
use crate::error::AgentRunError;
use crate::messages::{ModelResponse, ToolCallPart};
use crate::run::{AgentEvent, RunOutput};
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

/// Calls `$callback!` with every closure a [`Hooks`] may hold, in the order of its builder
/// methods. Each is written as its builder: the documentation, the kind of closure, then the
/// builder's name, the closure's arguments and what its future gives.
///
/// - `owned`: the closure gets what the hook gets, owned, and returns any `Send` future;
/// - `wrap`: a `wrap_*` closure, which borrows the context and the call for `'a` and returns a
///   boxed future.
macro_rules! for_each_hook_closure {
    ($callback:ident) => {
        $callback! {
            /// When a run starts; an error ends the run (through `on_run_error`).
            owned fn before_run(ctx: RunContext<D>) -> Result<(), AgentRunError>;
            /// When a run ends with an output or deferred requests: may change the output.
            owned fn after_run(ctx: RunContext<D>, output: RunOutput) -> Result<RunOutput, AgentRunError>;
            /// Around the whole run: `next.run()` runs it.
            wrap fn wrap_run(ctx: &'a RunContext<D>, next: RunNext<'a>) -> Result<RunOutput, AgentRunError>;
            /// When a run fails: `Err` passes the error (or another one) on, `Ok(output)` recovers.
            owned fn on_run_error(ctx: RunContext<D>, error: AgentRunError) -> Result<RunOutput, AgentRunError>;

            /// Before each node of the run: may replace it with a node of the same kind.
            owned fn before_node_run(ctx: RunContext<D>, node: AgentNode) -> Result<AgentNode, AgentRunError>;
            /// After each node that succeeded: may change what comes next.
            owned fn after_node_run(
                ctx: RunContext<D>,
                node: AgentNode,
                result: NodeResult,
            ) -> Result<NodeResult, AgentRunError>;
            /// Around each node: `next.run(node)` runs it.
            wrap fn wrap_node_run(
                ctx: &'a RunContext<D>,
                node: AgentNode,
                next: NodeNext<'a>,
            ) -> Result<NodeResult, AgentRunError>;
            /// When a node fails: `Err` passes the error on, `Ok(result)` recovers.
            owned fn on_node_run_error(
                ctx: RunContext<D>,
                node: AgentNode,
                error: AgentRunError,
            ) -> Result<NodeResult, AgentRunError>;

            /// With each event of the run, in order (the events pass on unchanged; see
            /// [`ProcessEventStream`](super::ProcessEventStream) to change them). A run with such a
            /// hook produces its events even without an event handler.
            owned fn on_event(event: AgentEvent) -> ();

            /// Before structured output is validated: may change the raw output, or ask for a retry.
            owned fn before_output_validate(
                ctx: RunContext<D>,
                output: OwnedOutput,
                raw: Value,
            ) -> Result<Value, ToolError>;
            /// After the output validated: may change the value, or ask for a retry.
            owned fn after_output_validate(
                ctx: RunContext<D>,
                output: OwnedOutput,
                value: Value,
            ) -> Result<Value, ToolError>;
            /// Around the output's validation: `next.run(raw)` validates.
            wrap fn wrap_output_validate(
                ctx: &'a RunContext<D>,
                output: OutputInfo<'a>,
                raw: Value,
                next: OutputNext<'a>,
            ) -> Result<Value, ToolError>;
            /// When the output fails validation: `Ok(value)` recovers (the closure gets the raw output).
            owned fn on_output_validate_error(
                ctx: RunContext<D>,
                output: OwnedOutput,
                raw: Value,
                error: ToolError,
            ) -> Result<Value, ToolError>;

            /// Before the validated output is processed: may change it, or ask for a retry.
            owned fn before_output_process(
                ctx: RunContext<D>,
                output: OwnedOutput,
                value: Value,
            ) -> Result<Value, ToolError>;
            /// After the output was processed: may change the result, or ask for a retry.
            owned fn after_output_process(
                ctx: RunContext<D>,
                output: OwnedOutput,
                value: Value,
            ) -> Result<Value, ToolError>;
            /// Around the output's processing: `next.run(value)` processes.
            wrap fn wrap_output_process(
                ctx: &'a RunContext<D>,
                output: OutputInfo<'a>,
                value: Value,
                next: OutputNext<'a>,
            ) -> Result<Value, ToolError>;
            /// When processing fails (not a retry): `Ok(value)` recovers.
            owned fn on_output_process_error(
                ctx: RunContext<D>,
                output: OwnedOutput,
                value: Value,
                error: ToolError,
            ) -> Result<Value, ToolError>;

            /// Filters or edits the function tool definitions of each step.
            owned fn prepare_tools(
                ctx: RunContext<D>,
                tools: Vec<ToolDefinition>,
            ) -> Result<Vec<ToolDefinition>, AgentRunError>;
            /// Filters or edits the output tool definitions of each step.
            owned fn prepare_output_tools(
                ctx: RunContext<D>,
                tools: Vec<ToolDefinition>,
            ) -> Result<Vec<ToolDefinition>, AgentRunError>;
            /// Settles deferred calls inline (see
            /// [`HandleDeferredToolCalls`](super::HandleDeferredToolCalls)); each closure gets the
            /// calls the previous ones left unanswered.
            owned fn handle_deferred_tool_calls(
                ctx: RunContext<D>,
                requests: DeferredToolRequests,
            ) -> Option<DeferredToolResults>;
            /// Messages to deliver into the conversation (see
            /// [`Capability::pending_messages`](super::Capability::pending_messages)): asked before
            /// every model request and when the run is about to end with its output; the
            /// closures' deliveries are sent in the order the closures were added.
            owned fn pending_messages(ctx: RunContext<D>, at: DeliveryPoint) -> Result<Delivery, AgentRunError>;

            /// Before each model request: may change the messages, settings and parameters sent.
            owned fn before_model_request(
                ctx: RunContext<D>,
                request: ModelRequestContext,
            ) -> Result<ModelRequestContext, AgentRunError>;
            /// After each model response: may change it.
            owned fn after_model_request(
                ctx: RunContext<D>,
                request: ModelRequestContext,
                response: ModelResponse,
            ) -> Result<ModelResponse, AgentRunError>;
            /// Around each model request: `next.run(request)` makes it.
            wrap fn wrap_model_request(
                ctx: &'a RunContext<D>,
                request: ModelRequestContext,
                next: ModelRequestNext<'a>,
            ) -> Result<ModelResponse, AgentRunError>;
            /// When a model request fails: `Ok(response)` recovers, `Err` passes the error on.
            owned fn on_model_request_error(
                ctx: RunContext<D>,
                request: ModelRequestContext,
                error: AgentRunError,
            ) -> Result<ModelResponse, AgentRunError>;

            /// Before a call's arguments are validated: may change the raw arguments.
            owned fn before_tool_validate(
                ctx: RunContext<D>,
                call: OwnedToolCall,
                args: Value,
            ) -> Result<Value, ToolError>;
            /// After the arguments validated: may change the validated arguments.
            owned fn after_tool_validate(
                ctx: RunContext<D>,
                call: OwnedToolCall,
                args: Value,
            ) -> Result<Value, ToolError>;
            /// Around the validation of each call: `next.run(args)` validates.
            wrap fn wrap_tool_validate(
                ctx: &'a RunContext<D>,
                call: ToolCallInfo<'a>,
                args: Value,
                next: ToolValidateNext<'a>,
            ) -> Result<Value, ToolError>;
            /// When validation fails: `Ok(args)` recovers with validated arguments.
            owned fn on_tool_validate_error(
                ctx: RunContext<D>,
                call: OwnedToolCall,
                error: ToolError,
            ) -> Result<Value, ToolError>;

            /// Before a tool runs: may change the validated arguments.
            owned fn before_tool_execute(
                ctx: RunContext<D>,
                call: OwnedToolCall,
                args: Value,
            ) -> Result<Value, ToolError>;
            /// After a tool returned: may change the result (the arguments are the ones it ran with).
            owned fn after_tool_execute(
                ctx: RunContext<D>,
                call: OwnedToolCall,
                args: Value,
                result: ToolOutput,
            ) -> Result<ToolOutput, ToolError>;
            /// Around the execution of each call: `next.run(args)` executes.
            wrap fn wrap_tool_execute(
                ctx: &'a RunContext<D>,
                call: ToolCallInfo<'a>,
                args: Value,
                next: ToolExecuteNext<'a>,
            ) -> Result<ToolOutput, ToolError>;
            /// When a tool fails (not a retry or a deferral): `Ok(result)` recovers.
            owned fn on_tool_execute_error(
                ctx: RunContext<D>,
                call: OwnedToolCall,
                args: Value,
                error: ToolError,
            ) -> Result<ToolOutput, ToolError>;
        }
    };
}

/// The type of one closure of a kind, as [`Hooks`] keeps it.
macro_rules! closure_type {
    (owned ($($ty:ty),*) -> $ret:ty) => {
        Arc<dyn Fn($($ty),*) -> BoxFuture<'static, $ret> + Send + Sync>
    };
    (wrap ($($ty:ty),*) -> $ret:ty) => {
        Arc<dyn for<'a> Fn($($ty),*) -> BoxFuture<'a, $ret> + Send + Sync>
    };
}

/// `Closures<D>`, with a list of closures per hook, and its `Default` and `Clone`.
macro_rules! closure_lists {
    ($($(#[$doc:meta])* $kind:ident fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)*) => {
        /// The closures of a [`Hooks`]: a list per hook, in the order they were added.
        struct Closures<D> {
            $($name: Vec<closure_type!($kind ($($ty),*) -> $ret)>,)*
        }

        impl<D> Default for Closures<D> {
            fn default() -> Self {
                Closures { $($name: Vec::new(),)* }
            }
        }

        impl<D> Clone for Closures<D> {
            fn clone(&self) -> Self {
                Closures { $($name: self.$name.clone(),)* }
            }
        }

        impl<D> Closures<D> {
            /// Whether a closure is registered for the hook of this name.
            fn has(&self, hook: &str) -> bool {
                match hook {
                    $(stringify!($name) => !self.$name.is_empty(),)*
                    _ => false,
                }
            }
        }
    };
}

/// The builder methods of [`Hooks`], one per hook, each adding a closure to its list.
macro_rules! closure_builders {
    ($($(#[$doc:meta])* $kind:ident fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)*) => {
        $(closure_builder! { $(#[$doc])* $kind fn $name($($arg: $ty),*) -> $ret })*
    };
}

/// One builder method: an `owned` closure may return any future (it is boxed here), a `wrap`
/// closure returns a boxed one.
macro_rules! closure_builder {
    ($(#[$doc:meta])* owned fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        $(#[$doc])*
        pub fn $name<F, R>(mut self, f: F) -> Self
        where
            F: Fn($($ty),*) -> R + Send + Sync + 'static,
            R: Future<Output = $ret> + Send + 'static,
        {
            self.closures.$name.push(Arc::new(move |$($arg),*| Box::pin(f($($arg),*))));
            self
        }
    };
    ($(#[$doc:meta])* wrap fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        $(#[$doc])*
        pub fn $name<F>(mut self, f: F) -> Self
        where
            F: for<'a> Fn($($ty),*) -> BoxFuture<'a, $ret> + Send + Sync + 'static,
        {
            self.closures.$name.push(Arc::new(f));
            self
        }
    };
}

for_each_hook_closure!(closure_lists);

/// A capability made of closures, one or more per hook: for application code that needs a few
/// hooks without writing a [`Capability`](super::Capability) impl.
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
/// the outermost). The capability's [`Capability::name`](super::Capability::name) is `Hooks`
/// unless set with [`named`](Hooks::named), and it has the ordering constraints given to
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
    timeout: Option<std::time::Duration>,
    closures: Closures<D>,
}

impl<D> Default for Hooks<D> {
    fn default() -> Self {
        Hooks { name: None, ordering: None, timeout: None, closures: Closures::default() }
    }
}

impl<D> Clone for Hooks<D> {
    fn clone(&self) -> Self {
        Hooks {
            name: self.name.clone(),
            ordering: self.ordering.clone(),
            timeout: self.timeout,
            closures: self.closures.clone(),
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

    /// Bounds each call of the hooks given closures here by `timeout`: one that runs past it stops the run
    /// with [`AgentRunError::HookTimeout`] naming this capability and the hook (a `wrap_*`
    /// hook's time includes what it wraps). For hooks with different timeouts, use one `Hooks`
    /// per timeout (Pydantic AI's per-registration `timeout=`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolsmith::capability::Hooks;
    /// use toolsmith::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let slow = Hooks::new()
    ///     .named("Audit")
    ///     .timeout(Duration::from_millis(20))
    ///     .before_model_request(|_ctx, request| async move {
    ///         tokio::time::sleep(Duration::from_secs(5)).await;
    ///         Ok(request)
    ///     });
    /// let agent = Agent::builder(TestModel::default()).capability(slow).build().unwrap();
    /// let err = agent.run("hi").await.unwrap_err();
    /// assert_eq!(err.to_string(), "capability 'Audit' hook `before_model_request` timed out after 20ms");
    /// # }
    /// ```
    pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    for_each_hook_closure!(closure_builders);
}
