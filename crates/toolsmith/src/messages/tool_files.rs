//! Files a tool returned as its value (an image, a document, ... as [`MediaContent`]'s JSON,
//! alone or in a list), as the providers send them: in the tool result where the API takes
//! media there, else as `See file <id>.` in the result's text and the file itself in a user
//! message after it, framed so that the model can tell it from the user's own uploads.

use serde_json::Value;
use sha1::{Digest, Sha1};

use super::{MediaContent, ToolOutcome, ToolReturnPart, UserContent};

/// One item of a tool's value: text (a string as it is, other JSON compact) or a file.
#[cfg_attr(
    not(any(feature = "openai", feature = "anthropic", feature = "gemini", feature = "bedrock")),
    allow(dead_code)
)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ReturnItem {
    Text(String),
    File(MediaContent),
}

/// The media a JSON value holds, if it is media's JSON (a `kind` of Pydantic AI's).
fn as_media(value: &Value) -> Option<MediaContent> {
    let kind = value.get("kind")?.as_str()?;
    if !matches!(kind, "binary" | "image-url" | "audio-url" | "video-url" | "document-url") {
        return None;
    }
    MediaContent::deserialize_value(value)
}

impl MediaContent {
    fn deserialize_value(value: &Value) -> Option<MediaContent> {
        serde::Deserialize::deserialize(value).ok()
    }

    /// The name the model knows the file by (`See file <id>.`): the one it was given, else the
    /// first 6 hex digits of the SHA-1 of its data or its URL (Pydantic AI's identifiers).
    pub fn identifier(&self) -> String {
        let (given, source): (Option<&String>, &[u8]) = match self {
            MediaContent::Binary(b) => (b.identifier.as_ref(), b.data.as_bytes()),
            MediaContent::ImageUrl(u)
            | MediaContent::AudioUrl(u)
            | MediaContent::VideoUrl(u)
            | MediaContent::DocumentUrl(u) => (u.identifier.as_ref(), u.url.as_bytes()),
        };
        if let Some(id) = given {
            return id.clone();
        }
        // Binary data is hashed decoded, as its identifier is made.
        let bytes = match self {
            MediaContent::Binary(b) => b.bytes().unwrap_or_else(|| source.to_vec()),
            _ => source.to_vec(),
        };
        Sha1::digest(&bytes).iter().take(3).map(|b| format!("{b:02x}")).collect()
    }
}

impl ToolReturnPart {
    /// The files (images, audio, video, documents) the tool returned as its value, alone or
    /// in a list, in order. A provider that takes media in tool results sends them there;
    /// the others send them in a user message after the results.
    pub fn files(&self) -> Vec<MediaContent> {
        match &self.content {
            Value::Array(items) => items.iter().filter_map(as_media).collect(),
            other => as_media(other).into_iter().collect(),
        }
    }

    /// The value's items (and whether it was a list), when a successful return holds a file;
    /// `None` otherwise (the value is sent as it is).
    #[cfg_attr(
        not(any(feature = "openai", feature = "anthropic", feature = "gemini", feature = "bedrock")),
        allow(dead_code)
    )]
    pub(crate) fn items(&self) -> Option<(Vec<ReturnItem>, bool)> {
        if self.outcome != ToolOutcome::Success {
            return None;
        }
        let item = |v: &Value| match as_media(v) {
            Some(m) => ReturnItem::File(m),
            None => ReturnItem::Text(match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
        };
        let (items, was_list): (Vec<ReturnItem>, bool) = match &self.content {
            Value::Array(values) => (values.iter().map(item).collect(), true),
            other => (vec![item(other)], false),
        };
        items.iter().any(|i| matches!(i, ReturnItem::File(_))).then_some((items, was_list))
    }
}

/// The history with the files tool returns hold that the provider cannot take in a tool result
/// (`keeps` says which it can) moved out: each named `See file <id>.` in the result, and sent
/// framed in a user prompt at the end of the request (see [`ToolReturnPart::text_and_files`]).
/// Borrowed as it is when there is nothing to move.
#[cfg_attr(not(any(feature = "openai", feature = "gemini")), allow(dead_code))]
pub(crate) fn move_tool_files<'a>(
    messages: &'a [super::ModelMessage],
    keeps: impl Fn(&MediaContent) -> bool,
) -> std::borrow::Cow<'a, [super::ModelMessage]> {
    use super::{ModelMessage, ModelRequestPart, UserPromptContent, UserPromptPart};
    let moves = |p: &ModelRequestPart| match p {
        ModelRequestPart::ToolReturn(r) => {
            r.items().is_some_and(|(items, _)| items.iter().any(|i| matches!(i, ReturnItem::File(m) if !keeps(m))))
        }
        _ => false,
    };
    if !messages.iter().any(|m| m.as_request().is_some_and(|r| r.parts.iter().any(moves))) {
        return std::borrow::Cow::Borrowed(messages);
    }
    let mut out = messages.to_vec();
    for message in &mut out {
        let ModelMessage::Request(request) = message else { continue };
        let mut moved: Vec<UserContent> = Vec::new();
        for part in &mut request.parts {
            let ModelRequestPart::ToolReturn(r) = part else { continue };
            let Some((items, was_list)) = r.items() else { continue };
            if !items.iter().any(|i| matches!(i, ReturnItem::File(m) if !keeps(m))) {
                continue;
            }
            let mut kept: Vec<Value> = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    ReturnItem::File(m) if keeps(&m) => kept.push(serde_json::to_value(&m).unwrap_or_default()),
                    ReturnItem::File(m) => {
                        let id = m.identifier();
                        kept.push(Value::String(format!("See file {id}.")));
                        moved.push(UserContent::Text(format!(
                            "<pyai:tool_result tool_name=\"{}\" tool_call_id=\"{}\" file_id=\"{}\">",
                            crate::pyjson::html_escape(&r.tool_name),
                            crate::pyjson::html_escape(&r.tool_call_id),
                            crate::pyjson::html_escape(&id)
                        )));
                        moved.push(UserContent::Media(m));
                        moved.push(UserContent::Text("</pyai:tool_result>".into()));
                    }
                    ReturnItem::Text(t) => kept.push(Value::String(t)),
                }
            }
            let has_file = kept.iter().any(|v| as_media(v).is_some());
            r.content = match (was_list, has_file) {
                // Text only now: as the text a text channel shows.
                (true, false) => Value::String(Value::Array(kept).to_string()),
                (true, true) => Value::Array(kept),
                (false, _) => kept.pop().unwrap_or_default(),
            };
        }
        if !moved.is_empty() {
            request.parts.push(ModelRequestPart::UserPrompt(UserPromptPart::new(UserPromptContent::Parts(moved))));
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{BinaryContent, FileUrl, ModelMessage, ModelRequest, ModelRequestPart, UserPromptContent};
    use serde_json::json;

    fn image() -> MediaContent {
        MediaContent::Binary(BinaryContent::new(b"png", "image/png"))
    }

    fn moved(content: Value, keeps: impl Fn(&MediaContent) -> bool) -> (Value, Option<Vec<UserContent>>) {
        let history = vec![ModelMessage::Request(ModelRequest::new(vec![ModelRequestPart::ToolReturn(
            ToolReturnPart::success("snap", content, "c<1>"),
        )]))];
        let out = move_tool_files(&history, keeps);
        let request = out[0].as_request().unwrap();
        let ModelRequestPart::ToolReturn(r) = &request.parts[0] else { panic!() };
        let files = request.parts.get(1).map(|p| match p {
            ModelRequestPart::UserPrompt(u) => match &u.content {
                UserPromptContent::Parts(items) => items.clone(),
                UserPromptContent::Text(_) => panic!(),
            },
            _ => panic!(),
        });
        (r.content.clone(), files)
    }

    #[test]
    fn a_file_the_provider_cannot_take_is_named_in_the_result_and_sent_framed() {
        let (content, files) = moved(serde_json::to_value(image()).unwrap(), |_| false);
        let id = image().identifier();
        assert_eq!(content, json!(format!("See file {id}.")));
        assert_eq!(
            files.unwrap(),
            [
                UserContent::Text(format!(
                    "<pyai:tool_result tool_name=\"snap\" tool_call_id=\"c&lt;1&gt;\" file_id=\"{id}\">"
                )),
                UserContent::Media(image()),
                UserContent::Text("</pyai:tool_result>".into()),
            ]
        );
        // A file it takes stays.
        let (content, files) = moved(serde_json::to_value(image()).unwrap(), |_| true);
        assert_eq!(content, serde_json::to_value(image()).unwrap());
        assert!(files.is_none());
    }

    #[test]
    fn a_list_keeps_its_other_items_and_plain_values_are_not_touched() {
        let url = MediaContent::DocumentUrl(FileUrl::new("https://example.com/a.pdf"));
        let content = json!(["caption", serde_json::to_value(&url).unwrap(), serde_json::to_value(image()).unwrap()]);
        // The document moves, the image stays.
        let (kept, files) = moved(content, |m| matches!(m, MediaContent::Binary(_)));
        let id = url.identifier();
        assert_eq!(id.len(), 6);
        assert_eq!(kept, json!(["caption", format!("See file {id}."), serde_json::to_value(image()).unwrap()]));
        assert_eq!(files.unwrap().len(), 3);
        let part = ToolReturnPart::success("t", json!({"kind": "chart", "x": 1}), "c");
        assert!(part.items().is_none() && part.files().is_empty());
        assert!(ToolReturnPart::success("t", json!("text"), "c").items().is_none());
    }
}
