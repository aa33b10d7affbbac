//! What a run produces: text, structured output through an output tool, or deferred requests;
//! and how the agent is set to produce it ([`OutputSpec`]).

use serde_json::Value;
use std::sync::Arc;

use crate::deferred::DeferredToolRequests;
use crate::error::UserError;
use crate::tool::{ToolDefinition, ToolKind};
use crate::validation::{ErrorDetail, Validator};

use crate::output_mode::{DEFAULT_PROMPTED_OUTPUT_TEMPLATE, OutputMode, OutputObject};

pub use crate::output_mode::OUTPUT_TOOL_NAME;
const DEFAULT_OUTPUT_DESCRIPTION: &str = "The final response which ends this conversation";

/// How the agent produces its output.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum OutputSpec {
    /// Plain text ends the run.
    Text,
    /// The model calls the `final_result` output tool; its arguments are the output (or, for
    /// an output that is not an object, their `response` field: a tool takes an object).
    Structured {
        /// The output tool's definition.
        tool: ToolDefinition,
        /// The validator of its arguments (lax, with defaults filled in).
        validator: Validator,
        /// Whether the output is the arguments' `response` field.
        wrapped: bool,
        /// How the model is asked for the output.
        mode: OutputMode,
        /// The output as the response format and the prompted instructions describe it (shared
        /// with every request that sends it).
        object: Arc<OutputObject>,
        /// The prompted instructions' template (`{schema}` stands for the schema).
        template: String,
    },
    /// Either of the above, or deferred tool requests.
    WithDeferred(Box<OutputSpec>),
}

impl OutputSpec {
    /// Structured output of `schema`; `display` is the same schema as the model reads it in a
    /// response format or the prompted instructions (keys in Pydantic's order), `type_name`
    /// the output's name when the schema has no title.
    pub(crate) fn structured(
        schema: Value,
        description: Option<String>,
        display: Value,
        type_name: &str,
    ) -> Result<Self, UserError> {
        // A tool's arguments are an object: another output (a string, a number, a list, an enum)
        // is the `response` field of one, as Pydantic AI does.
        let wrapped = !is_object_schema(&schema);
        let schema = if wrapped { wrap_response(schema) } else { schema };
        let validator = Validator::compile_with(
            &schema,
            crate::validation::Options { fill_defaults: true, nullable_optionals: true },
        )
        .map_err(|e| UserError::new(format!("the output schema cannot be used: {e}")))?;
        let mut schema = schema;
        let description = match schema.as_object_mut().and_then(|m| m.remove("description")) {
            Some(Value::String(d)) => Some(d),
            _ => description,
        };
        let mut tool = ToolDefinition::new(OUTPUT_TOOL_NAME, schema).with_kind(ToolKind::Output);
        let object = Arc::new(output_object(display, wrapped, type_name));
        tool.description = Some(description.unwrap_or_else(|| DEFAULT_OUTPUT_DESCRIPTION.to_string()));
        let template = DEFAULT_PROMPTED_OUTPUT_TEMPLATE.to_string();
        Ok(OutputSpec::Structured { tool, validator, wrapped, mode: OutputMode::Tool, object, template })
    }

    /// The structured output asked for in `mode`, with the name, description, strictness and
    /// template given (those not given keep their defaults).
    pub(crate) fn with_options(self, options: &crate::output_mode::OutputOptions) -> Result<Self, UserError> {
        match self {
            OutputSpec::WithDeferred(inner) => Ok(OutputSpec::WithDeferred(Box::new(inner.with_options(options)?))),
            OutputSpec::Structured { mut tool, validator, wrapped, mut object, mut template, .. } => {
                if let Some(name) = &options.name {
                    Arc::make_mut(&mut object).name = name.clone();
                }
                if let Some(d) = &options.description {
                    Arc::make_mut(&mut object).description = Some(d.clone());
                    if options.mode == OutputMode::Tool {
                        tool.description = Some(d.clone());
                    }
                }
                if let Some(strict) = options.strict {
                    Arc::make_mut(&mut object).strict = Some(strict);
                    if options.mode == OutputMode::Tool {
                        tool.strict = Some(strict);
                    }
                }
                if let Some(t) = &options.template {
                    template = t.clone();
                }
                Ok(OutputSpec::Structured { tool, validator, wrapped, mode: options.mode, object, template })
            }
            OutputSpec::Text if options.is_default() => Ok(OutputSpec::Text),
            OutputSpec::Text => Err(UserError::new(
                "`output_mode`, `output_name`, `output_description`, `output_strict` and `prompted_output_template` configure structured output: give the agent an output type first (`.output_type::<T>()` or `.output_schema(..)`)",
            )),
        }
    }

    /// How the model is asked for the output (`Tool` for text output: there is nothing to ask).
    pub fn mode(&self) -> OutputMode {
        match self.base() {
            OutputSpec::Structured { mode, .. } => *mode,
            _ => OutputMode::Tool,
        }
    }

    /// Whether the output is structured (in any mode).
    pub fn is_structured(&self) -> bool {
        matches!(self.base(), OutputSpec::Structured { .. })
    }

    /// The output as a response format or the prompted instructions describe it, for
    /// structured output.
    pub fn output_object(&self) -> Option<&OutputObject> {
        self.shared_output_object().map(|o| &**o)
    }

    pub(crate) fn shared_output_object(&self) -> Option<&Arc<OutputObject>> {
        match self.base() {
            OutputSpec::Structured { object, .. } => Some(object),
            _ => None,
        }
    }

    /// The prompted output instructions, in [`OutputMode::Prompted`].
    pub fn prompted_instructions(&self) -> Option<String> {
        match self.base() {
            OutputSpec::Structured { mode: OutputMode::Prompted, object, template, .. } => {
                Some(object.instructions(template))
            }
            _ => None,
        }
    }

    pub(crate) fn with_deferred(self) -> Self {
        match self {
            OutputSpec::WithDeferred(_) => self,
            other => OutputSpec::WithDeferred(Box::new(other)),
        }
    }

    /// Whether deferred tool requests may end a run.
    pub fn allows_deferred(&self) -> bool {
        matches!(self, OutputSpec::WithDeferred(_))
    }

    fn base(&self) -> &OutputSpec {
        match self {
            OutputSpec::WithDeferred(inner) => inner.base(),
            other => other,
        }
    }

    /// Whether plain text ends the run.
    pub fn allows_text(&self) -> bool {
        matches!(self.base(), OutputSpec::Text)
    }

    /// The output tool, for structured output in [`OutputMode::Tool`].
    pub fn output_tool(&self) -> Option<&ToolDefinition> {
        match self.base() {
            OutputSpec::Structured { tool, mode: OutputMode::Tool, .. } => Some(tool),
            _ => None,
        }
    }

    /// Validates the output given as JSON text (parsed already).
    pub(crate) fn validate_parsed(&self, value: &Value) -> Result<Value, Vec<ErrorDetail>> {
        match self.base() {
            OutputSpec::Structured { validator, wrapped, .. } => {
                validator.validate_parsed(value).map(|v| unwrap(v, *wrapped))
            }
            _ => Ok(value.clone()),
        }
    }

    /// [`validate`](Self::validate) of owned arguments: moved through when valid as they are.
    pub(crate) fn validate_owned(&self, args: Value) -> Result<Value, Vec<ErrorDetail>> {
        match self.base() {
            OutputSpec::Structured { validator, wrapped, .. } => match args {
                Value::String(raw) => validator.validate_str(&raw),
                other => validator.validate_owned(other),
            }
            .map(|v| unwrap(v, *wrapped)),
            _ => Ok(args),
        }
    }

    pub(crate) fn validate(&self, args: &Value) -> Result<Value, Vec<ErrorDetail>> {
        match self.base() {
            OutputSpec::Structured { validator, wrapped, .. } => match args {
                Value::String(raw) => validator.validate_str(raw),
                other => validator.validate(other),
            }
            .map(|v| unwrap(v, *wrapped)),
            _ => Ok(args.clone()),
        }
    }
}

/// The output object of a schema as the model reads it: an object's schema without its
/// description (which becomes the object's), or the `response` field of an object.
fn output_object(display: Value, wrapped: bool, type_name: &str) -> OutputObject {
    let mut schema = display;
    let mut description = None;
    if let Some(m) = schema.as_object_mut() {
        m.remove("$schema");
        if !wrapped && let Some(Value::String(d)) = m.remove("description") {
            description = Some(d);
        }
    }
    let (schema, name) = if wrapped {
        let defs = schema.as_object_mut().and_then(|m| {
            m.remove("title");
            m.remove("$defs")
        });
        let mut wrapper = serde_json::json!({
            "properties": {"response": schema},
            "required": ["response"],
            "type": "object",
        });
        if let Some(d) = defs {
            wrapper["$defs"] = d;
        }
        (wrapper, type_name.to_string())
    } else {
        let name = schema.get("title").and_then(Value::as_str).unwrap_or(type_name).to_string();
        // Keywords in sorted order, as Pydantic prints a model's schema.
        if let Value::Object(m) = &mut schema {
            m.sort_keys();
        }
        (schema, name)
    };
    let mut object = OutputObject::new(name, schema);
    object.description = description;
    object
}

/// Whether a schema is an object's (directly, or a `$ref` to one in its `$defs`).
fn is_object_schema(schema: &Value) -> bool {
    if schema.get("type").and_then(Value::as_str) == Some("object") {
        return true;
    }
    let target = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|name| schema.get("$defs")?.get(name));
    target.is_some_and(|t| t.get("type").and_then(Value::as_str) == Some("object"))
}

/// `{"type": "object", "properties": {"response": schema}, "required": ["response"]}`, the
/// schema's `$defs` kept at the top so its references still resolve.
fn wrap_response(mut schema: Value) -> Value {
    let defs = schema.as_object_mut().and_then(|m| m.remove("$defs"));
    let description = schema.as_object_mut().and_then(|m| m.remove("description"));
    if let Some(m) = schema.as_object_mut() {
        m.remove("$schema");
        m.remove("title");
    }
    let mut wrapper = serde_json::json!({
        "type": "object",
        "properties": {"response": schema},
        "required": ["response"],
    });
    if let Some(d) = defs {
        wrapper["$defs"] = d;
    }
    if let Some(d) = description {
        wrapper["description"] = d;
    }
    wrapper
}

/// The output of validated arguments: their `response` field when the output is wrapped.
fn unwrap(value: Value, wrapped: bool) -> Value {
    match value {
        Value::Object(mut m) if wrapped => m.remove("response").unwrap_or(Value::Null),
        other => other,
    }
}

/// A run's output as capabilities see it, before it becomes the agent's output type: what
/// [`Capability::after_run`](crate::capability::Capability::after_run) may change and what
/// [`Capability::on_run_error`](crate::capability::Capability::on_run_error) and
/// [`Capability::wrap_run`](crate::capability::Capability::wrap_run) may recover with.
///
/// ```
/// use toolsmith::agent::RunOutput;
///
/// let out = RunOutput::Structured(serde_json::json!({"city": "Paris"}));
/// assert_eq!(out.as_value(), Some(serde_json::json!({"city": "Paris"})));
/// assert_eq!(RunOutput::Text("hi".into()).as_value(), Some(serde_json::json!("hi")));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RunOutput {
    /// Plain text.
    Text(String),
    /// Structured output, validated against the output schema.
    Structured(Value),
    /// Calls waiting for approval or an external result.
    Deferred(DeferredToolRequests),
}

impl RunOutput {
    /// The output as a JSON value (text as a string); `None` for deferred requests.
    pub fn as_value(&self) -> Option<Value> {
        match self {
            RunOutput::Text(t) => Some(Value::String(t.clone())),
            RunOutput::Structured(v) => Some(v.clone()),
            RunOutput::Deferred(_) => None,
        }
    }
}
