//! What a journaled step records: a model response, or a tool call's outcome, success and
//! failure alike, so that a replay takes the same path as the first execution did.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolsmith::AgentRunError;
use toolsmith::messages::{ModelResponse, UserContent};
use toolsmith::model::ModelError;
use toolsmith::tool::{ApprovalRequired, CallDeferred, ModelRetry, ToolError, ToolOutput, ToolReturn};
use toolsmith::validation::ErrorDetail;

use crate::spills::Spill;

/// A model request's outcome: the response, or the failure's kind and message.
pub(crate) fn encode_model(outcome: &Result<ModelResponse, AgentRunError>) -> Value {
    match outcome {
        Ok(response) => json!({ "response": response }),
        Err(e) => json!({ "error": { "kind": e.kind(), "message": e.to_string() } }),
    }
}

pub(crate) fn decode_model(value: Value) -> Result<Result<ModelResponse, AgentRunError>, String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Outcome {
        Response(ModelResponse),
        Error { kind: String, message: String },
    }
    match serde_json::from_value::<Outcome>(value).map_err(|e| e.to_string())? {
        Outcome::Response(r) => Ok(Ok(r)),
        // The kind's name read back through `ModelErrorKind::from`: a replay fails with the kind
        // the first execution failed with.
        Outcome::Error { kind, message } => Ok(Err(AgentRunError::Model(ModelError::new(kind, message)))),
    }
}

/// A tool call's outcome, as recorded.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
enum ToolStep {
    Value { value: Value },
    Return { return_value: Value, content: Option<Vec<UserContent>>, metadata: Option<Value> },
    Retry { content: Value },
    Validation { errors: Vec<ErrorDetail> },
    ApprovalRequired { metadata: Option<Value> },
    CallDeferred { metadata: Option<Value> },
    Panicked { message: String },
    RetriesExhausted { tool: String, max_retries: u32 },
    Failed { kind: String, message: String },
}

/// What a tool call's step records.
#[derive(Debug)]
pub(crate) struct ToolRecord {
    /// The call's outcome.
    pub(crate) outcome: Result<ToolOutput, ToolError>,
    /// Whether the tool itself returned successfully (what the run's `usage.tool_calls` counts).
    pub(crate) ran: bool,
    /// What a `JournaledStore` spilled during the call.
    pub(crate) spills: Vec<Spill>,
}

/// A tool call's step as recorded: the outcome's fields, `ran`, and `spills` when there are any.
pub(crate) fn encode_tool(record: &ToolRecord) -> Value {
    let mut value = encode_outcome(&record.outcome);
    if let Value::Object(map) = &mut value {
        map.insert("ran".into(), Value::Bool(record.ran));
        if !record.spills.is_empty() {
            map.insert("spills".into(), serde_json::to_value(&record.spills).unwrap_or(Value::Null));
        }
    }
    value
}

pub(crate) fn decode_tool(mut value: Value) -> Result<ToolRecord, String> {
    let ran = value.get("ran").and_then(Value::as_bool).unwrap_or(false);
    let spills = match value.as_object_mut().and_then(|map| map.remove("spills")) {
        Some(spills) => serde_json::from_value(spills).map_err(|e| format!("the step's spills: {e}"))?,
        None => Vec::new(),
    };
    Ok(ToolRecord { outcome: decode_outcome(value)?, ran, spills })
}

fn encode_outcome(outcome: &Result<ToolOutput, ToolError>) -> Value {
    let step = match outcome {
        Ok(ToolOutput::Value(value)) => ToolStep::Value { value: value.clone() },
        Ok(ToolOutput::Return(r)) => ToolStep::Return {
            return_value: r.return_value.clone(),
            content: r.content.clone(),
            metadata: r.metadata.clone(),
        },
        Ok(other) => ToolStep::Failed {
            kind: "UnsupportedToolOutput".into(),
            message: format!("a tool output the journal cannot record: {other:?}"),
        },
        Err(ToolError::Retry(r)) => ToolStep::Retry { content: r.content.clone() },
        Err(ToolError::Validation(errors)) => ToolStep::Validation { errors: errors.clone() },
        Err(ToolError::ApprovalRequired(a)) => ToolStep::ApprovalRequired { metadata: a.metadata.clone() },
        Err(ToolError::CallDeferred(d)) => ToolStep::CallDeferred { metadata: d.metadata.clone() },
        Err(ToolError::Panicked { message }) => ToolStep::Panicked { message: message.clone() },
        Err(ToolError::RetriesExhausted { tool, max_retries }) => {
            ToolStep::RetriesExhausted { tool: tool.clone(), max_retries: *max_retries }
        }
        Err(ToolError::Failed { kind, message, .. }) => {
            ToolStep::Failed { kind: kind.clone(), message: message.clone() }
        }
        Err(other) => ToolStep::Failed { kind: "ToolError".into(), message: other.to_string() },
    };
    serde_json::to_value(step).unwrap_or_else(|e| {
        json!({ "outcome": "failed", "kind": "ToolError", "message": format!("the tool's result could not be recorded: {e}") })
    })
}

fn decode_outcome(mut value: Value) -> Result<Result<ToolOutput, ToolError>, String> {
    if let Value::Object(map) = &mut value {
        map.remove("ran");
    }
    let step: ToolStep = serde_json::from_value(value).map_err(|e| e.to_string())?;
    Ok(match step {
        ToolStep::Value { value } => Ok(ToolOutput::Value(value)),
        ToolStep::Return { return_value, content, metadata } => {
            let mut r = ToolReturn::new(return_value);
            r.content = content;
            r.metadata = metadata;
            Ok(ToolOutput::Return(r))
        }
        ToolStep::Retry { content } => {
            let mut retry = ModelRetry::new("");
            retry.content = content;
            Err(ToolError::Retry(retry))
        }
        ToolStep::Validation { errors } => Err(ToolError::Validation(errors)),
        ToolStep::ApprovalRequired { metadata } => Err(ToolError::ApprovalRequired(ApprovalRequired { metadata })),
        ToolStep::CallDeferred { metadata } => Err(ToolError::CallDeferred(CallDeferred { metadata })),
        ToolStep::Panicked { message } => Err(ToolError::Panicked { message }),
        ToolStep::RetriesExhausted { tool, max_retries } => Err(ToolError::RetriesExhausted { tool, max_retries }),
        ToolStep::Failed { kind, message } => Err(ToolError::Failed { kind, message, source: None }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolsmith::model::ModelErrorKind;

    fn round_trip(outcome: Result<ToolOutput, ToolError>) {
        let ran = outcome.is_ok();
        let spills = if ran {
            vec![Spill { handle: "run/c1.0".into(), data: crate::spills::Payload::Text("long".into()) }]
        } else {
            Vec::new()
        };
        let recorded = ToolRecord { outcome, ran, spills };
        let decoded = decode_tool(encode_tool(&recorded)).expect("decodes");
        assert_eq!(format!("{decoded:?}"), format!("{recorded:?}"));
    }

    #[test]
    fn every_tool_outcome_replays_as_it_was() {
        round_trip(Ok(ToolOutput::Value(json!({"n": 1}))));
        let mut r = ToolReturn::new(json!("ok"));
        r.metadata = Some(json!({"m": true}));
        r.content = Some(vec![UserContent::Text("see".into())]);
        round_trip(Ok(ToolOutput::Return(r)));
        round_trip(Err(ToolError::Retry(ModelRetry::new("try again"))));
        round_trip(Err(ToolError::ApprovalRequired(ApprovalRequired::with_metadata(json!("why")))));
        round_trip(Err(ToolError::CallDeferred(CallDeferred::default())));
        round_trip(Err(ToolError::Panicked { message: "boom".into() }));
        round_trip(Err(ToolError::RetriesExhausted { tool: "t".into(), max_retries: 2 }));
        round_trip(Err(ToolError::failed("no")));
    }

    #[test]
    fn a_model_response_and_a_model_failure_replay() {
        let response = ModelResponse::text("hello");
        let back = decode_model(encode_model(&Ok(response.clone()))).unwrap().unwrap();
        assert_eq!(back, response);
        let failure = AgentRunError::Model(ModelError::new(ModelErrorKind::Api, "overloaded"));
        let back = decode_model(encode_model(&Err(failure))).unwrap().unwrap_err();
        assert!(back.to_string().contains("overloaded"), "{back}");
        assert_eq!(back.model_error().map(|e| e.kind.clone()), Some(ModelErrorKind::Api));
        assert!(decode_model(json!({"nonsense": 1})).is_err());
    }
}
