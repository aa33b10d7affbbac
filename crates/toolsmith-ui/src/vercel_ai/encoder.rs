//! The run's events as Vercel AI chunks (Pydantic AI's `VercelAIEventStream`).

use std::collections::HashMap;

use serde_json::{Map, Value};
use toolsmith::messages::ModelResponse;
use toolsmith::messages::{ToolCallPart, ToolOutcome, ToolReturnPart};

use super::SdkVersion;
use super::chunks::Chunk;
use crate::transform::{Encoder, Moment, args_value};

pub(crate) struct VercelEncoder {
    pub(crate) version: SdkVersion,
    message_id: String,
    step_started: bool,
    finish_reason: Option<String>,
    /// Calls whose arguments ended, not yet announced as available.
    streamed: Vec<ToolCallPart>,
    invalid: HashMap<String, ToolCallPart>,
    new_id: Box<dyn FnMut() -> String + Send>,
}

impl std::fmt::Debug for VercelEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VercelEncoder").field("version", &self.version).finish_non_exhaustive()
    }
}

impl VercelEncoder {
    pub(crate) fn new(version: SdkVersion, new_id: Box<dyn FnMut() -> String + Send>) -> Self {
        VercelEncoder {
            version,
            message_id: String::new(),
            step_started: false,
            finish_reason: None,
            streamed: Vec::new(),
            invalid: HashMap::new(),
            new_id,
        }
    }

    fn v6(&self) -> bool {
        self.version >= SdkVersion::V6
    }

    fn take_streamed(&mut self, id: &str) -> Option<ToolCallPart> {
        let i = self.streamed.iter().position(|c| c.tool_call_id == id)?;
        Some(self.streamed.remove(i))
    }
}

fn available(call: &ToolCallPart) -> Chunk {
    Chunk::ToolInputAvailable {
        tool_call_id: call.tool_call_id.clone(),
        tool_name: call.tool_name.clone(),
        input: args_value(&call.args),
    }
}

/// An error result's text, as the model reads it.
fn error_text(result: &ToolReturnPart) -> String {
    match &result.content {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Encoder for VercelEncoder {
    type Event = Chunk;

    fn before_stream(&mut self, out: &mut Vec<Chunk>) {
        out.push(Chunk::Start { message_id: None });
    }

    fn before_response(&mut self, out: &mut Vec<Chunk>) {
        if self.step_started {
            out.push(Chunk::FinishStep {});
        }
        self.step_started = true;
        out.push(Chunk::StartStep {});
    }

    fn handle(&mut self, moment: Moment<'_>, out: &mut Vec<Chunk>) {
        match moment {
            Moment::TextStart { content, follows_text } => {
                if !follows_text {
                    self.message_id = (self.new_id)();
                    out.push(Chunk::TextStart { id: self.message_id.clone() });
                }
                if !content.is_empty() {
                    out.push(Chunk::TextDelta { id: self.message_id.clone(), delta: content.into() });
                }
            }
            Moment::TextDelta { delta } => {
                if !delta.is_empty() {
                    out.push(Chunk::TextDelta { id: self.message_id.clone(), delta: delta.into() });
                }
            }
            Moment::TextEnd { followed_by_text } => {
                if !followed_by_text {
                    out.push(Chunk::TextEnd { id: self.message_id.clone() });
                }
            }
            Moment::ThinkingStart { content, .. } => {
                self.message_id = (self.new_id)();
                out.push(Chunk::ReasoningStart { id: self.message_id.clone() });
                if !content.is_empty() {
                    out.push(Chunk::ReasoningDelta { id: self.message_id.clone(), delta: content.into() });
                }
            }
            Moment::ThinkingDelta { delta } => {
                if !delta.is_empty() {
                    out.push(Chunk::ReasoningDelta { id: self.message_id.clone(), delta: delta.into() });
                }
            }
            Moment::ThinkingEnd => out.push(Chunk::ReasoningEnd { id: self.message_id.clone() }),
            Moment::ToolCallStart { id, name, args } => {
                out.push(Chunk::ToolInputStart { tool_call_id: id.into(), tool_name: name.into() });
                if !args.is_empty() {
                    out.push(Chunk::ToolInputDelta { tool_call_id: id.into(), input_text_delta: args.into() });
                }
            }
            Moment::ToolCallDelta { id, delta } => {
                out.push(Chunk::ToolInputDelta { tool_call_id: id.into(), input_text_delta: delta.into() });
            }
            Moment::ToolCallEnd { call } => self.streamed.push(call.clone()),
            Moment::ToolCall { call, args_valid } => {
                self.take_streamed(&call.tool_call_id);
                if !args_valid && self.v6() {
                    self.invalid.insert(call.tool_call_id.clone(), call.clone());
                } else {
                    out.push(available(call));
                }
            }
            Moment::ToolResult { result } => {
                let id = result.tool_call_id.clone();
                let invalid = self.invalid.remove(&id);
                if let Some(call) = self.take_streamed(&id).filter(|_| invalid.is_none()) {
                    out.push(available(&call));
                }
                if self.v6() && result.outcome == ToolOutcome::Denied {
                    out.push(Chunk::ToolOutputDenied { tool_call_id: id });
                } else if let Some(call) = invalid {
                    out.push(Chunk::ToolInputError {
                        tool_call_id: id,
                        tool_name: call.tool_name.clone(),
                        input: args_value(&call.args),
                        error_text: error_text(result),
                    });
                } else if matches!(result.outcome, ToolOutcome::Failed | ToolOutcome::Retried) {
                    out.push(Chunk::ToolOutputError { tool_call_id: id, error_text: error_text(result) });
                } else {
                    out.push(Chunk::ToolOutputAvailable { tool_call_id: id, output: result.content.clone() });
                }
            }
            Moment::RunResult { response, deferred } => {
                if let Some(reason) = response.and_then(|r| r.finish_reason.as_deref()) {
                    self.finish_reason = Some(finish_reason(reason).into());
                }
                out.push(Chunk::MessageMetadata { message_metadata: message_metadata(response) });
                if self.v6() {
                    for call in deferred.iter().flat_map(|d| &d.approvals) {
                        out.push(Chunk::ToolApprovalRequest {
                            approval_id: call.tool_call_id.clone(),
                            tool_call_id: call.tool_call_id.clone(),
                        });
                    }
                }
            }
        }
    }

    fn on_error(&mut self, message: &str, out: &mut Vec<Chunk>) {
        for call in std::mem::take(&mut self.streamed) {
            out.push(available(&call));
        }
        self.finish_reason = Some("error".into());
        out.push(Chunk::Error { error_text: message.into() });
    }

    fn after_stream(&mut self, out: &mut Vec<Chunk>) {
        out.push(Chunk::FinishStep {});
        out.push(Chunk::Finish { finish_reason: self.finish_reason.take() });
        out.push(Chunk::Done);
    }
}

fn finish_reason(reason: &str) -> &'static str {
    match reason {
        "stop" => "stop",
        "length" => "length",
        "content_filter" => "content-filter",
        "tool_call" => "tool-calls",
        "error" => "error",
        _ => "other",
    }
}

/// The response's metadata for the page, as Pydantic AI writes it: the application's metadata
/// (not the framework's own `__pydantic_ai__` key) and, under `pydantic_ai`, the timestamp.
fn message_metadata(response: Option<&ModelResponse>) -> Value {
    let mut metadata = Map::new();
    if let Some(Value::Object(app)) = response.and_then(|r| r.metadata.as_deref()) {
        metadata.extend(app.iter().filter(|(k, _)| *k != "__pydantic_ai__").map(|(k, v)| (k.clone(), v.clone())));
    }
    let mut own = Map::new();
    if let Some(ts) = response.and_then(|r| r.timestamp) {
        own.insert("timestamp".into(), Value::String(iso_time(&ts)));
    }
    metadata.insert("pydantic_ai".into(), Value::Object(own));
    Value::Object(metadata)
}

/// A time as Pydantic writes it in JSON: UTC, `Z`, microseconds only when there are some.
fn iso_time(ts: &chrono::DateTime<chrono::Utc>) -> String {
    use chrono::{SecondsFormat, Timelike};
    let format = if ts.nanosecond() / 1000 == 0 { SecondsFormat::Secs } else { SecondsFormat::Micros };
    ts.to_rfc3339_opts(format, true)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    #[test]
    fn times_read_as_pydantic_writes_them() {
        let whole = chrono::Utc.with_ymd_and_hms(2026, 11, 28, 13, 2, 31).unwrap();
        assert_eq!(super::iso_time(&whole), "2026-11-28T13:02:31Z");
        let micros = whole + chrono::Duration::microseconds(891_137);
        assert_eq!(super::iso_time(&micros), "2026-11-28T13:02:31.891137Z");
    }
}
