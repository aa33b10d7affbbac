//! Streaming at the model level: the [`StreamingModel`] trait, its events, and the
//! [`ResponseAssembler`] adapters use to turn provider deltas into events and a final response.
//!
//! A stream yields deltas as they arrive and always ends with one
//! [`ModelStreamEvent::Final`] holding the complete [`ModelResponse`] (the same response
//! [`Model::request`] would have returned), so a consumer that only wants the result can call
//! [`collect_stream`].

use std::collections::HashMap;
use std::future::Future;

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;

use crate::messages::{ModelMessage, ModelResponse, ModelResponsePart, TextPart, ThinkingPart, ToolCallPart};
use crate::model::{Model, ModelError, ModelRequestParameters, ModelSettings};

/// One event of a streamed model response.
///
/// `index` is the position of the part in the final response's `parts`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelStreamEvent {
    /// More text for the text part at `index` (the part starts with its first delta).
    TextDelta {
        /// The part's index.
        index: usize,
        /// The new text.
        delta: String,
    },
    /// More reasoning for the thinking part at `index`.
    ThinkingDelta {
        /// The part's index.
        index: usize,
        /// The new reasoning text.
        delta: String,
    },
    /// A tool call starts: its name and id are known, its arguments follow.
    ToolCallStart {
        /// The part's index.
        index: usize,
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
    },
    /// More of a tool call's arguments (a fragment of JSON text).
    ToolCallArgsDelta {
        /// The part's index.
        index: usize,
        /// The fragment.
        delta: String,
    },
    /// A tool call is complete.
    ToolCallEnd {
        /// The part's index.
        index: usize,
        /// The assembled call.
        call: ToolCallPart,
    },
    /// The complete response; always the last event of a successful stream.
    Final(ModelResponse),
}

/// A stream of response events. It owns everything it needs (`'static`).
pub type ModelStream = BoxStream<'static, Result<ModelStreamEvent, ModelError>>;

/// A model that can stream its response.
///
/// The agent's `run_stream` is built on this trait; every provider adapter implements it.
/// A model that cannot stream can still be wrapped with [`AnyModel::from_model`](crate::model::AnyModel::from_model),
/// whose stream is the whole response as one `Final` event.
pub trait StreamingModel: Model {
    /// Starts one request and returns its event stream once the provider has accepted it
    /// (HTTP errors and retries happen before the stream is returned).
    fn request_stream(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> impl Future<Output = Result<ModelStream, ModelError>> + Send;
}

/// Drains a stream and returns its final response.
///
/// A stream that ends without a `Final` event is an error (`UnexpectedModelBehavior`).
pub async fn collect_stream(mut stream: ModelStream) -> Result<ModelResponse, ModelError> {
    while let Some(event) = stream.next().await {
        if let ModelStreamEvent::Final(response) = event? {
            return Ok(response);
        }
    }
    Err(ModelError::new(
        crate::model::ModelErrorKind::UnexpectedResponse,
        "the model's stream ended before its final response; the connection may have been cut, try again",
    ))
}

/// A stream of one `Final` event: how a non-streaming response is streamed.
pub fn single_response_stream(response: ModelResponse) -> ModelStream {
    futures::stream::once(async move { Ok(ModelStreamEvent::Final(response)) }).boxed()
}

/// Builds a response from streamed deltas and produces the matching [`ModelStreamEvent`]s.
///
/// Parts are addressed by a provider key (an Anthropic content-block index, an OpenAI tool-call
/// index, a Responses item id...): deltas for the same key extend the same part, a new key
/// starts a new part. Tool-call arguments are accumulated as raw JSON text, fragment by
/// fragment, so a call whose arguments arrive in many pieces is assembled exactly.
///
/// ```
/// use toolsmith::model::{ModelStreamEvent, ResponseAssembler};
///
/// let mut a = ResponseAssembler::new();
/// a.tool_call_start("0", "call_1", "get_weather");
/// a.tool_call_args_delta("0", "{\"city\":");
/// a.tool_call_args_delta("0", "\"Paris\"}");
/// let (parts, _events) = a.finish(true);
/// let call = match &parts[0] { toolsmith::messages::ModelResponsePart::ToolCall(c) => c, _ => unreachable!() };
/// assert_eq!(call.args, serde_json::json!({"city": "Paris"}));
/// ```
#[derive(Debug, Default)]
pub struct ResponseAssembler {
    parts: Vec<ModelResponsePart>,
    keys: HashMap<String, usize>,
    args: HashMap<usize, String>,
    ended: Vec<bool>,
}

impl ResponseAssembler {
    /// An empty assembler.
    pub fn new() -> Self {
        Self::default()
    }

    fn part_index(&self, key: &str) -> Option<usize> {
        self.keys.get(key).copied()
    }

    /// Appends a finished part (e.g. one the provider sent whole) and returns its index.
    pub fn push_part(&mut self, key: Option<&str>, part: ModelResponsePart) -> usize {
        let index = self.parts.len();
        self.parts.push(part);
        self.ended.push(false);
        if let Some(key) = key {
            self.keys.insert(key.to_string(), index);
        }
        index
    }

    /// Adds text to the text part of `key` (started on the first non-empty delta).
    pub fn text_delta(&mut self, key: &str, delta: &str) -> Option<ModelStreamEvent> {
        if delta.is_empty() {
            return None;
        }
        let index = match self.part_index(key) {
            Some(i) if matches!(self.parts[i], ModelResponsePart::Text(_)) => i,
            _ => self.push_part(Some(key), ModelResponsePart::Text(TextPart::new(""))),
        };
        if let ModelResponsePart::Text(t) = &mut self.parts[index] {
            t.content.push_str(delta);
        }
        Some(ModelStreamEvent::TextDelta { index, delta: delta.to_string() })
    }

    /// Adds reasoning to the thinking part of `key` (started on first use, even when empty,
    /// so that a signature-only part is kept).
    pub fn thinking_delta(&mut self, key: &str, delta: &str) -> Option<ModelStreamEvent> {
        let index = self.thinking_index(key);
        if let ModelResponsePart::Thinking(t) = &mut self.parts[index] {
            t.content.push_str(delta);
        }
        if delta.is_empty() { None } else { Some(ModelStreamEvent::ThinkingDelta { index, delta: delta.to_string() }) }
    }

    fn thinking_index(&mut self, key: &str) -> usize {
        match self.part_index(key) {
            Some(i) if matches!(self.parts[i], ModelResponsePart::Thinking(_)) => i,
            _ => self.push_part(Some(key), ModelResponsePart::Thinking(ThinkingPart::new(""))),
        }
    }

    /// Appends to the signature of the thinking part of `key`.
    pub fn thinking_signature_delta(&mut self, key: &str, delta: &str) {
        let index = self.thinking_index(key);
        if let ModelResponsePart::Thinking(t) = &mut self.parts[index] {
            t.signature.get_or_insert_with(String::new).push_str(delta);
        }
    }

    /// Starts a tool call for `key`.
    pub fn tool_call_start(&mut self, key: &str, tool_call_id: &str, tool_name: &str) -> ModelStreamEvent {
        let part = ToolCallPart::new(tool_name, Value::String(String::new()), tool_call_id);
        let index = self.push_part(Some(key), ModelResponsePart::ToolCall(part));
        self.args.insert(index, String::new());
        ModelStreamEvent::ToolCallStart {
            index,
            tool_call_id: tool_call_id.to_string(),
            tool_name: tool_name.to_string(),
        }
    }

    /// Whether a tool call was started for `key`.
    pub fn has_tool_call(&self, key: &str) -> bool {
        self.part_index(key).is_some_and(|i| self.args.contains_key(&i))
    }

    /// Adds a fragment of arguments to the tool call of `key` (ignored when there is none).
    pub fn tool_call_args_delta(&mut self, key: &str, delta: &str) -> Option<ModelStreamEvent> {
        let index = self.part_index(key)?;
        let args = self.args.get_mut(&index)?;
        if delta.is_empty() {
            return None;
        }
        args.push_str(delta);
        Some(ModelStreamEvent::ToolCallArgsDelta { index, delta: delta.to_string() })
    }

    /// Ends the tool call of `key`. With `parse_args`, arguments that are valid JSON are
    /// stored as a JSON value (empty arguments as `{}`); otherwise they stay raw text.
    pub fn tool_call_end(&mut self, key: &str, parse_args: bool) -> Option<ModelStreamEvent> {
        let index = self.part_index(key)?;
        self.end_call(index, parse_args)
    }

    /// Ends the tool call of `key` with arguments the adapter assembled itself (e.g. from
    /// typed partial values), in place of the fragments accumulated so far.
    pub fn tool_call_end_with_args(&mut self, key: &str, args: Value) -> Option<ModelStreamEvent> {
        let index = self.part_index(key)?;
        if self.ended.get(index).copied().unwrap_or(true) || !self.args.contains_key(&index) {
            return None;
        }
        self.ended[index] = true;
        let ModelResponsePart::ToolCall(call) = &mut self.parts[index] else { return None };
        call.args = args;
        Some(ModelStreamEvent::ToolCallEnd { index, call: call.clone() })
    }

    fn end_call(&mut self, index: usize, parse_args: bool) -> Option<ModelStreamEvent> {
        if self.ended.get(index).copied().unwrap_or(true) {
            return None;
        }
        let raw = self.args.get(&index)?.clone();
        self.ended[index] = true;
        let ModelResponsePart::ToolCall(call) = &mut self.parts[index] else { return None };
        call.args = if parse_args {
            if raw.trim().is_empty() {
                Value::Object(Default::default())
            } else {
                serde_json::from_str(&raw).unwrap_or(Value::String(raw))
            }
        } else {
            Value::String(raw)
        };
        Some(ModelStreamEvent::ToolCallEnd { index, call: call.clone() })
    }

    /// The part of `key`, to set provider details on it.
    pub fn part_mut(&mut self, key: &str) -> Option<&mut ModelResponsePart> {
        let index = self.part_index(key)?;
        self.parts.get_mut(index)
    }

    /// The parts so far.
    pub fn parts(&self) -> &[ModelResponsePart] {
        &self.parts
    }

    /// Ends every open tool call and returns the parts with the `ToolCallEnd` events of the
    /// calls that were still open.
    pub fn finish(mut self, parse_args: bool) -> (Vec<ModelResponsePart>, Vec<ModelStreamEvent>) {
        let mut open: Vec<usize> = self.args.keys().copied().collect();
        open.sort_unstable();
        let events = open.into_iter().filter_map(|i| self.end_call(i, parse_args)).collect();
        (self.parts, events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_tool_calls_are_assembled_by_key() {
        let mut a = ResponseAssembler::new();
        a.text_delta("t", "Let me ");
        a.text_delta("t", "check.");
        a.tool_call_start("0", "c0", "f");
        a.tool_call_start("1", "c1", "g");
        a.tool_call_args_delta("1", "{\"b\":");
        a.tool_call_args_delta("0", "{\"a\":1}");
        a.tool_call_args_delta("1", "2}");
        let end = a.tool_call_end("0", false);
        assert!(matches!(end, Some(ModelStreamEvent::ToolCallEnd { index: 1, .. })));
        let (parts, events) = a.finish(false);
        assert_eq!(events.len(), 1);
        assert_eq!(parts.len(), 3);
        match (&parts[1], &parts[2]) {
            (ModelResponsePart::ToolCall(f), ModelResponsePart::ToolCall(g)) => {
                assert_eq!(f.args, Value::String("{\"a\":1}".into()));
                assert_eq!(g.args, Value::String("{\"b\":2}".into()));
            }
            other => panic!("unexpected parts {other:?}"),
        }
    }
}
