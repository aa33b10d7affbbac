//! [`ToolSpec`]: the compile-time description of a tool made by [`macro@crate::tool`].

use std::any::TypeId;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

use crate::context::{AnyRunContext, RunContext};
use crate::tool::{ToolError, ToolOutput, ToolReturn};

/// The result of one tool call.
pub type ToolResult = Result<ToolOutput, ToolError>;

/// How a call is carried out: a future on the runtime, a closure for the blocking pool, or a
/// result that is already known (for example, arguments that failed to deserialise).
#[non_exhaustive]
pub enum Invocation {
    /// An async tool: the future runs on the agent's runtime.
    Async(BoxFuture<'static, ToolResult>),
    /// A synchronous tool: the closure runs on the agent's bounded blocking pool.
    Blocking(Box<dyn FnOnce() -> ToolResult + Send + 'static>),
    /// The result is known without running anything.
    Ready(ToolResult),
}

/// Which dependencies a tool made by the macro needs.
#[derive(Clone, Copy)]
#[doc(hidden)]
pub enum DepsReq {
    /// The tool takes no `RunContext`, or a `RunContext<()>`: it works with any agent.
    Any,
    /// The tool takes `RunContext<T>`: the agent's dependency type must be `T`.
    Typed {
        /// `TypeId::of::<T>()`.
        id: fn() -> TypeId,
        /// `std::any::type_name::<T>()`.
        name: fn() -> &'static str,
    },
}

/// The options given in `#[tool(...)]`.
#[derive(Clone, Copy)]
#[doc(hidden)]
pub struct SpecOptions {
    pub name: Option<&'static str>,
    pub description: Option<&'static str>,
    pub retries: Option<u32>,
    pub timeout: Option<Duration>,
    pub strict: Option<bool>,
    pub sequential: bool,
    pub requires_approval: bool,
    pub defer_loading: bool,
    pub include_return_schema: Option<bool>,
    /// Metadata as JSON text.
    pub metadata: Option<&'static str>,
    pub require_parameter_descriptions: bool,
}

impl SpecOptions {
    /// No options.
    pub const DEFAULT: SpecOptions = SpecOptions {
        name: None,
        description: None,
        retries: None,
        timeout: None,
        strict: None,
        sequential: false,
        requires_approval: false,
        defer_loading: false,
        include_return_schema: None,
        metadata: None,
        require_parameter_descriptions: false,
    };
}

/// A tool as written with [`macro@crate::tool`]: a `Copy` value with the function's name that
/// becomes a [`Tool`](crate::Tool) for any agent (or, for a tool that reads `RunContext<T>`, for
/// agents whose dependencies are `T`; a mismatch is reported by the agent builder).
///
/// The function itself stays callable beside it as `{name}_fn` (`add_fn` for `add`), and
/// [`ToolSpec::call_json`] calls the tool with JSON arguments as a run does: both are for tests.
///
/// ```
/// use toolsmith::prelude::*;
///
/// /// Add two integers.
/// ///
/// /// # Arguments
/// /// * `x` - first addend
/// /// * `y` - second addend
/// #[tool]
/// fn add(x: i64, y: i64) -> i64 {
///     x + y
/// }
///
/// let tool: Tool<()> = add.into();
/// assert_eq!(tool.name(), "add");
/// assert_eq!(tool.definition().description.as_deref(), Some("Add two integers."));
/// assert_eq!(add_fn(2, 3), 5);
/// ```
#[derive(Clone, Copy)]
pub struct ToolSpec {
    pub(crate) fn_name: &'static str,
    pub(crate) doc: Option<&'static str>,
    pub(crate) undocumented_params: &'static [&'static str],
    pub(crate) schema: fn() -> (Value, Option<String>),
    pub(crate) deps: DepsReq,
    pub(crate) handler: fn(&dyn AnyRunContext, &Value) -> Invocation,
    pub(crate) options: SpecOptions,
    pub(crate) return_schema: Option<fn() -> Option<Value>>,
    pub(crate) envelope: Option<&'static str>,
    /// Whether the function takes a `RunContext` (else its handler is called without one).
    pub(crate) takes_context: bool,
}

impl ToolSpec {
    /// Used by the macro.
    #[doc(hidden)]
    pub const fn __new(
        fn_name: &'static str,
        doc: Option<&'static str>,
        undocumented_params: &'static [&'static str],
        schema: fn() -> (Value, Option<String>),
        deps: DepsReq,
        handler: fn(&dyn AnyRunContext, &Value) -> Invocation,
        options: SpecOptions,
    ) -> Self {
        ToolSpec {
            fn_name,
            doc,
            undocumented_params,
            schema,
            deps,
            handler,
            options,
            return_schema: None,
            envelope: None,
            takes_context: true,
        }
    }

    /// Used by the macro: the function takes no `RunContext`.
    #[doc(hidden)]
    pub const fn __without_context(mut self) -> Self {
        self.takes_context = false;
        self
    }

    /// Used by the macro: the name of the single struct parameter, whose schema is the tool's.
    #[doc(hidden)]
    pub const fn __with_envelope(mut self, name: &'static str) -> Self {
        self.envelope = Some(name);
        self
    }

    /// Used by the macro: the schema of the return value, when the type has one.
    #[doc(hidden)]
    pub const fn __with_return_schema(mut self, f: fn() -> Option<Value>) -> Self {
        self.return_schema = Some(f);
        self
    }

    /// The tool's name (the function's name unless renamed with `#[tool(name = "...")]`).
    pub fn name(&self) -> &'static str {
        self.options.name.unwrap_or(self.fn_name)
    }
}

impl std::fmt::Debug for ToolSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSpec").field("name", &self.name()).finish_non_exhaustive()
    }
}

// What the code generated by `#[tool]` calls (through `__private`), and `Tool::new` too.

/// What the handler of a tool without a context parameter is given in place of one: the code
/// the macro generates for such a tool never reads it (a downcast would fail, not panic).
pub(crate) struct NoContext;

impl AnyRunContext for NoContext {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn unit(&self) -> RunContext<()> {
        RunContext::detached()
    }
    fn deps_type_name(&self) -> &'static str {
        "none (the tool was called without a context)"
    }
}

/// Deserialises validated arguments into the generated argument struct (from where they are:
/// only what the struct keeps, such as its strings, is copied).
pub fn parse_args<T: serde::de::DeserializeOwned>(args: &Value) -> Result<T, ToolError> {
    T::deserialize(args)
        .map_err(|e| ToolError::Validation(vec![crate::validation::ErrorDetail::value_error(e.to_string())]))
}

/// Recovers the typed context a tool asked for.
pub fn typed_context<T: Clone + Send + Sync + 'static>(ctx: &dyn AnyRunContext) -> Result<RunContext<T>, ToolError> {
    match ctx.as_any().downcast_ref::<RunContext<T>>() {
        Some(c) => Ok(c.clone()),
        None => Err(ToolError::Failed {
            kind: "UserError".into(),
            message: format!(
                "the tool takes RunContext<{}> but the agent's dependencies are {}",
                std::any::type_name::<T>(),
                ctx.deps_type_name()
            ),
            source: None,
        }),
    }
}

/// Turns a tool's plain return value into its output: a `Value` as it is (no copy, whatever its
/// depth: the run cuts what lies too deep without recursion), anything else serialised on a
/// stack grown on the heap as needed.
pub fn value_output<T: serde::Serialize + 'static>(value: T) -> ToolResult {
    let mut slot = Some(value);
    if let Some(v) = (&mut slot as &mut dyn std::any::Any).downcast_mut::<Option<Value>>() {
        return Ok(ToolOutput::Value(v.take().unwrap_or_default()));
    }
    match slot.map(|v| v.serialize(serde_stacker::Serializer::new(serde_json::value::Serializer))) {
        Some(Ok(v)) => Ok(ToolOutput::Value(v)),
        Some(Err(e)) => Err(ToolError::failed(format!("the tool's return value could not be serialised: {e}"))),
        None => Ok(ToolOutput::Value(Value::Null)),
    }
}

/// Turns a tool's `Result<T, E>` into its output.
pub fn result_output<T: serde::Serialize + 'static, E: Into<ToolError>>(result: Result<T, E>) -> ToolResult {
    match result {
        Ok(v) => value_output(v),
        Err(e) => Err(e.into()),
    }
}

/// Turns a tool's `ToolReturn` into its output.
pub fn return_output(value: ToolReturn) -> ToolResult {
    Ok(ToolOutput::Return(value))
}

/// Turns a tool's `Result<ToolReturn, E>` into its output.
pub fn return_result_output<E: Into<ToolError>>(result: Result<ToolReturn, E>) -> ToolResult {
    match result {
        Ok(v) => Ok(ToolOutput::Return(v)),
        Err(e) => Err(e.into()),
    }
}
