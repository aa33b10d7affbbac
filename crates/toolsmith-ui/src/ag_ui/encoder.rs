//! The run's events as AG-UI events (Pydantic AI's `AGUIEventStream`).

use serde_json::{Value, json};
use toolsmith::messages::{ToolOutcome, ToolReturnPart};

use super::events::{AgUiEvent, Interrupt, RunOutcome};
use crate::transform::{Encoder, Moment, args_value};
use toolsmith::pyjson;

/// The version of the AG-UI protocol the events follow.
pub const PROTOCOL_VERSION: &str = "1.0";
/// What an interrupt's id starts with (the call's id follows).
pub const INTERRUPT_ID_PREFIX: &str = "int-";

/// Makes message ids and timestamps (random and the clock by default; fixed in tests).
pub(crate) type IdSource = Box<dyn FnMut() -> String + Send>;

pub(crate) struct AgUiEncoder {
    pub(crate) thread_id: String,
    pub(crate) run_id: String,
    message_id: String,
    started_message_id: Option<String>,
    reasoning_id: Option<String>,
    reasoning_started: bool,
    reasoning_text: bool,
    error: bool,
    pub(crate) declares_1_0: bool,
    finish: Option<AgUiEvent>,
    new_id: IdSource,
}

impl std::fmt::Debug for AgUiEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgUiEncoder").field("thread_id", &self.thread_id).field("run_id", &self.run_id).finish()
    }
}

impl AgUiEncoder {
    pub(crate) fn new(thread_id: String, run_id: String, mut new_id: IdSource) -> Self {
        let message_id = new_id();
        AgUiEncoder {
            thread_id,
            run_id,
            message_id,
            started_message_id: None,
            reasoning_id: None,
            reasoning_started: false,
            reasoning_text: false,
            error: false,
            declares_1_0: false,
            finish: None,
            new_id,
        }
    }

    fn new_message_id(&mut self) -> String {
        self.message_id = (self.new_id)();
        self.message_id.clone()
    }

    fn tool_result(&mut self, result: &ToolReturnPart, out: &mut Vec<AgUiEvent>) {
        let message_id = self.new_message_id();
        out.push(AgUiEvent::ToolCallResult {
            message_id: message_id.clone(),
            tool_call_id: result.tool_call_id.clone(),
            content: result_content(&result.content),
            role: Some("tool".into()),
            timestamp: None,
        });
        if let Some(value) = outcome_value(result) {
            out.push(AgUiEvent::ReasoningEncryptedValue {
                subtype: "message".into(),
                entity_id: message_id,
                encrypted_value: value,
                timestamp: None,
            });
        }
        out.extend(state_events(result.metadata.as_deref()));
    }
}

/// A result's content as AG-UI text: a string as it is, nothing as `""`, anything else as JSON.
pub(crate) fn result_content(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The state events a tool put in its result's metadata (one, or a list), as Pydantic AI sends
/// the events a tool returns: `STATE_SNAPSHOT` and `STATE_DELTA` only, so that a tool's data
/// cannot pass for the run's own events.
fn state_events(metadata: Option<&Value>) -> Vec<AgUiEvent> {
    let items: Vec<&Value> = match metadata {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(item @ Value::Object(_)) => vec![item],
        _ => return Vec::new(),
    };
    items
        .into_iter()
        .filter(|v| matches!(v.get("type").and_then(Value::as_str), Some("STATE_SNAPSHOT" | "STATE_DELTA")))
        .filter_map(|v| serde_json::from_value(v.clone()).ok())
        .collect()
}

/// The outcome of a result that did not succeed (and its retry), as Pydantic AI keeps it for
/// the client: `{"pydantic_ai": {...}}`.
fn outcome_value(result: &ToolReturnPart) -> Option<String> {
    let mut payload = serde_json::Map::new();
    if result.outcome != ToolOutcome::Success {
        if let Some(kind) = &result.tool_kind {
            payload.insert("tool_kind".into(), json!(kind));
        }
        let outcome = serde_json::to_value(result.outcome).ok()?;
        payload.insert("outcome".into(), outcome);
    }
    if let Some(retry) = &result.retry {
        payload.insert("retry".into(), serde_json::to_value(retry).ok()?);
    }
    if payload.is_empty() {
        return None;
    }
    Some(pyjson::dumps(&json!({ "pydantic_ai": payload })))
}

/// The schema of an interrupt's answer.
pub(crate) fn response_schema() -> Value {
    json!({
        "properties": {
            "approved": {"type": "boolean"},
            "editedArgs": {"type": "object"},
            "reason": {"type": "string"}
        },
        "required": ["approved"],
        "type": "object"
    })
}

impl Encoder for AgUiEncoder {
    type Event = AgUiEvent;

    fn before_stream(&mut self, out: &mut Vec<AgUiEvent>) {
        out.push(AgUiEvent::RunStarted {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            protocol_version: Some(PROTOCOL_VERSION.into()),
            timestamp: Some(now_ms()),
        });
    }

    fn before_response(&mut self, _out: &mut Vec<AgUiEvent>) {
        self.new_message_id();
    }

    fn handle(&mut self, moment: Moment<'_>, out: &mut Vec<AgUiEvent>) {
        match moment {
            Moment::TextStart { content, follows_text } => {
                let message_id = if follows_text {
                    self.message_id.clone()
                } else {
                    let id = self.new_message_id();
                    self.started_message_id = Some(id.clone());
                    out.push(AgUiEvent::TextMessageStart {
                        message_id: id.clone(),
                        role: "assistant".into(),
                        timestamp: None,
                    });
                    id
                };
                if !content.is_empty() {
                    out.push(AgUiEvent::TextMessageContent { message_id, delta: content.into(), timestamp: None });
                }
            }
            Moment::TextDelta { delta } => {
                if !delta.is_empty() {
                    let message_id = self.message_id.clone();
                    out.push(AgUiEvent::TextMessageContent { message_id, delta: delta.into(), timestamp: None });
                }
            }
            Moment::TextEnd { followed_by_text } => {
                if !followed_by_text {
                    out.push(AgUiEvent::TextMessageEnd { message_id: self.message_id.clone(), timestamp: None });
                }
            }
            Moment::ThinkingStart { content, follows_thinking } => {
                if !follows_thinking {
                    self.new_message_id();
                }
                let id = (self.new_id)();
                self.reasoning_id = Some(id.clone());
                self.reasoning_started = false;
                self.reasoning_text = false;
                if !content.is_empty() {
                    self.reasoning_started = true;
                    self.reasoning_text = true;
                    out.push(AgUiEvent::ReasoningStart { message_id: id.clone(), timestamp: None });
                    out.push(AgUiEvent::ReasoningMessageStart {
                        message_id: id.clone(),
                        role: "reasoning".into(),
                        timestamp: None,
                    });
                    out.push(AgUiEvent::ReasoningMessageContent {
                        message_id: id,
                        delta: content.into(),
                        timestamp: None,
                    });
                }
            }
            Moment::ThinkingDelta { delta } => {
                let Some(id) = self.reasoning_id.clone() else { return };
                if delta.is_empty() {
                    return;
                }
                if !self.reasoning_started {
                    self.reasoning_started = true;
                    out.push(AgUiEvent::ReasoningStart { message_id: id.clone(), timestamp: None });
                }
                if !self.reasoning_text {
                    self.reasoning_text = true;
                    out.push(AgUiEvent::ReasoningMessageStart {
                        message_id: id.clone(),
                        role: "reasoning".into(),
                        timestamp: None,
                    });
                }
                out.push(AgUiEvent::ReasoningMessageContent { message_id: id, delta: delta.into(), timestamp: None });
            }
            Moment::ThinkingEnd => {
                let Some(id) = self.reasoning_id.take() else { return };
                if !self.reasoning_started {
                    return;
                }
                if self.reasoning_text {
                    self.reasoning_text = false;
                    out.push(AgUiEvent::ReasoningMessageEnd { message_id: id.clone(), timestamp: None });
                }
                out.push(AgUiEvent::ReasoningEnd { message_id: id, timestamp: None });
            }
            Moment::ToolCallStart { id, name, args } => {
                let parent = self.message_id.clone();
                if self.started_message_id.as_deref() != Some(parent.as_str()) {
                    self.started_message_id = Some(parent.clone());
                    out.push(AgUiEvent::TextMessageStart {
                        message_id: parent.clone(),
                        role: "assistant".into(),
                        timestamp: None,
                    });
                    out.push(AgUiEvent::TextMessageEnd { message_id: parent.clone(), timestamp: None });
                }
                out.push(AgUiEvent::ToolCallStart {
                    tool_call_id: id.into(),
                    tool_call_name: name.into(),
                    parent_message_id: Some(parent),
                    timestamp: None,
                });
                if !args.is_empty() {
                    out.push(AgUiEvent::ToolCallArgs { tool_call_id: id.into(), delta: args.into(), timestamp: None });
                }
            }
            Moment::ToolCallDelta { id, delta } => {
                out.push(AgUiEvent::ToolCallArgs { tool_call_id: id.into(), delta: delta.into(), timestamp: None });
            }
            Moment::ToolCallEnd { call } => {
                out.push(AgUiEvent::ToolCallEnd { tool_call_id: call.tool_call_id.clone(), timestamp: None });
            }
            Moment::ToolCall { .. } => {}
            Moment::ToolResult { result } => self.tool_result(result, out),
            Moment::RunResult { deferred, .. } => self.finish = self.finished(deferred),
        }
    }

    fn on_error(&mut self, message: &str, out: &mut Vec<AgUiEvent>) {
        self.error = true;
        out.push(AgUiEvent::RunError { message: message.into(), timestamp: Some(now_ms()) });
    }

    fn after_stream(&mut self, out: &mut Vec<AgUiEvent>) {
        if let Some(event) = self.finish.take() {
            out.push(event);
        }
    }
}

impl AgUiEncoder {
    /// `RUN_FINISHED`, with the calls waiting for approval as interrupts.
    pub(crate) fn finished(&self, deferred: Option<&toolsmith::deferred::DeferredToolRequests>) -> Option<AgUiEvent> {
        if self.error {
            return None;
        }
        let outcome = match deferred {
            Some(d) if !d.approvals.is_empty() => RunOutcome::Interrupt {
                interrupts: d
                    .approvals
                    .iter()
                    .map(|call| Interrupt {
                        id: format!("{INTERRUPT_ID_PREFIX}{}", call.tool_call_id),
                        reason: "tool_call".into(),
                        tool_call_id: call.tool_call_id.clone(),
                        message: format!("Approve {}({})?", call.tool_name, args_value(&call.args)),
                        response_schema: response_schema(),
                        metadata: d.metadata.get(&call.tool_call_id).cloned(),
                    })
                    .collect(),
            },
            Some(d) if !d.calls.is_empty() && self.declares_1_0 => RunOutcome::Success {
                pending_tool_call_ids: Some(d.calls.iter().map(|c| c.tool_call_id.clone()).collect()),
            },
            _ => RunOutcome::Success { pending_tool_call_ids: None },
        };
        Some(AgUiEvent::RunFinished {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            outcome: Some(outcome),
            timestamp: Some(now_ms()),
        })
    }
}

pub(crate) fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolsmith::messages::ToolReturnPart;

    use super::*;

    fn encoder() -> AgUiEncoder {
        let mut n = 0;
        AgUiEncoder::new(
            "t".into(),
            "r".into(),
            Box::new(move || {
                n += 1;
                format!("m{n}")
            }),
        )
    }

    #[test]
    fn a_tools_state_events_follow_its_result_and_nothing_else_does() {
        let mut result = ToolReturnPart::success("set", json!("ok"), "c1");
        result.metadata = Some(Box::new(json!([
            {"type": "STATE_SNAPSHOT", "snapshot": {"count": 1}},
            {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/count", "value": 2}]},
            {"type": "RUN_ERROR", "message": "not from a tool"}
        ])));
        let mut out = Vec::new();
        encoder().handle(Moment::ToolResult { result: &result }, &mut out);
        let types: Vec<String> = out.iter().map(|e| serde_json::to_value(e).unwrap()["type"].to_string()).collect();
        assert_eq!(types, [r#""TOOL_CALL_RESULT""#, r#""STATE_SNAPSHOT""#, r#""STATE_DELTA""#]);
    }

    #[test]
    fn results_are_text_as_pydantic_ai_writes_them() {
        assert_eq!(result_content(&json!("plain")), "plain");
        assert_eq!(result_content(&Value::Null), "");
        assert_eq!(result_content(&json!({"hour": 12})), r#"{"hour":12}"#);
        let mut retried = ToolReturnPart::success("t", json!("again"), "c1");
        retried.outcome = ToolOutcome::Retried;
        retried.retry = Some(toolsmith::messages::RetryInfo::new(toolsmith::messages::RetryCause::ModelRetry, 1, 2));
        assert_eq!(
            outcome_value(&retried).unwrap(),
            r#"{"pydantic_ai": {"outcome": "retried", "retry": {"cause": "model_retry", "attempt": 1, "max_retries": 2}}}"#
        );
    }
}
