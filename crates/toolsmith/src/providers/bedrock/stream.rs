//! ConverseStream's events (decoded from their frames by [`super::eventstream`]) assembled into
//! a response: `messageStart`, `contentBlockStart` (tool use), `contentBlockDelta` (text, a
//! tool call's partial JSON input, reasoning), `contentBlockStop`, `messageStop` and
//! `metadata` (usage, after `messageStop`); exception frames end the stream with an error.

use serde_json::Value;

use super::{fill, usage};
use crate::messages::{ModelResponse, ModelResponsePart, ThinkingPart};
use crate::model::{ModelError, ModelStreamEvent, ResponseAssembler};
use crate::providers::redact::Redactor;
use crate::providers::sse::{SseEvent, StreamProcessor, parse_event_json};
use crate::providers::wire::{ERROR_CHARS, Shape};
use crate::usage::RequestUsage;

pub(super) struct BedrockStream {
    name: String,
    base_url: String,
    request_id: Option<String>,
    assembler: Option<ResponseAssembler>,
    usage: RequestUsage,
    stop: Option<String>,
    redactor: Redactor,
    /// Whether `messageStop` arrived.
    stopped: bool,
}

impl BedrockStream {
    pub(super) fn new(name: String, base_url: String, request_id: Option<String>, redactor: Redactor) -> Self {
        BedrockStream {
            name,
            base_url,
            request_id,
            assembler: Some(ResponseAssembler::new()),
            usage: RequestUsage::default(),
            stop: None,
            redactor,
            stopped: false,
        }
    }

    /// The error for an exception (or error) frame: its type and message.
    fn exception(&self, event: &SseEvent) -> ModelError {
        let (what, kind) = event.event.split_once('/').unwrap_or(("exception", "unknown"));
        let message = match serde_json::from_str::<Value>(&event.data) {
            Ok(v) => v
                .get("message")
                .or_else(|| v.get("Message"))
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| event.data.clone()),
            Err(_) => event.data.clone(),
        };
        let kind = self.redactor.snippet(kind, 100);
        let message = self.redactor.snippet(&message, ERROR_CHARS);
        let retry = match kind.as_str() {
            "throttlingException"
            | "serviceUnavailableException"
            | "internalServerException"
            | "modelStreamErrorException" => "try again (or add a FallbackModel)",
            _ => "check the request (model id, settings, tool schemas)",
        };
        ModelError::new(
            crate::model::ModelErrorKind::Api,
            format!("the bedrock stream reported an {what} ({kind}): {message}; {retry}"),
        )
    }
}

/// Checks the types of the fields an event is read from.
fn check_event(shape: &Shape<'_>, kind: &str, v: &Value) -> Result<(), ModelError> {
    shape.object(v, "the event")?;
    match kind {
        "contentBlockStart" => {
            if let Some(start) = shape.opt_object(v, "start", "start")?
                && let Some(tool) = shape.opt_object(start, "toolUse", "start.toolUse")?
            {
                shape.str(tool, "toolUseId", "start.toolUse.toolUseId")?;
                shape.str(tool, "name", "start.toolUse.name")?;
            }
        }
        "contentBlockDelta" => {
            if let Some(delta) = shape.opt_object(v, "delta", "delta")? {
                shape.opt_str(delta, "text", "delta.text")?;
                if let Some(tool) = shape.opt_object(delta, "toolUse", "delta.toolUse")? {
                    shape.opt_str(tool, "input", "delta.toolUse.input")?;
                }
                if let Some(r) = shape.opt_object(delta, "reasoningContent", "delta.reasoningContent")? {
                    for key in ["text", "signature", "redactedContent"] {
                        shape.opt_str(r, key, &format!("delta.reasoningContent.{key}"))?;
                    }
                }
            }
        }
        "messageStop" => {
            shape.opt_str(v, "stopReason", "stopReason")?;
        }
        "metadata" => {
            shape.opt_object(v, "usage", "usage")?;
        }
        _ => {}
    }
    Ok(())
}

impl StreamProcessor for BedrockStream {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<ModelStreamEvent>) -> Result<bool, ModelError> {
        if event.event.starts_with("exception/") || event.event.starts_with("error/") {
            return Err(self.exception(event));
        }
        let kind = event.event.as_str();
        if !matches!(kind, "contentBlockStart" | "contentBlockDelta" | "contentBlockStop" | "messageStop" | "metadata")
        {
            // `messageStart` (the role) and events of later API versions carry nothing to keep.
            return Ok(false);
        }
        let v = parse_event_json("bedrock", &event.data, &self.redactor)?;
        check_event(&Shape::event("bedrock", &v, &self.redactor), kind, &v)?;
        let Some(a) = self.assembler.as_mut() else { return Ok(false) };
        let key = v.get("contentBlockIndex").and_then(Value::as_u64).unwrap_or(0).to_string();
        let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
        match kind {
            "contentBlockStart" => {
                if let Some(tool) = v.pointer("/start/toolUse") {
                    out.push(a.tool_call_start(&key, &text(tool.get("toolUseId")), &text(tool.get("name"))));
                    if let Some(ModelResponsePart::ToolCall(c)) = a.part_mut(&key) {
                        c.provider_name = Some("bedrock".into());
                    }
                }
            }
            "contentBlockDelta" => {
                let delta = v.get("delta");
                if let Some(t) = delta.and_then(|d| d.get("text")) {
                    out.extend(a.text_delta(&key, &text(Some(t))));
                } else if let Some(input) = delta.and_then(|d| d.pointer("/toolUse/input")) {
                    if a.has_tool_call(&key) {
                        out.extend(a.tool_call_args_delta(&key, &text(Some(input))));
                    }
                } else if let Some(r) = delta.and_then(|d| d.get("reasoningContent")) {
                    if let Some(redacted) = r.get("redactedContent").and_then(Value::as_str) {
                        let mut t = ThinkingPart::new("");
                        t.id = Some("redacted_content".into());
                        t.signature = Some(redacted.to_string());
                        t.provider_name = Some("bedrock".into());
                        a.push_part(Some(&format!("{key}/redacted")), ModelResponsePart::Thinking(t));
                    }
                    if let Some(t) = r.get("text") {
                        out.extend(a.thinking_delta(&key, &text(Some(t))));
                    }
                    if let Some(sig) = r.get("signature").and_then(Value::as_str) {
                        a.thinking_signature_delta(&key, sig);
                        if let Some(ModelResponsePart::Thinking(t)) = a.part_mut(&key) {
                            t.provider_name = Some("bedrock".into());
                        }
                    }
                }
            }
            "contentBlockStop" => {
                // Ends a tool call; a text or reasoning block has nothing to end.
                out.extend(a.tool_call_end(&key, true));
            }
            "messageStop" => {
                self.stopped = true;
                self.stop = v.get("stopReason").and_then(Value::as_str).map(str::to_string);
            }
            "metadata" => {
                if let Some(u) = v.get("usage") {
                    self.usage = usage(u);
                }
            }
            _ => {}
        }
        // The usage comes after `messageStop`: the stream is read to its end.
        Ok(false)
    }

    fn finish(&mut self, out: &mut Vec<ModelStreamEvent>) -> Result<ModelResponse, ModelError> {
        if !self.stopped {
            return Err(ModelError::new(
                crate::model::ModelErrorKind::Connection,
                "the bedrock stream ended before the answer did (no messageStop event): the connection was closed early; try again",
            ));
        }
        let (parts, ends) = self.assembler.take().unwrap_or_default().finish(true);
        out.extend(ends);
        let mut response = ModelResponse::new(parts);
        fill(&mut response, &self.name, &self.base_url, std::mem::take(&mut self.usage), self.stop.as_deref());
        response.provider_response_id = self.request_id.as_deref().map(Into::into);
        Ok(response)
    }
}
