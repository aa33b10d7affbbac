//! What a run produces: text, structured output through an output tool, or deferred requests.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::deferred::DeferredToolRequests;
use crate::error::{AgentRunError, UserError};
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

/// The run's final output before conversion to the agent's output type.
#[derive(Debug, Clone)]
pub(crate) enum FinalOutput {
    Text(String),
    Structured(Value),
    Deferred(DeferredToolRequests),
}

pub(crate) type Converter<O> = Arc<dyn Fn(FinalOutput) -> Result<O, AgentRunError> + Send + Sync>;

const DEFERRED_NOT_ALLOWED: &str = "A deferred tool call was present, but `DeferredToolRequests` is not among output types. To resolve this, add `DeferredToolRequests` to the list of output types for this agent, or use a `HandleDeferredToolCalls` capability to handle deferred tool calls inline.";

pub(crate) fn deferred_not_allowed() -> AgentRunError {
    AgentRunError::User(UserError::new(DEFERRED_NOT_ALLOWED))
}

pub(crate) fn text_converter() -> Converter<String> {
    Arc::new(|f| match f {
        FinalOutput::Text(t) => Ok(t),
        FinalOutput::Structured(v) => Ok(v.to_string()),
        FinalOutput::Deferred(_) => Err(deferred_not_allowed()),
    })
}

pub(crate) fn value_converter() -> Converter<Value> {
    Arc::new(|f| match f {
        FinalOutput::Text(t) => Ok(Value::String(t)),
        FinalOutput::Structured(v) => Ok(v),
        FinalOutput::Deferred(_) => Err(deferred_not_allowed()),
    })
}

pub(crate) fn typed_converter<T: DeserializeOwned>() -> Converter<T> {
    Arc::new(|f| {
        let v = match f {
            FinalOutput::Text(t) => Value::String(t),
            FinalOutput::Structured(v) => v,
            FinalOutput::Deferred(_) => return Err(deferred_not_allowed()),
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
        FinalOutput::Deferred(d) => Ok(Deferrable::Deferred(d)),
        other => inner(other).map(Deferrable::Output),
    })
}
