//! The message history: requests to the model and its responses.
//!
//! The JSON shape is Pydantic AI's message-history shape (`kind` and `part_kind` tags, the same
//! field names), so a history written by Pydantic AI loads here and the other way round. Fields
//! this version does not know are accepted and ignored.
//!
//! ```
//! use toolsmith::messages::{ModelMessage, parse_history};
//!
//! let json = r#"[{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi"}]},
//!               {"kind": "response", "parts": [{"part_kind": "text", "content": "hello"}]}]"#;
//! let history: Vec<ModelMessage> = parse_history(json)?;
//! assert_eq!(history.len(), 2);
//! # Ok::<(), toolsmith::messages::HistoryError>(())
//! ```

mod content;
mod depth;
mod json;
mod repair;
mod retry;
mod tool_files;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

pub use content::{BinaryContent, FileUrl, MediaContent, TextContent, UserContent, UserPromptContent};
#[cfg(feature = "mcp-server")]
pub(crate) use depth::flatten_deeper_than;
pub(crate) use depth::{
    bound_call, bound_response, cut_deep, dispose_messages, first_too_deep, flatten_deep, flatten_deep_content,
};
pub use json::MAX_HISTORY_DEPTH;
pub use repair::{INTERRUPTED_TOOL_RETURN_CONTENT, SYNTHESIZED_TOOL_RETURN_METADATA_KEY, repair_messages};
pub(crate) use repair::{SoundPrefix, result_id, sendable as sendable_history, sendable_known};
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "bedrock",
    feature = "mcp-server"
))]
pub(crate) use retry::retry_text;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini", feature = "bedrock"))]
pub(crate) use tool_files::ReturnItem;
#[cfg(any(feature = "openai", feature = "gemini"))]
pub(crate) use tool_files::move_tool_files;

use crate::usage::RequestUsage;

/// Timestamps in messages.
pub type Timestamp = DateTime<Utc>;

fn now() -> Option<Timestamp> {
    Some(crate::durable::now())
}

/// A message: a request to the model or a response from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum ModelMessage {
    /// Sent to the model.
    #[serde(rename = "request")]
    Request(ModelRequest),
    /// Received from the model.
    #[serde(rename = "response")]
    Response(ModelResponse),
}

impl ModelMessage {
    /// The request, if this is one.
    pub fn as_request(&self) -> Option<&ModelRequest> {
        match self {
            ModelMessage::Request(r) => Some(r),
            ModelMessage::Response(_) => None,
        }
    }

    /// The response, if this is one.
    pub fn as_response(&self) -> Option<&ModelResponse> {
        match self {
            ModelMessage::Response(r) => Some(r),
            ModelMessage::Request(_) => None,
        }
    }
}

impl From<ModelRequest> for ModelMessage {
    fn from(v: ModelRequest) -> Self {
        ModelMessage::Request(v)
    }
}

impl From<ModelResponse> for ModelMessage {
    fn from(v: ModelResponse) -> Self {
        ModelMessage::Response(v)
    }
}

/// A request to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[non_exhaustive]
pub struct ModelRequest {
    /// The parts of the request.
    pub parts: Vec<ModelRequestPart>,
    /// When the request was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
    /// Instructions sent with this request (not repeated in later requests' history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The run that made the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<Arc<str>>,
    /// The conversation the request belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<Arc<str>>,
    /// Application metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Box<Value>>,
}

impl ModelRequest {
    /// A request with the given parts, stamped now.
    pub fn new(parts: Vec<ModelRequestPart>) -> Self {
        ModelRequest { parts, timestamp: now(), ..Default::default() }
    }

    /// A request with one user prompt.
    pub fn user_prompt(content: impl Into<UserPromptContent>) -> Self {
        ModelRequest::new(vec![ModelRequestPart::UserPrompt(UserPromptPart::new(content))])
    }
}

/// A response from the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[non_exhaustive]
pub struct ModelResponse {
    /// The parts of the response.
    pub parts: Vec<ModelResponsePart>,
    /// Token usage of this response.
    #[serde(default)]
    pub usage: RequestUsage,
    /// The model that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<Arc<str>>,
    /// When the response was received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
    /// The provider that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_name: Option<Arc<str>>,
    /// The provider's base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_url: Option<Arc<str>>,
    /// Provider-specific details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_details: Option<Box<Value>>,
    /// The provider's id for the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_response_id: Option<Arc<str>>,
    /// Why the model stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<Arc<str>>,
    /// The run the response belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<Arc<str>>,
    /// The conversation the response belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<Arc<str>>,
    /// Application metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Box<Value>>,
}

impl ModelResponse {
    /// A response with the given parts, stamped now.
    pub fn new(parts: Vec<ModelResponsePart>) -> Self {
        ModelResponse { parts, timestamp: now(), ..Default::default() }
    }

    /// A response with one text part.
    pub fn text(text: impl Into<String>) -> Self {
        ModelResponse::new(vec![ModelResponsePart::Text(TextPart::new(text))])
    }

    /// The tool calls of the response, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCallPart> {
        self.parts.iter().filter_map(|p| match p {
            ModelResponsePart::ToolCall(c) => Some(c),
            _ => None,
        })
    }

    /// The text of the response's text parts, joined.
    pub fn text_content(&self) -> Option<String> {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                ModelResponsePart::Text(t) => Some(t.content.as_str()),
                _ => None,
            })
            .collect();
        if texts.is_empty() { None } else { Some(texts.concat()) }
    }
}

/// A part of a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "part_kind")]
#[non_exhaustive]
pub enum ModelRequestPart {
    /// A system prompt.
    #[serde(rename = "system-prompt")]
    SystemPrompt(SystemPromptPart),
    /// A user prompt.
    #[serde(rename = "user-prompt")]
    UserPrompt(UserPromptPart),
    /// The result of a tool call (success, retry, denial or failure).
    #[serde(rename = "tool-return")]
    ToolReturn(ToolReturnPart),
    /// Feedback on an output that was not a tool call (e.g. text that failed validation).
    #[serde(rename = "retry-feedback")]
    RetryFeedback(RetryFeedbackPart),
    /// A retry prompt in the older history format; read and kept as it is.
    #[serde(rename = "retry-prompt")]
    RetryPrompt(RetryPromptPart),
}

/// A part of a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "part_kind")]
#[non_exhaustive]
pub enum ModelResponsePart {
    /// Text.
    #[serde(rename = "text")]
    Text(TextPart),
    /// A tool call.
    #[serde(rename = "tool-call")]
    ToolCall(ToolCallPart),
    /// The model's reasoning.
    #[serde(rename = "thinking")]
    Thinking(ThinkingPart),
    /// A call the provider made to one of its own tools (a [native tool](crate::native)), which
    /// the agent does not execute (Pydantic AI's `NativeToolCallPart`).
    #[serde(rename = "builtin-tool-call")]
    NativeToolCall(ToolCallPart),
    /// The result of a native tool's call, produced by the provider.
    #[serde(rename = "builtin-tool-return")]
    NativeToolReturn(NativeToolReturnPart),
    /// A file the model produced (e.g. a generated image).
    #[serde(rename = "file")]
    File(FilePart),
}

/// A system prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SystemPromptPart {
    /// The prompt.
    pub content: String,
    /// When it was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
    /// The dynamic system prompt function that produced it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_ref: Option<String>,
    /// Where the prompt applies (`conversation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// A context id, when the prompt belongs to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Box<Value>>,
}

impl SystemPromptPart {
    /// A system prompt for the whole conversation.
    pub fn new(content: impl Into<String>) -> Self {
        SystemPromptPart {
            content: content.into(),
            timestamp: now(),
            dynamic_ref: None,
            scope: Some("conversation".into()),
            context_id: None,
            metadata: None,
        }
    }
}

/// A user prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UserPromptPart {
    /// Text, or text and media.
    pub content: UserPromptContent,
    /// When it was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

impl UserPromptPart {
    /// A user prompt, stamped now.
    pub fn new(content: impl Into<UserPromptContent>) -> Self {
        UserPromptPart { content: content.into(), timestamp: now() }
    }
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ToolOutcome {
    /// The tool returned a value.
    #[default]
    Success,
    /// The model is asked to try again.
    Retried,
    /// The call was denied (by a human or a policy).
    Denied,
    /// The call failed.
    Failed,
    /// The call never got a result (its run was interrupted); the return was made up.
    Interrupted,
}

/// Why a retry was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RetryCause {
    /// The tool (or a hook, or a timeout) raised `ModelRetry`.
    ModelRetry,
    /// The arguments or the output failed validation.
    ValidationError,
    /// The model called a tool that does not exist.
    UnknownTool,
    /// The model called a tool that exists but is not available now.
    UnavailableTool,
    /// The response held nothing usable as output (no text and no tool call).
    NoOutput,
}

/// Retry bookkeeping on a retried tool return or retry feedback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RetryInfo {
    /// Why.
    pub cause: RetryCause,
    /// Which attempt this was (1 for the first failure); absent for a retry supplied from
    /// outside the run (a deferred call's result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// The budget, when the retry was counted against one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
}

impl RetryInfo {
    /// Retry info for a counted attempt.
    pub fn new(cause: RetryCause, attempt: u32, max_retries: u32) -> Self {
        RetryInfo { cause, attempt: Some(attempt), max_retries: Some(max_retries) }
    }

    /// Retry info without a count (a retry supplied from outside the run).
    pub fn uncounted(cause: RetryCause) -> Self {
        RetryInfo { cause, attempt: None, max_retries: None }
    }
}

/// The result of a tool call, sent back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolReturnPart {
    /// The tool's name.
    pub tool_name: String,
    /// The tool's answer (or the retry message / validation errors).
    #[serde(default)]
    pub content: Value,
    /// The id of the call this answers.
    pub tool_call_id: String,
    /// A special kind of tool (e.g. `tool-search`), when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_kind: Option<String>,
    /// Metadata for the application, not sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Box<Value>>,
    /// When the result was produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
    /// How the call ended.
    #[serde(default)]
    pub outcome: ToolOutcome,
    /// Retry details for a retried call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryInfo>,
}

impl ToolReturnPart {
    /// A successful return.
    pub fn success(tool_name: impl Into<String>, content: Value, tool_call_id: impl Into<String>) -> Self {
        ToolReturnPart { timestamp: now(), ..Self::unstamped(tool_name, content, tool_call_id) }
    }

    /// [`ToolReturnPart::success`] without a timestamp (for the caller to stamp).
    pub(crate) fn unstamped(tool_name: impl Into<String>, content: Value, tool_call_id: impl Into<String>) -> Self {
        ToolReturnPart {
            tool_name: tool_name.into(),
            content,
            tool_call_id: tool_call_id.into(),
            tool_kind: None,
            metadata: None,
            timestamp: None,
            outcome: ToolOutcome::Success,
            retry: None,
        }
    }

    /// A retried call: `content` is the message or the list of errors.
    pub fn retried(
        tool_name: impl Into<String>,
        content: Value,
        tool_call_id: impl Into<String>,
        retry: RetryInfo,
    ) -> Self {
        ToolReturnPart {
            outcome: ToolOutcome::Retried,
            retry: Some(retry),
            ..Self::success(tool_name, content, tool_call_id)
        }
    }

    /// The content as text, as a model would be shown it.
    pub fn content_text(&self) -> String {
        match &self.content {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

/// Feedback on a response that was not a tool call (text that failed output validation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RetryFeedbackPart {
    /// The message or the list of validation errors.
    pub content: Value,
    /// Retry details.
    pub retry: RetryInfo,
    /// When it was produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

impl RetryFeedbackPart {
    /// Feedback with content and retry details.
    pub fn new(content: Value, retry: RetryInfo) -> Self {
        RetryFeedbackPart { content, retry, timestamp: now() }
    }
}

/// A retry prompt in the older history format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RetryPromptPart {
    /// The message or the list of validation errors.
    pub content: Value,
    /// The tool, when the retry is for a tool call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The call id, when the retry is for a tool call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// When it was produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

/// Text from the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TextPart {
    /// The text.
    pub content: String,
    /// The provider's id for the part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The provider that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_name: Option<String>,
    /// Provider-specific details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_details: Option<Box<Value>>,
    /// Citations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citations: Option<Box<Value>>,
}

impl TextPart {
    /// A text part.
    pub fn new(content: impl Into<String>) -> Self {
        TextPart { content: content.into(), id: None, provider_name: None, provider_details: None, citations: None }
    }
}

/// The model's reasoning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ThinkingPart {
    /// The reasoning text.
    pub content: String,
    /// The provider's id for the part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// A signature that must be sent back unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The provider that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_name: Option<String>,
    /// Provider-specific details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_details: Option<Box<Value>>,
}

impl ThinkingPart {
    /// A thinking part.
    pub fn new(content: impl Into<String>) -> Self {
        ThinkingPart { content: content.into(), id: None, signature: None, provider_name: None, provider_details: None }
    }
}

/// The result of a native tool's call, run by the model's provider (Pydantic AI's
/// `NativeToolReturnPart`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NativeToolReturnPart {
    /// The native tool's kind (`web_search`, `code_execution`, ..., or `mcp_server:<id>`).
    pub tool_name: String,
    /// The result, as the provider gave it.
    #[serde(default)]
    pub content: Value,
    /// The id of the call this answers.
    pub tool_call_id: String,
    /// A special kind of tool, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_kind: Option<String>,
    /// Metadata for the application, not sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Box<Value>>,
    /// When the result was received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
    /// How the call ended.
    #[serde(default)]
    pub outcome: ToolOutcome,
    /// The provider that ran the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_name: Option<String>,
    /// Provider-specific details needed to send the result back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_details: Option<Box<Value>>,
}

impl NativeToolReturnPart {
    /// A result of `provider`'s tool `tool_name` for the call `tool_call_id`.
    pub fn new(
        tool_name: impl Into<String>,
        content: Value,
        tool_call_id: impl Into<String>,
        provider: impl Into<String>,
    ) -> Self {
        NativeToolReturnPart {
            tool_name: tool_name.into(),
            content,
            tool_call_id: tool_call_id.into(),
            tool_kind: None,
            metadata: None,
            timestamp: now(),
            outcome: ToolOutcome::Success,
            provider_name: Some(provider.into()),
            provider_details: None,
        }
    }
}

/// A file the model produced, such as an image from a native image-generation tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FilePart {
    /// The file.
    pub content: MediaContent,
    /// The provider's id for the part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The provider that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_name: Option<String>,
    /// Provider-specific details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_details: Option<Box<Value>>,
}

impl FilePart {
    /// A file part holding `content`.
    pub fn new(content: impl Into<MediaContent>) -> Self {
        FilePart { content: content.into(), id: None, provider_name: None, provider_details: None }
    }
}

/// A call to a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolCallPart {
    /// The tool's name.
    pub tool_name: String,
    /// The arguments: a JSON object, or a raw JSON string as some providers stream them.
    #[serde(default)]
    pub args: Value,
    /// The call's id.
    pub tool_call_id: String,
    /// A special kind of tool (e.g. `tool-search`), when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_kind: Option<String>,
    /// The provider's id for the part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The provider that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_name: Option<String>,
    /// Provider-specific details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_details: Option<Box<Value>>,
}

impl ToolCallPart {
    /// A call with arguments and an id.
    pub fn new(tool_name: impl Into<String>, args: Value, tool_call_id: impl Into<String>) -> Self {
        ToolCallPart {
            tool_name: tool_name.into(),
            args,
            tool_call_id: tool_call_id.into(),
            tool_kind: None,
            id: None,
            provider_name: None,
            provider_details: None,
        }
    }

    /// A call `provider` made to its native tool `tool_name` (see [`ModelResponsePart::NativeToolCall`]).
    pub fn native(
        tool_name: impl Into<String>,
        args: Value,
        tool_call_id: impl Into<String>,
        provider: impl Into<String>,
    ) -> Self {
        ToolCallPart { provider_name: Some(provider.into()), ..ToolCallPart::new(tool_name, args, tool_call_id) }
    }

    /// A call with a generated id (`pyd_ai_` followed by 32 hex digits, as Pydantic AI makes them).
    pub fn with_generated_id(tool_name: impl Into<String>, args: Value) -> Self {
        ToolCallPart::new(tool_name, args, generate_tool_call_id())
    }

    /// The arguments as a JSON object: a raw string is parsed (empty means `{}`).
    pub fn args_as_object(&self) -> Result<serde_json::Map<String, Value>, crate::validation::ErrorDetail> {
        let value = match &self.args {
            Value::String(raw) => crate::validation::parse_json_args(raw)?,
            Value::Null => Value::Object(Default::default()),
            other => other.clone(),
        };
        match value {
            Value::Object(m) => Ok(m),
            other => Err(crate::validation::ErrorDetail {
                kind: "dict_type".into(),
                loc: vec![],
                msg: "Input should be a valid dictionary".into(),
                input: other,
            }),
        }
    }
}

/// A fresh tool-call id.
pub fn generate_tool_call_id() -> String {
    format!("pyd_ai_{}", crate::durable::new_v4().simple())
}

/// A message history that could not be read (or written: see [`try_history_to_json`]).
#[derive(Debug)]
pub struct HistoryError(HistoryErrorKind);

#[derive(Debug)]
enum HistoryErrorKind {
    Json(serde_json::Error),
    /// Nested deeper than [`MAX_HISTORY_DEPTH`]; where.
    TooDeep(String),
}

impl HistoryError {
    fn too_deep(at: String) -> Self {
        HistoryError(HistoryErrorKind::TooDeep(at))
    }

    /// Whether the history nests arrays and objects deeper than [`MAX_HISTORY_DEPTH`].
    pub fn is_too_deep(&self) -> bool {
        matches!(self.0, HistoryErrorKind::TooDeep(_))
    }
}

impl From<serde_json::Error> for HistoryError {
    fn from(e: serde_json::Error) -> Self {
        HistoryError(HistoryErrorKind::Json(e))
    }
}

impl std::fmt::Display for HistoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            HistoryErrorKind::Json(e) => write!(
                f,
                "the message history is not valid JSON in the expected shape: {e}. Pass a JSON list of messages as written by `ModelMessage` serialisation (or Pydantic AI's ModelMessagesTypeAdapter)"
            ),
            HistoryErrorKind::TooDeep(at) => write!(
                f,
                "the message history nests arrays and objects more than {MAX_HISTORY_DEPTH} levels deep ({at}): toolsmith reads and writes histories up to that depth"
            ),
        }
    }
}

impl std::error::Error for HistoryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0 {
            HistoryErrorKind::Json(e) => Some(e),
            HistoryErrorKind::TooDeep(_) => None,
        }
    }
}

/// Reads a message history from JSON text.
///
/// Histories nesting arrays and objects up to [`MAX_HISTORY_DEPTH`] levels are read (past
/// serde_json's usual limit of 128, so every history [`history_to_json`] writes reads back);
/// deeper ones are an error.
pub fn parse_history(json: &str) -> Result<Vec<ModelMessage>, HistoryError> {
    json::parse(json)
}

/// Reads a message history from a parsed JSON value.
///
/// A value nested deeper than [`MAX_HISTORY_DEPTH`] is an error (and is dropped without
/// recursion, however deep it is).
pub fn history_from_value(value: Value) -> Result<Vec<ModelMessage>, HistoryError> {
    json::from_value(value)
}

/// Writes a message history as JSON text.
///
/// A history nested deeper than [`MAX_HISTORY_DEPTH`] (a tool argument or return value
/// hundreds of levels deep) is written with each array or object past the limit replaced by a
/// string holding its JSON text, so that [`parse_history`] reads the result back; use
/// [`try_history_to_json`] to have an error instead. Never overflows the stack.
pub fn history_to_json(messages: &[ModelMessage]) -> String {
    match json::to_json(messages) {
        Ok(text) => text,
        Err(e) if e.is_too_deep() => json::to_json_flattened(messages).unwrap_or_else(|_| "[]".to_string()),
        Err(_) => "[]".to_string(),
    }
}

/// Writes a message history as JSON text, or an error for a history nested deeper than
/// [`MAX_HISTORY_DEPTH`] (which [`parse_history`] would refuse).
pub fn try_history_to_json(messages: &[ModelMessage]) -> Result<String, HistoryError> {
    json::to_json(messages)
}
