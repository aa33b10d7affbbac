//! The Responses API's stream: its events checked and assembled into a response.

use super::*;

/// Checks the types of the fields a stream event is read from.
pub(super) fn check_event(shape: &Shape<'_>, v: &Value) -> Result<(), ModelError> {
    shape.object(v, "the event")?;
    let kind = shape.opt_str(v, "type", "type")?.unwrap_or_default();
    if matches!(
        kind,
        "response.output_text.delta"
            | "response.refusal.delta"
            | "response.function_call_arguments.delta"
            | "response.reasoning_summary_text.delta"
            | "response.reasoning_text.delta"
    ) {
        shape.opt_str(v, "delta", "delta")?;
        shape.opt_str(v, "item_id", "item_id")?;
    }
    if kind.starts_with("response.") && !kind.starts_with("response.output_item.") {
        shape.opt_object(v, "response", "response")?;
    }
    if !kind.starts_with("response.output_item.") {
        return Ok(());
    }
    if let Some(item) = shape.opt_object(v, "item", "item")? {
        shape.opt_str(item, "id", "item.id")?;
        if shape.opt_str(item, "type", "item.type")? == Some("function_call") {
            shape.opt_str(item, "name", "item.name")?;
            shape.opt_str(item, "call_id", "item.call_id")?;
        }
    }
    Ok(())
}

pub(super) struct ResponsesStream {
    pub(super) model: OpenAIResponsesModel,
    pub(super) assembler: Option<ResponseAssembler>,
    pub(super) raw: Vec<Value>,
    pub(super) last: Option<Value>,
    /// Whether `response.completed` or `response.incomplete` arrived.
    pub(super) completed: bool,
}

pub(super) fn item_key(v: &Value) -> String {
    match v.get("item_id").and_then(Value::as_str).or_else(|| v.pointer("/item/id").and_then(Value::as_str)) {
        Some(id) => id.to_string(),
        None => format!("out{}", v.get("output_index").and_then(Value::as_u64).unwrap_or(0)),
    }
}

impl StreamProcessor for ResponsesStream {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<ModelStreamEvent>) -> Result<bool, ModelError> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            // `[DONE]` is not the Responses API's end: `finish` checks that the response was
            // completed.
            return Ok(data == "[DONE]");
        }
        let v = parse_event_json(&self.model.system, data, &self.model.http.redactor)?;
        check_event(&Shape::event(&self.model.system, &v, &self.model.http.redactor), &v)?;
        let Some(a) = self.assembler.as_mut() else { return Ok(true) };
        let kind = v.get("type").and_then(Value::as_str).unwrap_or(event.event.as_str());
        match kind {
            "response.created" | "response.in_progress" => self.last = v.get("response").cloned(),
            "response.output_item.added" => {
                let item = v.get("item").cloned().unwrap_or(Value::Null);
                let key = item_key(&v);
                match item.get("type").and_then(Value::as_str) {
                    Some("function_call") => {
                        let call_id = item
                            .get("call_id")
                            .and_then(Value::as_str)
                            .filter(|s| !s.is_empty())
                            .map(str::to_string)
                            .unwrap_or_else(generate_tool_call_id);
                        let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
                        out.push(a.tool_call_start(&key, &call_id, name));
                        if let Some(ModelResponsePart::ToolCall(c)) = a.part_mut(&key) {
                            c.id = item.get("id").and_then(Value::as_str).map(str::to_string);
                            c.provider_name = Some(self.model.system.clone());
                        }
                        if let Some(args) = wire::call_args_delta(item.get("arguments")) {
                            out.extend(a.tool_call_args_delta(&key, &args));
                        }
                    }
                    Some("reasoning") => {
                        a.thinking_delta(&key, "");
                        if let Some(ModelResponsePart::Thinking(t)) = a.part_mut(&key) {
                            t.id = item.get("id").and_then(Value::as_str).map(str::to_string);
                            t.provider_name = Some(self.model.system.clone());
                        }
                    }
                    _ => {}
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                let key = format!("text:{}", item_key(&v));
                let delta = v.get("delta").and_then(Value::as_str).unwrap_or_default();
                out.extend(a.text_delta(&key, delta));
                if let Some(ModelResponsePart::Text(t)) = a.part_mut(&key) {
                    t.id = v.get("item_id").and_then(Value::as_str).map(str::to_string);
                    t.provider_name = Some(self.model.system.clone());
                }
            }
            "response.function_call_arguments.delta" => {
                let delta = v.get("delta").and_then(Value::as_str).unwrap_or_default();
                out.extend(a.tool_call_args_delta(&item_key(&v), delta));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let delta = v.get("delta").and_then(Value::as_str).unwrap_or_default();
                out.extend(a.thinking_delta(&item_key(&v), delta));
            }
            "response.reasoning_summary_part.added" => {
                // Summary parts are joined with a blank line, as in a non-streamed response.
                let key = item_key(&v);
                let has_text =
                    matches!(a.part_mut(&key), Some(ModelResponsePart::Thinking(t)) if !t.content.is_empty());
                if has_text {
                    out.extend(a.thinking_delta(&key, "\n\n"));
                }
            }
            "response.output_item.done" => {
                let item = v.get("item").cloned().unwrap_or(Value::Null);
                let key = item_key(&v);
                match item.get("type").and_then(Value::as_str) {
                    Some("function_call") => {
                        if !a.has_tool_call(&key) {
                            // A call announced only when done: start it with its whole arguments.
                            let call = self.model.call_from_item(&item);
                            out.push(a.tool_call_start(&key, &call.tool_call_id, &call.tool_name));
                            if let Some(ModelResponsePart::ToolCall(c)) = a.part_mut(&key) {
                                c.id = call.id.clone();
                                c.provider_name = call.provider_name.clone();
                            }
                            out.extend(a.tool_call_args_delta(&key, &wire::args_string(&call.args)));
                        }
                        out.extend(a.tool_call_end(&key, false));
                    }
                    Some("reasoning") => {
                        if let Some(ModelResponsePart::Thinking(t)) = a.part_mut(&key) {
                            t.signature = item.get("encrypted_content").and_then(Value::as_str).map(str::to_string);
                        }
                    }
                    Some("message") => {}
                    _ => match super::super::responses_native::parts_of(&item, &self.model.system) {
                        Some(native) => {
                            for part in native {
                                a.push_part(None, part);
                            }
                        }
                        None => self.raw.push(json!({"after_part": a.parts().len(), "item": item})),
                    },
                }
            }
            "response.completed" | "response.incomplete" => {
                self.last = v.get("response").cloned();
                self.completed = true;
                return Ok(true);
            }
            "response.failed" => {
                let message = match v.pointer("/response/error").filter(|e| !e.is_null()) {
                    Some(err) => self.model.error_text(err),
                    None => "the response failed without a message".to_string(),
                };
                return Err(ModelError::new(
                    crate::model::ModelErrorKind::Api,
                    format!("{} response failed: {message}", self.model.system),
                ));
            }
            "error" => {
                return Err(ModelError::new(
                    crate::model::ModelErrorKind::Api,
                    format!("the {} stream reported an error: {}", self.model.system, self.model.error_text(&v)),
                ));
            }
            _ => {}
        }
        Ok(false)
    }

    fn finish(&mut self, out: &mut Vec<ModelStreamEvent>) -> Result<ModelResponse, ModelError> {
        if !self.completed {
            // A stream cut cleanly mid-answer: what arrived is not the whole answer.
            return Err(ModelError::new(
                crate::model::ModelErrorKind::Connection,
                format!(
                    "the {} stream ended before the answer did (no response.completed, response.incomplete or response.failed event): the connection was closed early; try again",
                    self.model.system
                ),
            ));
        }
        let (parts, ends) = self.assembler.take().unwrap_or_default().finish(false);
        out.extend(ends);
        let has_calls = parts.iter().any(|p| matches!(p, ModelResponsePart::ToolCall(_)));
        let mut response = ModelResponse::new(parts);
        let last = self.last.clone().unwrap_or(Value::Null);
        self.model.fill(&mut response, &last, has_calls, std::mem::take(&mut self.raw));
        Ok(response)
    }
}
