//! The agent's output types: converters from a [`RunOutput`] to the agent's `O`, and
//! [`Deferrable`].

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::deferred::DeferredToolRequests;
use crate::error::{AgentRunError, UserError};
use crate::run::RunOutput;

pub(crate) type Converter<O> = Arc<dyn Fn(RunOutput) -> Result<O, AgentRunError> + Send + Sync>;

const DEFERRED_NOT_ALLOWED: &str = "A deferred tool call was present, but the agent's output does not allow `DeferredToolRequests`: build the agent with `.allow_deferred()` (its output is then `Deferrable<O>`), or settle the deferred calls inline with a `HandleDeferredToolCalls` capability.";

pub(crate) fn deferred_not_allowed() -> AgentRunError {
    AgentRunError::User(UserError::new(DEFERRED_NOT_ALLOWED))
}

/// The mistake of tools whose calls always defer (`names`, where `found`) on an agent whose
/// output does not allow deferred requests and that has no capability to settle them inline:
/// every call to them would end the run with an error.
pub(crate) fn deferring_tools_not_allowed<'a>(names: impl IntoIterator<Item = &'a str>, found: &str) -> UserError {
    let names: Vec<String> = names.into_iter().map(|n| format!("'{n}'")).collect();
    UserError::new(format!(
        "{found} [{}] require approval or run outside the agent, so a call to them ends the run with deferred tool requests, but the agent's output does not allow `DeferredToolRequests`: build the agent with `.allow_deferred()` (its output is then `Deferrable<O>`), or give it a `HandleDeferredToolCalls` capability that settles the calls inline",
        names.join(", ")
    ))
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
        serde_json::from_value(v).map_err(|e| {
            AgentRunError::unexpected(format!("the validated output does not deserialise into the output type: {e}"))
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
