//! Anthropic's streamed responses (Messages API server-sent events).

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::{error_text, fill, usage};
use crate::messages::{ModelResponse, ModelResponsePart, ThinkingPart, generate_tool_call_id};
use crate::model::{ModelError, ModelStreamEvent, ResponseAssembler};
use crate::providers::redact::Redactor;
use crate::providers::sse::{SseEvent, StreamProcessor, parse_event_json};
use crate::providers::wire::Shape;

pub(super) struct AnthropicStream {
    name: String,
    base_url: String,
    assembler: Option<ResponseAssembler>,
    /// Server blocks being streamed: index -> (position, block, partial input JSON).
    raw: HashMap<u64, (usize, Value, String)>,
    raw_done: Vec<Value>,
    /// The ids and tool names of the answer's MCP calls.
    mcp_calls: Vec<(String, String)>,
    id: Option<String>,
    model: Option<String>,
    usage: Value,
    stop: Option<String>,
    redactor: Redactor,
    /// Whether `message_stop` arrived.
    stopped: bool,
}

impl AnthropicStream {
    pub(super) fn new(name: String, base_url: String, redactor: Redactor) -> Self {
        AnthropicStream {
            name,
            base_url,
            assembler: Some(ResponseAssembler::new()),
            raw: HashMap::new(),
            raw_done: Vec::new(),
            mcp_calls: Vec::new(),
            id: None,
            model: None,
            usage: Value::Object(Map::new()),
            stop: None,
            redactor,
            stopped: false,
        }
    }

    fn merge_usage(&mut self, u: &Value) {
        if let (Value::Object(target), Value::Object(src)) = (&mut self.usage, u) {
            for (k, v) in src {
                if !v.is_null() {
                    target.insert(k.clone(), v.clone());
                }
            }
        }
    }
}

/// Checks the types of the fields a stream event is read from.
fn check_event(shape: &Shape<'_>, v: &Value) -> Result<(), ModelError> {
    shape.object(v, "the event")?;
    match shape.opt_str(v, "type", "type")?.unwrap_or_default() {
        "message_start" => {
            shape.opt_object(v, "message", "message")?;
        }
        "content_block_start" => {
            if let Some(block) = shape.opt_object(v, "content_block", "content_block")? {
                shape.opt_str(block, "type", "content_block.type")?;
                if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                    shape.str(block, "name", "content_block.name")?;
                    shape.opt_str(block, "id", "content_block.id")?;
                    shape.opt_object(block, "input", "content_block.input")?;
                }
                for key in ["text", "thinking", "signature"] {
                    shape.opt_str(block, key, &format!("content_block.{key}"))?;
                }
            }
        }
        "content_block_delta" => {
            if let Some(delta) = shape.opt_object(v, "delta", "delta")? {
                for key in ["type", "text", "partial_json", "thinking", "signature"] {
                    shape.opt_str(delta, key, &format!("delta.{key}"))?;
                }
            }
        }
        "message_delta" => {
            if let Some(delta) = shape.opt_object(v, "delta", "delta")? {
                shape.opt_str(delta, "stop_reason", "delta.stop_reason")?;
            }
        }
        _ => {}
    }
    Ok(())
}

impl StreamProcessor for AnthropicStream {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<ModelStreamEvent>) -> Result<bool, ModelError> {
        if event.data.trim().is_empty() {
            return Ok(false);
        }
        let v = parse_event_json("anthropic", &event.data, &self.redactor)?;
        check_event(&Shape::event("anthropic", &v, &self.redactor), &v)?;
        let kind = v.get("type").and_then(Value::as_str).unwrap_or(event.event.as_str()).to_string();
        let Some(a) = self.assembler.as_mut() else { return Ok(true) };
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        let key = index.to_string();
        match kind.as_str() {
            "message_start" => {
                let m = v.get("message").cloned().unwrap_or(Value::Null);
                self.id = m.get("id").and_then(Value::as_str).map(str::to_string);
                self.model = m.get("model").and_then(Value::as_str).map(str::to_string);
                if let Some(u) = m.get("usage") {
                    self.merge_usage(u);
                }
            }
            "content_block_start" => {
                let block = v.get("content_block").cloned().unwrap_or(Value::Null);
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        out.extend(a.text_delta(&key, block.get("text").and_then(Value::as_str).unwrap_or_default()))
                    }
                    Some("tool_use") => {
                        let id = block
                            .get("id")
                            .and_then(Value::as_str)
                            .map(str::to_string)
                            .unwrap_or_else(generate_tool_call_id);
                        out.push(a.tool_call_start(
                            &key,
                            &id,
                            block.get("name").and_then(Value::as_str).unwrap_or_default(),
                        ));
                        if let Some(ModelResponsePart::ToolCall(c)) = a.part_mut(&key) {
                            c.provider_name = Some("anthropic".into());
                        }
                        if let Some(input) = block.get("input").filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
                        {
                            out.extend(a.tool_call_args_delta(&key, &input.to_string()));
                        }
                    }
                    Some("thinking") => {
                        out.extend(
                            a.thinking_delta(&key, block.get("thinking").and_then(Value::as_str).unwrap_or_default()),
                        );
                        if let Some(sig) = block.get("signature").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                            a.thinking_signature_delta(&key, sig);
                        }
                        if let Some(ModelResponsePart::Thinking(t)) = a.part_mut(&key) {
                            t.provider_name = Some("anthropic".into());
                        }
                    }
                    Some("redacted_thinking") => {
                        let mut t = ThinkingPart::new("");
                        t.id = Some("redacted_thinking".into());
                        t.signature = block.get("data").and_then(Value::as_str).map(str::to_string);
                        t.provider_name = Some("anthropic".into());
                        a.push_part(Some(&key), ModelResponsePart::Thinking(t));
                    }
                    _ => {
                        self.raw.insert(index, (a.parts().len(), block, String::new()));
                    }
                }
            }
            "content_block_delta" => {
                let delta = v.get("delta").cloned().unwrap_or(Value::Null);
                let text = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => out.extend(a.text_delta(&key, &text("text"))),
                    Some("input_json_delta") => {
                        if let Some((_, _, partial)) = self.raw.get_mut(&index) {
                            partial.push_str(&text("partial_json"));
                        } else {
                            out.extend(a.tool_call_args_delta(&key, &text("partial_json")));
                        }
                    }
                    Some("thinking_delta") => out.extend(a.thinking_delta(&key, &text("thinking"))),
                    Some("signature_delta") => a.thinking_signature_delta(&key, &text("signature")),
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some((position, mut block, partial)) = self.raw.remove(&index) {
                    if !partial.trim().is_empty()
                        && let Ok(input) = serde_json::from_str::<Value>(&partial)
                    {
                        block["input"] = input;
                    }
                    match super::native::part_of(&block, &self.mcp_calls) {
                        Some(part) => {
                            if let ModelResponsePart::NativeToolCall(c) = &part
                                && c.tool_name.starts_with("mcp_server:")
                            {
                                self.mcp_calls.push((c.tool_call_id.clone(), c.tool_name.clone()));
                            }
                            a.push_part(Some(&key), part);
                        }
                        None => self.raw_done.push(json!({"after_part": position, "block": block})),
                    }
                } else {
                    out.extend(a.tool_call_end(&key, true));
                }
            }
            "message_delta" => {
                if let Some(stop) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop = Some(stop.to_string());
                }
                if let Some(u) = v.get("usage") {
                    self.merge_usage(u);
                }
            }
            "message_stop" => {
                self.stopped = true;
                return Ok(true);
            }
            "error" => {
                let message = error_text(&self.redactor, &v);
                let kind =
                    self.redactor.snippet(v.pointer("/error/type").and_then(Value::as_str).unwrap_or("error"), 100);
                return Err(ModelError::new(
                    crate::model::ModelErrorKind::Api,
                    format!("the anthropic stream reported an error ({kind}): {message}. Try again"),
                ));
            }
            _ => {}
        }
        Ok(false)
    }

    fn finish(&mut self, out: &mut Vec<ModelStreamEvent>) -> Result<ModelResponse, ModelError> {
        if !self.stopped {
            // A stream cut cleanly mid-answer: what arrived is not the whole answer.
            return Err(ModelError::new(
                crate::model::ModelErrorKind::Connection,
                "the anthropic stream ended before the answer did (no message_stop event): the connection was closed early; try again",
            ));
        }
        let (parts, ends) = self.assembler.take().unwrap_or_default().finish(true);
        out.extend(ends);
        let mut response = ModelResponse::new(parts);
        fill(
            &mut response,
            &self.name,
            &self.base_url,
            self.model.as_deref(),
            self.id.as_deref(),
            usage(&self.usage),
            self.stop.as_deref(),
            std::mem::take(&mut self.raw_done),
        );
        Ok(response)
    }
}
