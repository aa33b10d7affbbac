//! What a run produces: text, structured output through an output tool, or deferred requests.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use futures::future::BoxFuture;

use crate::capability::{Capabilities, OutputInfo, OutputKind, OutputStage};
use crate::context::RunContext;
use crate::deferred::DeferredToolRequests;
use crate::error::{AgentRunError, UserError};
use crate::tool::{ToolDefinition, ToolError, ToolKind};
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

/// An output through the capabilities' output hooks: validated (structured output only), then
/// processed. Without capabilities, only the validation runs.
pub(crate) async fn settle_output<D: Send + Sync + 'static>(
    spec: &OutputSpec,
    caps: &Capabilities<D>,
    ctx: &RunContext<D>,
    info: OutputInfo<'_>,
    raw: Value,
) -> Result<Value, ToolError> {
    let validate = |raw: Value| -> BoxFuture<'_, Result<Value, ToolError>> {
        let result = match (&raw, info.kind) {
            // Text that should be the output's JSON: a parse error is one `json_invalid` error.
            (Value::String(text), OutputKind::StructuredText) => match serde_json::from_str::<Value>(text) {
                Ok(v) => spec.validate(&v),
                Err(e) => Err(vec![ErrorDetail::json_invalid(text, &e)]),
            },
            _ => spec.validate(&raw),
        };
        Box::pin(async move { result.map_err(ToolError::Validation) })
    };
    let value = match info.kind {
        OutputKind::Text => raw,
        _ if caps.is_empty() => return validate(raw).await,
        _ => caps.output(OutputStage::Validate, 0, ctx, info, raw, &validate).await?,
    };
    if caps.is_empty() {
        return Ok(value);
    }
    let process = |value: Value| -> BoxFuture<'_, Result<Value, ToolError>> { Box::pin(async move { Ok(value) }) };
    caps.output(OutputStage::Process, 0, ctx, info, value, &process).await
}

/// The run's error for an output hook's failure that is neither a validation error nor a retry.
pub(crate) fn output_failure(error: ToolError) -> AgentRunError {
    match error {
        ToolError::Failed { kind, message } => {
            AgentRunError::ToolFailed { tool: OUTPUT_TOOL_NAME.into(), kind, message }
        }
        ToolError::Panicked { message } => AgentRunError::ToolPanicked { tool: OUTPUT_TOOL_NAME.into(), message },
        other => AgentRunError::User(UserError::new(format!(
            "an output hook returned `{other}`, which the output cannot take: return the value, a validation error, `ToolError::Retry` or a failure"
        ))),
    }
}

pub(crate) type Converter<O> = Arc<dyn Fn(RunOutput) -> Result<O, AgentRunError> + Send + Sync>;

const DEFERRED_NOT_ALLOWED: &str = "A deferred tool call was present, but `DeferredToolRequests` is not among output types. To resolve this, add `DeferredToolRequests` to the list of output types for this agent, or use a `HandleDeferredToolCalls` capability to handle deferred tool calls inline.";

pub(crate) fn deferred_not_allowed() -> AgentRunError {
    AgentRunError::User(UserError::new(DEFERRED_NOT_ALLOWED))
}

pub(crate) fn text_converter() -> Converter<String> {
    Arc::new(|f| match f {
        RunOutput::Text(t) => Ok(t),
        RunOutput::Structured(v) => Ok(v.to_string()),
        RunOutput::Deferred(_) => Err(deferred_not_allowed()),
    })
}

pub(crate) fn value_converter() -> Converter<Value> {
    Arc::new(|f| match f {
        RunOutput::Text(t) => Ok(Value::String(t)),
        RunOutput::Structured(v) => Ok(v),
        RunOutput::Deferred(_) => Err(deferred_not_allowed()),
    })
}

pub(crate) fn typed_converter<T: DeserializeOwned>() -> Converter<T> {
    Arc::new(|f| {
        let v = match f {
            RunOutput::Text(t) => Value::String(t),
            RunOutput::Structured(v) => v,
            RunOutput::Deferred(_) => return Err(deferred_not_allowed()),
        };
        serde_json::from_value(v).map_err(|e| AgentRunError::UnexpectedModelBehavior {
            message: format!("the validated output does not deserialise into the output type: {e}"),
        })
    })
}

/// An output that may instead be deferred tool requests (see [`AgentBuilder::allow_deferred`](crate::AgentBuilder::allow_deferred)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Deferrable<O> {
    /// The run produced its output.
    Output(O),
    /// The run ended with calls waiting for approval or external execution.
    Deferred(DeferredToolRequests),
}

impl<O> Deferrable<O> {
    /// The output, if the run produced one.
    pub fn output(&self) -> Option<&O> {
        match self {
            Deferrable::Output(o) => Some(o),
            Deferrable::Deferred(_) => None,
        }
    }

    /// The deferred requests, if the run ended with some.
    pub fn deferred(&self) -> Option<&DeferredToolRequests> {
        match self {
            Deferrable::Deferred(d) => Some(d),
            Deferrable::Output(_) => None,
        }
    }
}

pub(crate) fn deferrable<O: 'static>(inner: Converter<O>) -> Converter<Deferrable<O>> {
    Arc::new(move |f| match f {
        RunOutput::Deferred(d) => Ok(Deferrable::Deferred(d)),
        other => inner(other).map(Deferrable::Output),
    })
}
