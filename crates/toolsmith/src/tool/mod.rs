//! Tools: typed functions the model can call.
//!
//! A [`Tool`] couples a [`ToolDefinition`] (what the model sees) with a handler (what runs) and
//! per-tool options (retries, timeout, approval, `prepare`, an arguments validator). Tools are
//! made with [`macro@crate::tool`], with [`Tool::new`] from a closure over a typed argument
//! struct, or with [`Tool::from_schema`] from a JSON schema.

mod args_validator;
mod call;
mod definition;
mod error;
mod output;
pub(crate) mod pool;
pub mod schema;
pub(crate) mod spec;

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub(crate) use args_validator::{ArgsCheck, ArgsValidatorFn};
pub use definition::{ToolDefinition, ToolKind};
pub use error::{ApprovalRequired, CallDeferred, ModelRetry, ToolError};
pub use output::{ToolOutput, ToolReturn};
pub use spec::{Invocation, ToolResult, ToolSpec};

use crate::context::RunContext;
use crate::error::UserError;
use crate::validation::Validator;

/// The handler of a tool: receives the validated arguments, borrowed from the call when
/// validation left them as the model sent them (a handler that deserialises them then copies
/// nothing first), and the run context if it reads one.
pub(crate) enum Handler<D> {
    /// Reads the call's context.
    Contextual(ContextualFn<D>),
    /// Takes its arguments alone (a `#[tool]` function without a context parameter): the call's
    /// context is not made. A wrapper that reads the context makes a contextual handler.
    Plain(PlainFn),
}

/// A [`Handler::Contextual`] function.
pub(crate) type ContextualFn<D> = Arc<dyn for<'a> Fn(RunContext<D>, Cow<'a, Value>) -> Invocation + Send + Sync>;

/// A [`Handler::Plain`] function.
pub(crate) type PlainFn = Arc<dyn for<'a> Fn(Cow<'a, Value>) -> Invocation + Send + Sync>;

impl<D> Clone for Handler<D> {
    fn clone(&self) -> Self {
        match self {
            Handler::Contextual(h) => Handler::Contextual(h.clone()),
            Handler::Plain(h) => Handler::Plain(h.clone()),
        }
    }
}

impl<D> Handler<D> {
    /// A handler that reads the call's context.
    pub(crate) fn contextual(
        f: impl for<'a> Fn(RunContext<D>, Cow<'a, Value>) -> Invocation + Send + Sync + 'static,
    ) -> Self {
        Handler::Contextual(Arc::new(f))
    }

    /// Calls the handler; `ctx` makes the context, for a handler that reads it.
    pub(crate) fn call(&self, ctx: impl FnOnce() -> RunContext<D>, args: Cow<'_, Value>) -> Invocation {
        match self {
            Handler::Contextual(h) => h(ctx(), args),
            Handler::Plain(h) => h(args),
        }
    }
}

/// A handler that takes its arguments by value, as [`ToolsetTool::new`](crate::toolset::ToolsetTool::new)
/// is given one.
pub(crate) type OwnedHandler<D> = Arc<dyn Fn(RunContext<D>, Value) -> Invocation + Send + Sync>;

/// An owned-arguments handler as a [`Handler`].
pub(crate) fn owned_handler<D: 'static>(handler: OwnedHandler<D>) -> Handler<D> {
    Handler::contextual(move |ctx, args: Cow<'_, Value>| handler(ctx, args.into_owned()))
}

/// A `prepare` function: edits or hides a tool's definition for one step.
pub type PrepareFn<D> =
    Arc<dyn Fn(RunContext<D>, ToolDefinition) -> BoxFuture<'static, Option<ToolDefinition>> + Send + Sync>;

/// Dependency types an agent can have.
pub trait Deps: Clone + Send + Sync + 'static {}
impl<T: Clone + Send + Sync + 'static> Deps for T {}

/// A tool: definition, handler and options.
///
/// An arguments validator checks a call's arguments after schema validation and before the tool
/// runs (and before approval is asked for); its `Err(ModelRetry)` goes back to the model as a
/// retry. [`Tool::args_validator_typed`] and [`Tool::args_validator_async`] receive the
/// arguments as a Rust type, the tool's own argument struct for example;
/// [`Tool::args_validator`] receives the raw JSON, for [`Tool::from_schema`] tools.
/// [`Tool::call_json`] calls a tool outside a run, for tests.
///
/// ```
/// use toolsmith::prelude::*;
/// use serde::Deserialize;
/// use schemars::JsonSchema;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Args {
///     /// the text to shout
///     text: String,
/// }
///
/// let shout: Tool<()> = Tool::new("shout", |_ctx: RunContext<()>, args: Args| async move {
///     Ok::<_, ModelRetry>(args.text.to_uppercase())
/// })
/// .description("Shout the text.")
/// .retries(2)
/// .args_validator_typed(|_ctx, args: &Args| match args.text.is_empty() {
///     true => Err(ModelRetry::new("`text` must not be empty")),
///     false => Ok(()),
/// });
/// assert_eq!(shout.definition().parameters_json_schema["properties"]["text"]["type"], "string");
/// ```
pub struct Tool<D> {
    pub(crate) def: Arc<ToolDefinition>,
    pub(crate) max_retries: Option<u32>,
    pub(crate) requires_approval: bool,
    pub(crate) validator: Option<Validator>,
    pub(crate) handler: Handler<D>,
    pub(crate) prepare: Option<PrepareFn<D>>,
    pub(crate) args_validator: Option<ArgsValidatorFn<D>>,
    pub(crate) problem: Option<String>,
}

impl<D> Clone for Tool<D> {
    fn clone(&self) -> Self {
        Tool {
            def: self.def.clone(),
            max_retries: self.max_retries,
            requires_approval: self.requires_approval,
            validator: self.validator.clone(),
            handler: self.handler.clone(),
            prepare: self.prepare.clone(),
            args_validator: self.args_validator.clone(),
            problem: self.problem.clone(),
        }
    }
}

impl<D> std::fmt::Debug for Tool<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("definition", &self.def)
            .field("max_retries", &self.max_retries)
            .finish_non_exhaustive()
    }
}

fn compile_validator(name: &str, schema: &Value) -> (Option<Validator>, Option<String>) {
    validator_or_problem(name, Validator::compile(schema))
}

/// The validator of a schema generated from Rust types, numeric `format`s still in it (they bound
/// values to the Rust type's range); then takes the formats out, for the definition.
fn compile_rust_validator(name: &str, schema: &mut Value) -> (Option<Validator>, Option<String>) {
    let compiled = validator_or_problem(name, Validator::compile_for_rust_types(schema));
    schema::strip_formats(schema);
    compiled
}

/// A schema built in memory that nests deeper than a definition may (see
/// [`ToolDefinition::too_deep`]) is replaced by an empty object schema, the tool reporting the
/// problem at `build()`; it is dropped without recursion when the tool held it alone.
fn bounded_schema(name: &str, schema: Arc<Value>) -> (Arc<Value>, Option<String>) {
    use crate::messages::MAX_HISTORY_DEPTH;
    if crate::validation::depth::too_deep(&schema, MAX_HISTORY_DEPTH).is_none() {
        return (schema, None);
    }
    if let Ok(schema) = Arc::try_unwrap(schema) {
        crate::validation::depth::dispose(schema);
    }
    let problem = format!(
        "the argument schema of tool '{name}' nests arrays and objects more than {MAX_HISTORY_DEPTH} levels deep: toolsmith sends and writes values up to that depth"
    );
    (Arc::new(serde_json::json!({"type": "object"})), Some(problem))
}

fn validator_or_problem(
    name: &str,
    compiled: Result<Validator, crate::validation::SchemaError>,
) -> (Option<Validator>, Option<String>) {
    match compiled {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(format!("the argument schema of tool '{name}' cannot be used: {e}"))),
    }
}

impl<D: Clone + Send + Sync + 'static> Tool<D> {
    /// A tool from an async closure over a typed argument struct (`Deserialize + JsonSchema`).
    /// The closure returns `Result<T, E>` with `T: Serialize` and `E: Into<ToolError>`.
    pub fn new<A, F, Fut, T, E>(name: impl Into<String>, f: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(RunContext<D>, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
        T: Serialize + 'static,
        E: Into<ToolError>,
    {
        let name = name.into();
        let (mut schema, description) = schema::args_schema_with_formats::<A>();
        let (validator, problem) = compile_rust_validator(&name, &mut schema);
        let mut def = ToolDefinition::new(name, schema);
        def.description = description;
        let handler = Handler::contextual(move |ctx, args: Cow<'_, Value>| match spec::parse_args::<A>(&args) {
            Ok(a) => {
                let fut = f(ctx, a);
                Invocation::Async(Box::pin(async move { spec::result_output(fut.await) }))
            }
            Err(e) => Invocation::Ready(Err(e)),
        });
        Tool {
            def: Arc::new(def),
            max_retries: None,
            requires_approval: false,
            validator,
            handler,
            prepare: None,
            args_validator: None,
            problem,
        }
    }

    /// A tool from a JSON schema and an async closure over the raw arguments. The arguments are
    /// **not** validated against the schema (as in Pydantic AI); a raw JSON string is parsed.
    /// Use [`Tool::validate_args`] to turn validation on.
    pub fn from_schema<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        json_schema: impl Into<Arc<Value>>,
        f: F,
    ) -> Self
    where
        F: Fn(RunContext<D>, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        let name = name.into();
        let (json_schema, problem) = bounded_schema(&name, json_schema.into());
        let mut def = ToolDefinition::new(name, json_schema);
        let description = description.into();
        def.description = if description.is_empty() { None } else { Some(description) };
        let handler = Handler::contextual(move |ctx, args: Cow<'_, Value>| {
            Invocation::Async(Box::pin(f(ctx, args.into_owned())))
        });
        Tool {
            def: Arc::new(def),
            max_retries: None,
            requires_approval: false,
            validator: None,
            handler,
            prepare: None,
            args_validator: None,
            problem,
        }
    }

    /// A tool from a [`ToolSpec`] made by the macro.
    pub fn from_spec(spec: ToolSpec) -> Self {
        // The macro's schema keeps the numeric formats for the validator (see `compile_rust_validator`).
        let (mut schema, schema_description) = (spec.schema)();
        let name = spec.name().to_string();
        let (mut validator, mut problem) = compile_rust_validator(&name, &mut schema);
        // The wrapped form `{param: {...}}` is accepted unless the struct has a field of that name.
        if let Some(key) = spec.envelope
            && schema.get("properties").and_then(|p| p.get(key)).is_none()
        {
            validator = validator.map(|v| v.with_envelope(key));
        }
        if let spec::DepsReq::Typed { id, name: type_name } = spec.deps
            && id() != std::any::TypeId::of::<D>()
        {
            problem = Some(format!(
                "tool '{name}' takes RunContext<{}> but the agent's dependency type is {}: make the types match, or take `RunContext` (no type) if the tool does not read dependencies",
                type_name(),
                std::any::type_name::<D>()
            ));
        }
        if spec.options.require_parameter_descriptions && !spec.undocumented_params.is_empty() {
            problem = Some(format!(
                "Missing parameter descriptions for {}: {}. Describe them in a `# Arguments` list in the doc comment or with `///` on each parameter.",
                name,
                spec.undocumented_params.iter().map(|p| format!("'{p}'")).collect::<Vec<_>>().join(", ")
            ));
        }
        let mut def = ToolDefinition::new(name, schema);
        def.description =
            spec.options.description.map(String::from).or_else(|| spec.doc.map(String::from)).or(schema_description);
        def.return_schema = spec.return_schema.and_then(|f| f()).map(Arc::new);
        def.strict = spec.options.strict;
        def.sequential = spec.options.sequential;
        def.defer_loading = spec.options.defer_loading;
        def.include_return_schema = spec.options.include_return_schema;
        def.timeout = spec.options.timeout;
        if let Some(meta) = spec.options.metadata {
            match serde_json::from_str(meta) {
                Ok(v) => def.metadata = Some(v),
                Err(e) => problem = Some(format!("the metadata of tool '{}' is not valid JSON: {e}", def.name)),
            }
        }
        if def.timeout.is_some_and(|t| t.is_zero()) {
            problem = Some(format!("the timeout of tool '{}' must be greater than 0", def.name));
        }
        let h = spec.handler;
        let handler: Handler<D> = if spec.takes_context {
            Handler::contextual(move |ctx: RunContext<D>, args: Cow<'_, Value>| h(&ctx, &args))
        } else {
            Handler::Plain(Arc::new(move |args: Cow<'_, Value>| h(&spec::NoContext, &args)))
        };
        Tool {
            def: Arc::new(def),
            max_retries: spec.options.retries,
            requires_approval: spec.options.requires_approval,
            validator,
            handler,
            prepare: None,
            args_validator: None,
            problem,
        }
    }

    /// A tool from a raw handler.
    pub fn from_handler(
        def: ToolDefinition,
        validate: bool,
        handler: impl Fn(RunContext<D>, Value) -> Invocation + Send + Sync + 'static,
    ) -> Self {
        let (validator, problem) =
            if validate { compile_validator(&def.name, &def.parameters_json_schema) } else { (None, None) };
        Tool {
            def: Arc::new(def),
            max_retries: None,
            requires_approval: false,
            validator,
            handler: Handler::contextual(move |ctx, args: Cow<'_, Value>| handler(ctx, args.into_owned())),
            prepare: None,
            args_validator: None,
            problem,
        }
    }
}

impl<D> Tool<D> {
    /// Validates raw arguments (JSON text, as a model sends them) the way a run does before
    /// calling the tool: its schema with Pydantic's lax coercions, the ranges of its Rust
    /// parameter types, and the nesting limit. `Ok` holds the arguments the tool would receive;
    /// `Err` every error, in the shape the model is sent. A tool without a validator
    /// ([`Tool::from_schema`]) only parses the text. Its arguments validator, if any, is not run.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    ///
    /// /// Count to a number.
    /// #[tool]
    /// fn count(to: u8) -> u8 { to }
    ///
    /// let tool: Tool<()> = count.into();
    /// assert_eq!(tool.validate_json(r#"{"to": "7"}"#).unwrap(), serde_json::json!({"to": 7}));
    /// let errors = tool.validate_json(r#"{"to": 300}"#).unwrap_err();
    /// assert_eq!(errors[0].msg, "Input should be less than or equal to 255");
    /// ```
    pub fn validate_json(&self, raw: &str) -> Result<Value, Vec<crate::validation::ErrorDetail>> {
        match &self.validator {
            Some(v) => v.validate_str(raw),
            None => serde_json::from_str(raw).map_err(|e| vec![crate::validation::ErrorDetail::json_invalid(raw, &e)]),
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The tool's definition (before any `prepare`).
    pub fn definition(&self) -> &ToolDefinition {
        &self.def
    }

    /// The tool's own retry budget, if set.
    pub fn max_retries(&self) -> Option<u32> {
        self.max_retries
    }

    /// Whether calls need approval.
    pub fn requires_approval_flag(&self) -> bool {
        self.requires_approval
    }

    /// The configuration problem found when the tool was made, if any; the agent builder
    /// reports it as a [`UserError`].
    pub fn check(&self) -> Result<(), UserError> {
        match &self.problem {
            Some(p) => Err(UserError::new(p.clone())),
            None => Ok(()),
        }
    }

    /// Renames the tool.
    pub fn name_as(mut self, name: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.def).name = name.into();
        self
    }

    /// Replaces the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.def).description = Some(description.into());
        self
    }

    /// Sets the retry budget of this tool.
    pub fn retries(mut self, retries: u32) -> Self {
        self.max_retries = Some(retries);
        self
    }

    /// Sets a timeout; a call that takes longer is a retry for the model ("Timed out after 5.0
    /// seconds."). A zero timeout is reported by the agent builder.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        Arc::make_mut(&mut self.def).timeout = Some(timeout);
        if timeout.is_zero() {
            self.problem = Some(format!("the timeout of tool '{}' must be greater than 0", self.def.name));
        }
        self
    }

    /// Asks the provider to follow the schema strictly.
    pub fn strict(mut self, strict: bool) -> Self {
        Arc::make_mut(&mut self.def).strict = Some(strict);
        self
    }

    /// Makes the tool a barrier: it runs alone, after the calls before it.
    pub fn sequential(mut self, sequential: bool) -> Self {
        Arc::make_mut(&mut self.def).sequential = sequential;
        self
    }

    /// Calls of this tool need a human's approval first.
    pub fn requires_approval(mut self, requires_approval: bool) -> Self {
        self.requires_approval = requires_approval;
        self
    }

    /// Hides the tool until it is found through tool search.
    pub fn defer_loading(mut self, defer_loading: bool) -> Self {
        Arc::make_mut(&mut self.def).defer_loading = defer_loading;
        self
    }

    /// Sets metadata on the definition.
    pub fn metadata(mut self, metadata: Value) -> Self {
        Arc::make_mut(&mut self.def).metadata = Some(metadata);
        self
    }

    /// Shows the model what the tool returns (`true`), or never (`false`, which
    /// [`IncludeToolReturnSchemas`](crate::capability::IncludeToolReturnSchemas) leaves alone).
    /// Unset, the schema is shown only when that capability selects the tool.
    pub fn include_return_schema(mut self, include: bool) -> Self {
        Arc::make_mut(&mut self.def).include_return_schema = Some(include);
        self
    }

    /// Turns argument validation against the schema on (the default for typed tools) or off
    /// (the default for [`Tool::from_schema`]).
    pub fn validate_args(mut self, validate: bool) -> Self {
        if validate {
            let (v, p) = compile_validator(&self.def.name, &self.def.parameters_json_schema);
            self.validator = v;
            if p.is_some() {
                self.problem = p;
            }
        } else {
            self.validator = None;
        }
        self
    }

    /// Sets a `prepare` function, called before each model request with a copy of the
    /// definition: return it (edited or not) to show the tool, or `None` to hide it.
    pub fn prepare<F>(mut self, f: F) -> Self
    where
        F: Fn(&RunContext<D>, ToolDefinition) -> Option<ToolDefinition> + Send + Sync + 'static,
        D: Send + Sync + 'static,
    {
        self.prepare = Some(Arc::new(move |ctx, def| {
            let r = f(&ctx, def);
            Box::pin(async move { r })
        }));
        self
    }

    /// Sets an async `prepare` function.
    pub fn prepare_async<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(RunContext<D>, ToolDefinition) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<ToolDefinition>> + Send + 'static,
    {
        self.prepare = Some(Arc::new(move |ctx, def| Box::pin(f(ctx, def))));
        self
    }
}

impl<D: Clone + Send + Sync + 'static> From<ToolSpec> for Tool<D> {
    fn from(spec: ToolSpec) -> Self {
        Tool::from_spec(spec)
    }
}

impl ToolSpec {
    /// This tool as a [`Tool`] for agents with dependencies `D`, to set more options.
    pub fn tool<D: Clone + Send + Sync + 'static>(self) -> Tool<D> {
        Tool::from_spec(self)
    }
}
