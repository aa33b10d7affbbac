//! Gemini's streamed responses (`streamGenerateContent` with `alt=sse`).

use serde_json::{Value, json};

use super::partial_args::PartialArgs;
use super::{GeminiModel, SYSTEM, check_candidate};
use crate::messages::{ModelResponse, ModelResponsePart, generate_tool_call_id};
use crate::model::{ModelError, ModelStreamEvent, ResponseAssembler};
use crate::providers::sse::{SseEvent, StreamProcessor, parse_event_json};
use crate::providers::wire::{ERROR_CHARS, Shape};

pub(super) struct GeminiStream {
    model: GeminiModel,
    assembler: Option<ResponseAssembler>,
    /// Bumped after each function call, so that text after a call is a new part.
    segment: usize,
    calls: usize,
    /// The call whose arguments are arriving as `partialArgs`.
    streamed: Option<StreamedCall>,
    last: Value,
    finish: Option<String>,
    /// The last candidate that came with grounding metadata.
    grounding: Option<Value>,
}

struct StreamedCall {
    key: String,
    name: String,
    args: PartialArgs,
}

impl GeminiStream {
    pub(super) fn new(model: GeminiModel) -> Self {
        GeminiStream {
            model,
            assembler: Some(ResponseAssembler::new()),
            segment: 0,
            calls: 0,
            streamed: None,
            last: Value::Null,
            grounding: None,
            finish: None,
        }
    }

    /// Starts a call whose arguments follow in `partialArgs` entries.
    fn start_streamed(&mut self, call: &Value, out: &mut Vec<ModelStreamEvent>) {
        let Some(a) = self.assembler.as_mut() else { return };
        let key = format!("call{}", self.calls);
        self.calls += 1;
        self.segment += 1;
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .unwrap_or_else(generate_tool_call_id);
        let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
        out.push(a.tool_call_start(&key, &id, name));
        if let Some(ModelResponsePart::ToolCall(c)) = a.part_mut(&key) {
            c.provider_name = Some(SYSTEM.into());
        }
        self.streamed = Some(StreamedCall { key, name: name.to_string(), args: PartialArgs::new() });
    }

    /// Adds a `functionCall` chunk to the streamed call: its entries, its signature, and its
    /// end when it does not say `willContinue`.
    fn continue_streamed(&mut self, part: &Value, call: &Value, out: &mut Vec<ModelStreamEvent>) {
        let (Some(a), Some(s)) = (self.assembler.as_mut(), self.streamed.as_mut()) else { return };
        if let Some(entries) = call.get("partialArgs").and_then(Value::as_array) {
            let text = s.args.apply(entries);
            out.extend(a.tool_call_args_delta(&s.key, &text));
        }
        if let Some(args) = call.get("args").filter(|v| v.as_object().is_some_and(|m| !m.is_empty())) {
            s.args.replace(args.clone());
        }
        if let Some(sig) = part.get("thoughtSignature").and_then(Value::as_str)
            && let Some(ModelResponsePart::ToolCall(c)) = a.part_mut(&s.key)
        {
            c.provider_details = Some(Box::new(json!({"thought_signature": sig})));
        }
        if call.get("willContinue").and_then(Value::as_bool) != Some(true) {
            self.end_streamed(out);
        }
    }

    fn end_streamed(&mut self, out: &mut Vec<ModelStreamEvent>) {
        let (Some(a), Some(s)) = (self.assembler.as_mut(), self.streamed.take()) else { return };
        let (tail, args) = s.args.finish();
        out.extend(a.tool_call_args_delta(&s.key, &tail));
        out.extend(a.tool_call_end_with_args(&s.key, args));
    }
}

impl StreamProcessor for GeminiStream {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<ModelStreamEvent>) -> Result<bool, ModelError> {
        if event.data.trim().is_empty() {
            return Ok(false);
        }
        let redactor = &self.model.http.redactor;
        let v = parse_event_json(SYSTEM, &event.data, redactor)?;
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            let message =
                err.get("message").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| err.to_string());
            return Err(ModelError::new(
                crate::model::ModelErrorKind::Api,
                format!("the Gemini stream reported an error: {}", redactor.snippet(&message, ERROR_CHARS)),
            ));
        }
        let shape = Shape::event(SYSTEM, &v, redactor);
        shape.object(&v, "the chunk")?;
        check_candidate(&shape, &v, true)?;
        if self.assembler.is_none() {
            return Ok(true);
        }
        let candidate = v.get("candidates").and_then(|c| c.get(0));
        for p in candidate.and_then(|c| c.pointer("/content/parts")).and_then(Value::as_array).into_iter().flatten() {
            if let Some(call) = p.get("functionCall") {
                let name = call.get("name").and_then(Value::as_str).filter(|n| !n.is_empty());
                let partial = call.get("willContinue").and_then(Value::as_bool) == Some(true)
                    || call.get("partialArgs").and_then(Value::as_array).is_some_and(|e| !e.is_empty());
                // While a call is open (its last chunk said `willContinue`), chunks without a
                // name, or with the same one, belong to it.
                if self.streamed.as_ref().is_some_and(|s| name.is_none_or(|n| n == s.name)) {
                    self.continue_streamed(p, call, out);
                    continue;
                }
                self.end_streamed(out);
                if partial {
                    self.start_streamed(call, out);
                    self.continue_streamed(p, call, out);
                    continue;
                }
            }
            let Some(a) = self.assembler.as_mut() else { return Ok(true) };
            match self.model.part_from_wire(p) {
                Some(ModelResponsePart::ToolCall(call)) => {
                    let key = format!("call{}", self.calls);
                    self.calls += 1;
                    self.segment += 1;
                    out.push(a.tool_call_start(&key, &call.tool_call_id, &call.tool_name));
                    out.extend(a.tool_call_args_delta(&key, &call.args.to_string()));
                    out.extend(a.tool_call_end(&key, true));
                    if let Some(ModelResponsePart::ToolCall(c)) = a.part_mut(&key) {
                        c.provider_name = call.provider_name;
                        c.provider_details = call.provider_details;
                    }
                }
                Some(ModelResponsePart::Thinking(t)) => {
                    let key = format!("thought{}", self.segment);
                    out.extend(a.thinking_delta(&key, &t.content));
                    if let Some(sig) = &t.signature {
                        a.thinking_signature_delta(&key, sig);
                    }
                    if let Some(ModelResponsePart::Thinking(part)) = a.part_mut(&key) {
                        part.provider_name = Some(SYSTEM.into());
                    }
                }
                Some(ModelResponsePart::Text(t)) => {
                    let key = format!("text{}", self.segment);
                    out.extend(a.text_delta(&key, &t.content));
                    if t.provider_details.is_some()
                        && let Some(ModelResponsePart::Text(part)) = a.part_mut(&key)
                    {
                        part.provider_name = t.provider_name;
                        part.provider_details = t.provider_details;
                    }
                }
                Some(part) => {
                    self.segment += 1;
                    a.push_part(None, part);
                }
                None => {}
            }
        }
        // The search an answer was grounded on comes with its last chunks; the last one holds it all.
        if let Some(c) = candidate.filter(|c| c.get("groundingMetadata").is_some()) {
            self.grounding = Some(c.clone());
        }
        if let Some(f) = candidate.and_then(|c| c.get("finishReason")).and_then(Value::as_str) {
            self.finish = Some(f.to_string());
        }
        self.last = v;
        Ok(false)
    }

    fn finish(&mut self, out: &mut Vec<ModelStreamEvent>) -> Result<ModelResponse, ModelError> {
        if self.finish.is_none() {
            // A stream cut cleanly mid-answer: what arrived is not the whole answer.
            return Err(ModelError::new(
                crate::model::ModelErrorKind::Connection,
                "the Gemini stream ended before the answer did (no candidate with a finishReason): the connection was closed early; try again",
            ));
        }
        self.end_streamed(out);
        let (parts, ends) = self.assembler.take().unwrap_or_default().finish(true);
        out.extend(ends);
        let mut response = ModelResponse::new(parts);
        response.parts.extend(super::native::grounding(self.grounding.as_ref()));
        super::native::link_results(&mut response.parts);
        self.model.fill(&mut response, &self.last, self.finish.as_deref());
        Ok(response)
    }
}
