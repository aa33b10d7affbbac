//! What a run produces: text, structured output through an output tool, or deferred requests;
//! and how the agent is set to produce it ([`OutputSpec`]).

use serde_json::Value;

use crate::deferred::DeferredToolRequests;
use crate::error::UserError;
use crate::tool::{ToolDefinition, ToolKind};
use crate::validation::{ErrorDetail, Validator};

/// The name of the output tool.
pub const OUTPUT_TOOL_NAME: &str = "final_result";
const DEFAULT_OUTPUT_DESCRIPTION: &str = "The final response which ends this conversation";

/// How the agent produces its output.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum OutputSpec {
    /// Plain text ends the run.
    Text,
    /// The model calls the `final_result` output tool; its arguments are the output.
    Structured {
        /// The output tool's definition.
        tool: ToolDefinition,
        /// The validator of its arguments (lax, with defaults filled in).
        validator: Validator,
    },
    /// Either of the above, or deferred tool requests.
    WithDeferred(Box<OutputSpec>),
}

impl OutputSpec {
    pub(crate) fn structured(schema: Value, description: Option<String>) -> Result<Self, UserError> {
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
        tool.description = Some(description.unwrap_or_else(|| DEFAULT_OUTPUT_DESCRIPTION.to_string()));
        Ok(OutputSpec::Structured { tool, validator })
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

    /// The output tool, for structured output.
    pub fn output_tool(&self) -> Option<&ToolDefinition> {
        match self.base() {
            OutputSpec::Structured { tool, .. } => Some(tool),
            _ => None,
        }
    }

    /// Validates the output given as JSON text (parsed already).
    pub(crate) fn validate_parsed(&self, value: &Value) -> Result<Value, Vec<ErrorDetail>> {
        match self.base() {
            OutputSpec::Structured { validator, .. } => validator.validate_parsed(value),
            _ => Ok(value.clone()),
        }
    }

    pub(crate) fn validate(&self, args: &Value) -> Result<Value, Vec<ErrorDetail>> {
        match self.base() {
            OutputSpec::Structured { validator, .. } => match args {
                Value::String(raw) => validator.validate_str(raw),
                other => validator.validate(other),
            },
            _ => Ok(args.clone()),
        }
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
