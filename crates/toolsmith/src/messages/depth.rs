//! How deeply a message nests as JSON, and the values of a message taken out when it nests too
//! deeply, both without recursing into a value past the limit.
//!
//! Messages built in memory (by a model, a tool, the application) can hold values of any depth,
//! which nothing recursive may walk: serde_json's writer, `Clone`, `PartialEq` and `Drop` all
//! recurse once per level. [`too_deep`] measures a message as serde_json would write it, stopping
//! at the first bracket past the limit (so its own recursion is bounded by the limit); [`values_mut`]
//! reaches every JSON value a message holds, so that one too deep is cut or dropped without
//! recursion ([`crate::validation::depth`]).

use serde::Serialize;
use serde::ser;
use serde_json::Value;

use super::{
    MediaContent, ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, UserContent, UserPromptContent,
};
use crate::validation::depth::{cut_points, dispose, locate};

/// Whether `value`, written as JSON, opens an array or object more than `max` levels deep.
/// Cost: one walk of what is below the limit, no text written.
pub(crate) fn too_deep<T: Serialize + ?Sized>(value: &T, max: usize) -> bool {
    value.serialize(&mut Probe { depth: 0, max }).is_err()
}

/// The index of the first message nested deeper than [`MAX_HISTORY_DEPTH`](super::MAX_HISTORY_DEPTH)
/// (the list of messages counting as the first level).
pub(crate) fn first_too_deep(messages: &[ModelMessage]) -> Option<usize> {
    messages.iter().position(|m| {
        // A message whose values all nest within what a message keeps fits (the usual case,
        // measured without a walk of the message's other fields); else it is measured whole.
        let mut deep = false;
        values(m, &mut |v| deep = deep || crate::validation::depth::too_deep(v, MAX_KEPT_VALUE_DEPTH).is_some());
        deep && too_deep(m, super::MAX_HISTORY_DEPTH - 1)
    })
}

/// How deep a value a message keeps may nest: its own levels below the history's limit (the
/// list, the message, its parts, the part, a list of contents, a media item, the value's own
/// object, one to spare), so that a message whose values nest no deeper fits.
const MAX_KEPT_VALUE_DEPTH: usize = super::MAX_HISTORY_DEPTH - 8;

/// Cuts every value of a response nested too deep for the history (only a model built in memory
/// makes them: providers' JSON stops at 128 levels) below that depth, dropping the rest without
/// recursion. Cut tool-call arguments are still past their own limit
/// ([`MAX_NESTING`](crate::validation::MAX_NESTING)), so validation answers the call with the
/// `recursion_loop` retry it gives the whole value.
pub(crate) fn bound_response(response: &mut ModelResponse) {
    let mut message = std::mem::take(response).into();
    values_mut(&mut message, &mut bound_value);
    if let ModelMessage::Response(r) = message {
        *response = r;
    }
}

/// [`bound_response`] for one tool call (as a stream event carries it).
pub(crate) fn bound_call(call: &mut super::ToolCallPart) {
    bound_value(&mut call.args);
    if let Some(details) = &mut call.provider_details {
        bound_value(details);
    }
}

/// Cuts the arrays and objects of `value` nested deeper than a message keeps, dropping them
/// without recursion.
pub(crate) fn cut_deep(value: &mut Value) {
    bound_value(value);
}

fn bound_value(value: &mut Value) {
    if matches!(value, Value::Array(_) | Value::Object(_)) {
        for loc in cut_points(value, MAX_KEPT_VALUE_DEPTH) {
            if let Some(slot) = locate(value, &loc) {
                dispose(std::mem::take(slot));
            }
        }
    }
}

/// Replaces every array or object of `value` nested deeper than a message keeps by a string of
/// its JSON text (as [`history_to_json`](super::history_to_json) writes it), written on a stack
/// grown on the heap and dropped without recursion: for values a tool returns, which the model
/// still sees whole.
pub(crate) fn flatten_deep(value: &mut Value) {
    flatten_deeper_than(value, MAX_KEPT_VALUE_DEPTH);
}

/// [`flatten_deep`] with another limit: the arrays and objects nested deeper than `max` levels
/// become strings of their JSON text.
pub(crate) fn flatten_deeper_than(value: &mut Value, max: usize) {
    if !matches!(value, Value::Array(_) | Value::Object(_)) {
        return;
    }
    for loc in cut_points(value, max) {
        let Some(slot) = locate(value, &loc) else { continue };
        let deep = std::mem::take(slot);
        let mut text = Vec::new();
        let written = deep.serialize(serde_stacker::Serializer::new(&mut serde_json::Serializer::new(&mut text)));
        dispose(deep);
        // serde_json writes UTF-8, and a `Value` always serialises.
        *slot = match (written, String::from_utf8(text)) {
            (Ok(()), Ok(text)) => Value::String(text),
            _ => Value::Null,
        };
    }
}

/// [`flatten_deep`] over every value of the items of a prompt or a tool's return.
pub(crate) fn flatten_deep_content(items: &mut Vec<UserContent>) {
    let part = super::UserPromptPart { content: UserPromptContent::Parts(std::mem::take(items)), timestamp: None };
    let mut message = ModelMessage::Request(super::ModelRequest {
        parts: vec![ModelRequestPart::UserPrompt(part)],
        ..Default::default()
    });
    values_mut(&mut message, &mut flatten_deep);
    if let ModelMessage::Request(mut r) = message
        && let Some(ModelRequestPart::UserPrompt(p)) = r.parts.pop()
        && let UserPromptContent::Parts(back) = p.content
    {
        *items = back;
    }
}

/// Drops messages whatever their depth: each value of theirs taken out and dropped without
/// recursion first.
pub(crate) fn dispose_messages(messages: Vec<ModelMessage>) {
    for mut message in messages {
        values_mut(&mut message, &mut |value| dispose(std::mem::take(value)));
    }
}

/// Calls `f` with every JSON value a message holds.
pub(crate) fn values_mut(message: &mut ModelMessage, f: &mut dyn FnMut(&mut Value)) {
    for_each_value!(message, f);
}

/// [`values_mut`], borrowed.
fn values(message: &ModelMessage, f: &mut dyn FnMut(&Value)) {
    for_each_value!(message, f);
}

/// The walk of [`values_mut`] and [`values`] (one text for both borrows). The parts are taken
/// apart field by field, without `..`, so that a field added to one of them is a compile error
/// here until it is listed.
macro_rules! for_each_value {
    ($message:expr, $f:expr) => {{
        let f = $f;
        match $message {
            ModelMessage::Request(r) => {
                let super::ModelRequest {
                    parts,
                    timestamp: _,
                    instructions: _,
                    run_id: _,
                    conversation_id: _,
                    metadata,
                } = r;
                if let Some(v) = metadata {
                    f(v);
                }
                for part in parts {
                    match part {
                        ModelRequestPart::SystemPrompt(p) => {
                            let super::SystemPromptPart {
                                content: _,
                                timestamp: _,
                                dynamic_ref: _,
                                scope: _,
                                context_id: _,
                                metadata,
                            } = p;
                            if let Some(v) = metadata {
                                f(v);
                            }
                        }
                        ModelRequestPart::UserPrompt(p) => {
                            let super::UserPromptPart { content, timestamp: _ } = p;
                            if let UserPromptContent::Parts(items) = content {
                                for item in items {
                                    match item {
                                        UserContent::Text(_) => {}
                                        UserContent::TextContent(crate::messages::TextContent {
                                            metadata: Some(v),
                                            ..
                                        }) => f(v),
                                        UserContent::TextContent(_) => {}
                                        UserContent::Media(m) => for_each_media_value!(m, f),
                                        UserContent::Other(v) => f(v),
                                    }
                                }
                            }
                        }
                        ModelRequestPart::ToolReturn(p) => {
                            let super::ToolReturnPart {
                                tool_name: _,
                                content,
                                tool_call_id: _,
                                tool_kind: _,
                                metadata,
                                timestamp: _,
                                outcome: _,
                                retry: _,
                            } = p;
                            f(content);
                            if let Some(v) = metadata {
                                f(v);
                            }
                        }
                        ModelRequestPart::RetryFeedback(p) => {
                            let super::RetryFeedbackPart { content, retry: _, timestamp: _ } = p;
                            f(content);
                        }
                        ModelRequestPart::RetryPrompt(p) => {
                            let super::RetryPromptPart { content, tool_name: _, tool_call_id: _, timestamp: _ } = p;
                            f(content);
                        }
                    }
                }
            }
            ModelMessage::Response(r) => {
                let ModelResponse {
                    parts,
                    usage: _,
                    model_name: _,
                    timestamp: _,
                    provider_name: _,
                    provider_url: _,
                    provider_details,
                    provider_response_id: _,
                    finish_reason: _,
                    run_id: _,
                    conversation_id: _,
                    metadata,
                } = r;
                for v in [provider_details, metadata].into_iter().flatten() {
                    f(v);
                }
                for part in parts {
                    match part {
                        ModelResponsePart::Text(p) => {
                            let super::TextPart { content: _, id: _, provider_name: _, provider_details, citations } =
                                p;
                            for v in [provider_details, citations].into_iter().flatten() {
                                f(v);
                            }
                        }
                        ModelResponsePart::ToolCall(p) | ModelResponsePart::NativeToolCall(p) => {
                            let super::ToolCallPart {
                                tool_name: _,
                                args,
                                tool_call_id: _,
                                tool_kind: _,
                                id: _,
                                provider_name: _,
                                provider_details,
                            } = p;
                            f(args);
                            if let Some(v) = provider_details {
                                f(v);
                            }
                        }
                        ModelResponsePart::Thinking(p) => {
                            let super::ThinkingPart {
                                content: _,
                                id: _,
                                signature: _,
                                provider_name: _,
                                provider_details,
                            } = p;
                            if let Some(v) = provider_details {
                                f(v);
                            }
                        }
                        ModelResponsePart::NativeToolReturn(p) => {
                            let super::NativeToolReturnPart {
                                tool_name: _,
                                content,
                                tool_call_id: _,
                                tool_kind: _,
                                metadata,
                                timestamp: _,
                                outcome: _,
                                provider_name: _,
                                provider_details,
                            } = p;
                            f(content);
                            for v in [metadata, provider_details].into_iter().flatten() {
                                f(v);
                            }
                        }
                        ModelResponsePart::File(p) => {
                            let super::FilePart { content, id: _, provider_name: _, provider_details } = p;
                            for_each_media_value!(content, f);
                            if let Some(v) = provider_details {
                                f(v);
                            }
                        }
                    }
                }
            }
        }
    }};
}
use for_each_value;

macro_rules! for_each_media_value {
    ($media:expr, $f:expr) => {
        match $media {
            MediaContent::Binary(b) => {
                let super::BinaryContent { data: _, media_type: _, identifier: _, vendor_metadata } = b;
                if let Some(v) = vendor_metadata {
                    $f(v);
                }
            }
            MediaContent::ImageUrl(u)
            | MediaContent::AudioUrl(u)
            | MediaContent::VideoUrl(u)
            | MediaContent::DocumentUrl(u) => {
                let super::FileUrl { url: _, media_type: _, identifier: _, force_download, vendor_metadata } = u;
                for v in [force_download, vendor_metadata].into_iter().flatten() {
                    $f(v);
                }
            }
        }
    };
}
use for_each_media_value;

/// Serialises nothing: counts how deeply serde_json would nest brackets, and fails at the
/// first past the limit.
struct Probe {
    depth: usize,
    max: usize,
}

#[derive(Debug)]
struct TooDeep;

impl std::fmt::Display for TooDeep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("nested too deeply")
    }
}

impl std::error::Error for TooDeep {}

impl ser::Error for TooDeep {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        TooDeep
    }
}

impl Probe {
    /// Opens `levels` brackets.
    fn open(&mut self, levels: usize) -> Result<&mut Self, TooDeep> {
        self.depth += levels;
        if self.depth > self.max { Err(TooDeep) } else { Ok(self) }
    }

    fn close(&mut self, levels: usize) {
        self.depth -= levels;
    }
}

macro_rules! scalars {
    ($($name:ident($ty:ty)),* $(,)?) => {
        $(fn $name(self, _: $ty) -> Result<(), TooDeep> { Ok(()) })*
    };
}

impl ser::Serializer for &mut Probe {
    type Ok = ();
    type Error = TooDeep;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    scalars!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_unit_struct(&'static str),
    );

    fn serialize_bytes(self, v: &[u8]) -> Result<(), TooDeep> {
        // serde_json writes bytes as an array of numbers.
        if v.is_empty() { Ok(()) } else { self.open(1).map(|p| p.close(1)) }
    }
    fn serialize_none(self) -> Result<(), TooDeep> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), TooDeep> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), TooDeep> {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), TooDeep> {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<(), TooDeep> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        value: &T,
    ) -> Result<(), TooDeep> {
        let probe = self.open(1)?;
        value.serialize(&mut *probe)?;
        probe.close(1);
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self, TooDeep> {
        self.open(1)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self, TooDeep> {
        self.open(1)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, TooDeep> {
        self.open(1)
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self, TooDeep> {
        self.open(2)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self, TooDeep> {
        self.open(1)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, TooDeep> {
        self.open(1)
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self, TooDeep> {
        self.open(2)
    }
    fn collect_str<T: std::fmt::Display + ?Sized>(self, _: &T) -> Result<(), TooDeep> {
        Ok(())
    }
}

macro_rules! compound {
    ($($trait:ident :: $method:ident, $levels:expr);* $(;)?) => {
        $(impl ser::$trait for &mut Probe {
            type Ok = ();
            type Error = TooDeep;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), TooDeep> {
                value.serialize(&mut **self)
            }
            fn end(self) -> Result<(), TooDeep> {
                self.close($levels);
                Ok(())
            }
        })*
    };
}

compound!(
    SerializeSeq::serialize_element, 1;
    SerializeTuple::serialize_element, 1;
    SerializeTupleStruct::serialize_field, 1;
    SerializeTupleVariant::serialize_field, 2;
);

impl ser::SerializeMap for &mut Probe {
    type Ok = ();
    type Error = TooDeep;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, _: &T) -> Result<(), TooDeep> {
        // A key is written as a string.
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), TooDeep> {
        value.serialize(&mut **self)
    }
    fn end(self) -> Result<(), TooDeep> {
        self.close(1);
        Ok(())
    }
}

macro_rules! named_fields {
    ($($trait:ident, $levels:expr);* $(;)?) => {
        $(impl ser::$trait for &mut Probe {
            type Ok = ();
            type Error = TooDeep;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, _: &'static str, value: &T) -> Result<(), TooDeep> {
                value.serialize(&mut **self)
            }
            fn end(self) -> Result<(), TooDeep> {
                self.close($levels);
                Ok(())
            }
        })*
    };
}

named_fields!(
    SerializeStruct, 1;
    SerializeStructVariant, 2;
);

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// How deeply the brackets of JSON text nest (no strings with brackets in the tests).
    fn deepest(text: &str) -> usize {
        let (mut depth, mut deepest) = (0usize, 0);
        for b in text.bytes() {
            match b {
                b'[' | b'{' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                b']' | b'}' => depth -= 1,
                _ => {}
            }
        }
        deepest
    }

    #[test]
    fn a_message_measures_as_it_is_written() {
        let args = json!({"a": [[1, {"b": {}}]]});
        let messages: Vec<ModelMessage> = vec![
            super::super::ModelRequest::user_prompt("hi").into(),
            ModelResponse::new(vec![ModelResponsePart::ToolCall(super::super::ToolCallPart::new("t", args, "c"))])
                .into(),
        ];
        let deepest = deepest(&serde_json::to_string(&messages).unwrap());
        assert_eq!(deepest, 9);
        assert!(!too_deep(&messages, deepest));
        assert!(too_deep(&messages, deepest - 1));
    }

    #[test]
    fn the_probe_counts_brackets_as_serde_json_writes_them() {
        let values = [
            json!(1),
            json!([]),
            json!({}),
            json!([[1], {"a": [2, {"b": []}]}]),
            json!({"a": {"b": {"c": {"d": [[[]]]}}}}),
        ];
        for v in values {
            let deepest = deepest(&serde_json::to_string(&v).unwrap());
            assert!(!too_deep(&v, deepest), "{v}");
            assert!(deepest == 0 || too_deep(&v, deepest - 1), "{v}");
        }
    }
}
