//! Multimodal content of user prompts and tool returns.

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha1::{Digest, Sha1};

/// Binary data sent to the model (an image, audio clip, document...), stored base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BinaryContent {
    /// The data, base64-encoded (standard alphabet, padded).
    pub data: String,
    /// The media type, e.g. `image/png`.
    pub media_type: String,
    /// A short identifier: the first 6 hex digits of the SHA-1 of the data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identifier: Option<String>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor_metadata: Option<Box<Value>>,
}

impl BinaryContent {
    /// Wraps raw bytes.
    pub fn new(data: impl AsRef<[u8]>, media_type: impl Into<String>) -> Self {
        let bytes = data.as_ref();
        let digest = Sha1::digest(bytes);
        let identifier: String = digest.iter().take(3).map(|b| format!("{b:02x}")).collect();
        BinaryContent {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            media_type: media_type.into(),
            identifier: Some(identifier),
            vendor_metadata: None,
        }
    }

    /// Wraps data that is already base64-encoded, or `None` when it is not valid base64.
    pub fn from_base64(data: impl Into<String>, media_type: impl Into<String>) -> Option<Self> {
        let data = data.into();
        let bytes = base64::engine::general_purpose::STANDARD.decode(&data).ok()?;
        Some(BinaryContent { data, ..BinaryContent::new(bytes, media_type) })
    }

    /// The decoded bytes, or `None` when the stored data is not valid base64.
    pub fn bytes(&self) -> Option<Vec<u8>> {
        base64::engine::general_purpose::STANDARD.decode(&self.data).ok()
    }
}

/// A reference to a file by URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FileUrl {
    /// The URL.
    pub url: String,
    /// The media type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// An identifier for the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identifier: Option<String>,
    /// Whether the file must be downloaded and sent inline rather than by URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_download: Option<Box<Value>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor_metadata: Option<Box<Value>>,
}

impl FileUrl {
    /// A URL without a media type.
    pub fn new(url: impl Into<String>) -> Self {
        FileUrl { url: url.into(), media_type: None, identifier: None, force_download: None, vendor_metadata: None }
    }
}

/// Media by URL or inline, as Pydantic AI's `ImageUrl`, `AudioUrl`, `VideoUrl`, `DocumentUrl`
/// and `BinaryContent` make them.
///
/// ```
/// use toolsmith::messages::{MediaContent, UserContent, UserPromptContent};
///
/// let prompt = UserPromptContent::Parts(vec![
///     UserContent::text("What is in this picture, and what does the report say about it?"),
///     MediaContent::image_url("https://example.com/cat.png").into(),
///     MediaContent::document_url("https://example.com/report.pdf").with_media_type("application/pdf").into(),
///     MediaContent::binary(b"%PDF-1.7 ...", "application/pdf").into(),
/// ]);
/// # let _ = prompt;
/// ```
impl MediaContent {
    /// An image by URL.
    pub fn image_url(url: impl Into<String>) -> Self {
        MediaContent::ImageUrl(FileUrl::new(url))
    }

    /// An audio clip by URL.
    pub fn audio_url(url: impl Into<String>) -> Self {
        MediaContent::AudioUrl(FileUrl::new(url))
    }

    /// A video by URL.
    pub fn video_url(url: impl Into<String>) -> Self {
        MediaContent::VideoUrl(FileUrl::new(url))
    }

    /// A document (PDF, text...) by URL.
    pub fn document_url(url: impl Into<String>) -> Self {
        MediaContent::DocumentUrl(FileUrl::new(url))
    }

    /// Inline bytes of a media type (`image/png`, `application/pdf`...).
    pub fn binary(data: impl AsRef<[u8]>, media_type: impl Into<String>) -> Self {
        MediaContent::Binary(BinaryContent::new(data, media_type))
    }

    /// This media by URL with its media type given (instead of guessed from the URL); inline
    /// bytes keep theirs.
    pub fn with_media_type(mut self, media_type: impl Into<String>) -> Self {
        match &mut self {
            MediaContent::ImageUrl(u)
            | MediaContent::AudioUrl(u)
            | MediaContent::VideoUrl(u)
            | MediaContent::DocumentUrl(u) => {
                u.media_type = Some(media_type.into());
            }
            MediaContent::Binary(_) => {}
        }
        self
    }
}

/// Non-text content, tagged by `kind` as in Pydantic AI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind")]
#[non_exhaustive]
pub enum MediaContent {
    /// Inline binary data.
    #[serde(rename = "binary")]
    Binary(BinaryContent),
    /// An image by URL.
    #[serde(rename = "image-url")]
    ImageUrl(FileUrl),
    /// An audio clip by URL.
    #[serde(rename = "audio-url")]
    AudioUrl(FileUrl),
    /// A video by URL.
    #[serde(rename = "video-url")]
    VideoUrl(FileUrl),
    /// A document by URL.
    #[serde(rename = "document-url")]
    DocumentUrl(FileUrl),
}

/// One item of a multimodal prompt: text or media.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum UserContent {
    /// Text.
    Text(String),
    /// Media.
    Media(MediaContent),
    /// Text with metadata kept in the history and not sent to the model (Pydantic AI's
    /// `TextContent`, which marks where the text came from).
    TextContent(TextContent),
    /// Content of a kind this version does not know, kept as it is.
    Other(Value),
}

/// Read through a JSON value, so that a key written twice counts once (the last, as Python
/// reads it) and media with a repeated key are still media, the same on every read.
impl<'de> Deserialize<'de> for UserContent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(deserializer)? {
            Value::String(text) => UserContent::Text(text),
            value if value.get("kind").and_then(Value::as_str) == Some("text-content") => {
                match TextContent::deserialize(&value) {
                    Ok(text) => UserContent::TextContent(text),
                    Err(_) => UserContent::Other(value),
                }
            }
            value => match MediaContent::deserialize(&value) {
                Ok(media) => UserContent::Media(media),
                Err(_) => UserContent::Other(value),
            },
        })
    }
}

/// Text with metadata that stays in the history and is not sent to the model: Pydantic AI's
/// `TextContent` (`{"content": ..., "metadata": ..., "kind": "text-content"}`). Models are sent
/// its text as they are sent a text item.
///
/// ```
/// use toolsmith::messages::{TextContent, UserContent};
///
/// let item = UserContent::TextContent(TextContent::new("report ready").with_metadata(serde_json::json!({"origin": "cron"})));
/// assert_eq!(item.as_text(), Some("report ready"));
/// assert_eq!(serde_json::to_value(&item).unwrap()["kind"], "text-content");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TextContent {
    /// The text the model is sent.
    pub content: String,
    /// Metadata for the application (provenance, ids), not sent to the model.
    #[serde(default)]
    pub metadata: Option<Value>,
    #[serde(default)]
    kind: TextContentKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
enum TextContentKind {
    #[default]
    #[serde(rename = "text-content")]
    TextContent,
}

impl TextContent {
    /// Text without metadata.
    pub fn new(content: impl Into<String>) -> Self {
        TextContent { content: content.into(), metadata: None, kind: TextContentKind::TextContent }
    }

    /// The same text with `metadata`.
    pub fn with_metadata(mut self, metadata: Value) -> Self {
        self.metadata = Some(metadata);
        self
    }
}

impl UserContent {
    /// The text of a text item (plain, or with metadata); `None` for media and other content.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            UserContent::Text(s) => Some(s),
            UserContent::TextContent(t) => Some(&t.content),
            _ => None,
        }
    }

    /// A text item.
    pub fn text(text: impl Into<String>) -> Self {
        UserContent::Text(text.into())
    }
}

impl From<BinaryContent> for MediaContent {
    fn from(v: BinaryContent) -> Self {
        MediaContent::Binary(v)
    }
}

impl From<MediaContent> for UserContent {
    fn from(v: MediaContent) -> Self {
        UserContent::Media(v)
    }
}

impl From<BinaryContent> for UserContent {
    fn from(v: BinaryContent) -> Self {
        UserContent::Media(MediaContent::Binary(v))
    }
}

impl From<String> for UserContent {
    fn from(v: String) -> Self {
        UserContent::Text(v)
    }
}

impl From<&str> for UserContent {
    fn from(v: &str) -> Self {
        UserContent::Text(v.to_string())
    }
}

/// The content of a user prompt: a string, or a list of text and media items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserPromptContent {
    /// Plain text.
    Text(String),
    /// Text and media.
    Parts(Vec<UserContent>),
}

impl From<String> for UserPromptContent {
    fn from(v: String) -> Self {
        UserPromptContent::Text(v)
    }
}

impl From<&str> for UserPromptContent {
    fn from(v: &str) -> Self {
        UserPromptContent::Text(v.to_string())
    }
}

impl From<Vec<UserContent>> for UserPromptContent {
    fn from(v: Vec<UserContent>) -> Self {
        UserPromptContent::Parts(v)
    }
}

impl UserPromptContent {
    /// The text of the prompt (text items joined with newlines).
    pub fn text(&self) -> String {
        match self {
            UserPromptContent::Text(s) => s.clone(),
            UserPromptContent::Parts(parts) => {
                parts.iter().filter_map(UserContent::as_text).collect::<Vec<_>>().join("\n")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_identifier_is_sha1_prefix() {
        let b = BinaryContent::new(b"\x89PNG", "image/png");
        assert_eq!(b.data, "iVBORw==");
        assert_eq!(b.identifier.as_deref(), Some("4effda"));
        assert_eq!(b.bytes().unwrap(), b"\x89PNG");
    }

    #[test]
    fn media_with_a_repeated_key_is_media_on_every_read() {
        let text = r#"["hi", {"data": "iVBORw==", "media_type": "x", "media_type": "image/png", "kind": "binary"}, {"kind": "new-thing", "a": 1}]"#;
        let first: Vec<UserContent> = serde_json::from_str(text).unwrap();
        assert!(matches!(&first[1], UserContent::Media(MediaContent::Binary(b)) if b.media_type == "image/png"));
        assert!(matches!(&first[2], UserContent::Other(_)));
        let again: Vec<UserContent> = serde_json::from_str(&serde_json::to_string(&first).unwrap()).unwrap();
        assert_eq!(first, again);
    }
}

#[cfg(test)]
mod constructor_tests {
    use super::*;

    #[test]
    fn media_constructors_write_pydantic_ais_json() {
        let doc = MediaContent::document_url("https://example.com/r.pdf").with_media_type("application/pdf");
        assert_eq!(
            serde_json::to_value(&doc).unwrap(),
            serde_json::json!({"kind": "document-url", "url": "https://example.com/r.pdf", "media_type": "application/pdf"})
        );
        for (media, kind) in [
            (MediaContent::image_url("u"), "image-url"),
            (MediaContent::audio_url("u"), "audio-url"),
            (MediaContent::video_url("u"), "video-url"),
            (MediaContent::binary(b"x", "text/plain").with_media_type("ignored"), "binary"),
        ] {
            let v = serde_json::to_value(&media).unwrap();
            assert_eq!(v["kind"], kind);
            assert_eq!(serde_json::from_value::<MediaContent>(v).unwrap(), media);
        }
    }
}
