//! [`OpenAIChatModel`]: OpenAI Chat Completions, and any OpenAI-compatible server (vLLM,
//! llama.cpp, Ollama, Groq...) through its base URL.
//!
//! # Mapping
//! - System prompts and instructions are `system` messages (instructions first); user prompts
//!   are `user` messages (text, images by URL or inline, audio `input_audio`, documents as
//!   `file`). Chat Completions takes audio only as base64 data and documents only as
//!   `file_data` or an uploaded `file_id`, so `request` / `request_stream` download audio and
//!   document URLs (and image URLs with `force_download`) with the model's HTTP client and send
//!   them inline (at most 32 MiB each; a failed download is an error naming the URL); tool returns are `tool` messages; a retried call's message is Pydantic AI's retry
//!   text ("…Fix the errors and try again."), as Chat Completions has no error flag; retry
//!   feedback is a `user` message.
//! - Tool-call `arguments` are JSON text; a server that sends a JSON value instead has an object
//!   taken as the arguments and anything else (a number, an array) kept as its text, which
//!   argument validation refuses with an error the model gets as a retry (streamed or not, and
//!   likewise in the Responses adapter), rather than a malformed answer that ends the run.
//! - Thinking parts are not sent back (Chat Completions has no field for them); reasoning that a
//!   server returns in `reasoning_content` or `reasoning` becomes a thinking part.
//! - `strict: Some(true)` tools get OpenAI's strict-mode schema (see [`openai_strict_schema`]);
//!   return schemas are appended to the description.
//! - `tool_choice`: `auto`/`none`/`required` natively; one required tool is forced by name with
//!   the full tool list (cache-friendly); several tools, or a restriction that still allows
//!   text, are filtered client-side (the tool list changes, which breaks prompt caching) with
//!   `required` or `auto`.
//! - Reasoning models (o-series, GPT-5 families; `reasoning::reasons`) refuse sampling
//!   parameters while they reason: `temperature`, `top_p` and the like are left out of such a
//!   request, with a warning naming them. `max_tokens` goes in `max_completion_tokens`, whatever
//!   the base URL, except for the presets whose servers read `max_tokens`
//!   ([`OpenAIChatModelBuilder::max_tokens_field`]).
//! - Chat Completions has no native tool search: deferred tools are sent once the history
//!   discovered them, and Anthropic's or OpenAI Responses' server-side searches in the history
//!   are replayed as `search_tools` calls and returns (see the Anthropic adapter's notes).

use std::borrow::Cow;
use std::sync::Arc;

use chrono::TimeZone;
use serde_json::{Map, Value, json};

use super::presets::{Preset, Quirks};
use super::{OPENAI_BASE_URL, openai_options_from_env, openai_transport};
use crate::error::UserError;
use crate::messages::{
    BinaryContent, MediaContent, ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, TextPart,
    ThinkingPart, ToolCallPart, UserContent, UserPromptContent, generate_tool_call_id,
};
use crate::model::{Model, ModelError, ModelRequestParameters, ModelSettings};
use crate::model::{ModelStream, ModelStreamEvent, ResponseAssembler, StreamingModel};
use crate::providers::connection::{ConnectionOptions, connection_builder_methods};
use crate::providers::http::{HttpTransport, download, join_url, settings_timeout};
use crate::providers::redact::Redactor;
use crate::providers::sse::{SseEvent, StreamProcessor, parse_event_json};
use crate::providers::wire::{self, ERROR_CHARS, Shape};
use crate::usage::RequestUsage;

/// Maps an OpenAI finish reason to Pydantic AI's vocabulary.
pub(crate) fn chat_finish_reason(raw: &str) -> &'static str {
    match raw {
        "stop" => "stop",
        "length" => "length",
        "tool_calls" | "function_call" => "tool_call",
        "content_filter" => "content_filter",
        _ => "error",
    }
}

fn chat_usage(u: &Value) -> RequestUsage {
    let mut usage = RequestUsage::new(
        u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
        u.get("completion_tokens").and_then(Value::as_u64).unwrap_or(0),
    );
    usage.cache_read_tokens = u.pointer("/prompt_tokens_details/cached_tokens").and_then(Value::as_u64).unwrap_or(0);
    let mut details = Map::new();
    for (section, fields) in [
        (
            "completion_tokens_details",
            ["reasoning_tokens", "audio_tokens", "accepted_prediction_tokens", "rejected_prediction_tokens"],
        ),
        ("prompt_tokens_details", ["audio_tokens", "", "", ""]),
    ] {
        for f in fields.iter().filter(|f| !f.is_empty()) {
            if let Some(n) = u.get(section).and_then(|s| s.get(*f)).and_then(Value::as_u64)
                && n > 0
            {
                let key = if section.starts_with("prompt") { format!("input_{f}") } else { (*f).to_string() };
                details.insert(key, n.into());
            }
        }
    }
    if !details.is_empty() {
        usage.details = Some(Box::new(Value::Object(details)));
    }
    usage
}

fn timestamp(secs: Option<i64>) -> Option<crate::messages::Timestamp> {
    secs.and_then(|s| chrono::Utc.timestamp_opt(s, 0).single()).or_else(|| Some(chrono::Utc::now()))
}

/// Which field carries the token limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MaxTokensField {
    /// `max_completion_tokens` (OpenAI's API, required by reasoning models).
    MaxCompletionTokens,
    /// `max_tokens` (what OpenRouter, DeepSeek, Mistral, Groq, Ollama and LM Studio read).
    MaxTokens,
}

/// A model served by OpenAI Chat Completions (`POST {base}/chat/completions`) or an
/// OpenAI-compatible server.
///
/// ```no_run
/// use toolsmith::providers::OpenAIChatModel;
/// // OPENAI_API_KEY (and optionally OPENAI_BASE_URL, with its /v1) from the environment:
/// let model = OpenAIChatModel::from_env("gpt-4o-mini")?;
/// // or a local server that needs no key:
/// let local = OpenAIChatModel::builder("smollm2").base_url("http://127.0.0.1:8000/v1").build()?;
/// # Ok::<(), toolsmith::UserError>(())
/// ```
#[derive(Debug, Clone)]
pub struct OpenAIChatModel {
    pub(super) name: String,
    pub(super) base_url: String,
    pub(super) system: String,
    pub(super) http: Arc<HttpTransport>,
    pub(super) max_tokens_field: MaxTokensField,
    pub(super) tool_choice_forcing: bool,
    /// How the provider's API differs from OpenAI's (none for OpenAI).
    pub(super) quirks: Quirks,
    /// The query string of every request URL (Azure's `api-version=...`).
    pub(super) query: Option<String>,
}

/// Builds an [`OpenAIChatModel`].
#[derive(Clone)]
pub struct OpenAIChatModelBuilder {
    pub(super) model: String,
    pub(super) opts: ConnectionOptions,
    pub(super) provider_name: Option<String>,
    pub(super) max_tokens_field: Option<MaxTokensField>,
    pub(super) tool_choice_forcing: bool,
    pub(super) from_env: bool,
    pub(super) preset: Option<Preset>,
}

impl std::fmt::Debug for OpenAIChatModelBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAIChatModelBuilder").field("model", &self.model).finish_non_exhaustive()
    }
}

impl OpenAIChatModelBuilder {
    connection_builder_methods!();

    /// The provider name reported in responses and errors (default `openai`, or the preset's).
    pub fn provider_name(mut self, name: impl Into<String>) -> Self {
        self.provider_name = Some(name.into());
        self
    }

    /// Talks to an OpenAI-compatible provider: its base URL, key, name and API differences
    /// (see [`Preset`]). With [`from_env`](Self::from_env), the key and base URL come from the
    /// preset's variables (`GROQ_API_KEY`, `GROQ_BASE_URL`...) instead of OpenAI's.
    ///
    /// ```
    /// use toolsmith::providers::{OpenAIChatModel, Preset};
    /// let model = OpenAIChatModel::builder("openai/gpt-4o-mini")
    ///     .preset(Preset::OpenRouter)
    ///     .api_key("sk-or-...")
    ///     .header("X-Title", "My app")
    ///     .build()?;
    /// assert_eq!(model.base_url(), "https://openrouter.ai/api/v1");
    /// # Ok::<(), toolsmith::UserError>(())
    /// ```
    pub fn preset(mut self, preset: Preset) -> Self {
        self.preset = Some(preset);
        self
    }

    /// Which field carries `max_tokens`. Default: `max_completion_tokens`, whatever the base
    /// URL (as Pydantic AI's OpenAI provider sends it); a [`Preset`] sets the field its server
    /// reads. Set [`MaxTokensField::MaxTokens`] for a server that reads only `max_tokens`
    /// (llama.cpp, llama-cpp-python, older servers).
    pub fn max_tokens_field(mut self, field: MaxTokensField) -> Self {
        self.max_tokens_field = Some(field);
        self
    }

    /// Whether the server accepts a forced tool (`{"type": "function", ...}` as `tool_choice`);
    /// when it does not, a required single tool is filtered client-side with `required`.
    pub fn tool_choice_forcing(mut self, supported: bool) -> Self {
        self.tool_choice_forcing = supported;
        self
    }

    /// Reads the key and base URL missing from the builder from `OPENAI_API_KEY` and
    /// `OPENAI_BASE_URL` (from the preset's variables with [`preset`](Self::preset)).
    pub fn from_env(mut self) -> Self {
        self.from_env = true;
        self
    }

    /// Builds the model. Without a base URL it talks to OpenAI's API and needs a key.
    pub fn build(self) -> Result<OpenAIChatModel, UserError> {
        if let Some(preset) = self.preset {
            return super::presets::build(self, preset);
        }
        let opts = if self.from_env { openai_options_from_env(self.opts)? } else { self.opts };
        let base_url = opts.base_url.clone().unwrap_or_else(|| OPENAI_BASE_URL.to_string());
        let official = base_url.contains("api.openai.com");
        if official && opts.api_key.is_none() {
            return Err(UserError::new(
                "OpenAI's API needs a key: pass it with `.api_key(...)` or use `OpenAIChatModel::from_env` with OPENAI_API_KEY set",
            ));
        }
        let provider_name = self.provider_name.unwrap_or_else(|| "openai".into());
        let http = openai_transport(&opts, &provider_name, &self.model)?;
        Ok(OpenAIChatModel {
            name: self.model,
            base_url: base_url.trim_end_matches('/').to_string(),
            system: provider_name,
            http: Arc::new(http),
            // OpenAI's field whatever the base URL (a proxy or gateway in front of OpenAI takes
            // it too), as Pydantic AI's OpenAI profile has it; the presets of the servers that
            // read only `max_tokens` say so.
            max_tokens_field: self.max_tokens_field.unwrap_or(MaxTokensField::MaxCompletionTokens),
            tool_choice_forcing: self.tool_choice_forcing,
            quirks: Quirks::default(),
            query: None,
        })
    }
}

impl OpenAIChatModel {
    /// A builder for `model` (no key, OpenAI's base URL unless set).
    pub fn builder(model: impl Into<String>) -> OpenAIChatModelBuilder {
        OpenAIChatModelBuilder {
            model: model.into(),
            opts: ConnectionOptions::default(),
            provider_name: None,
            max_tokens_field: None,
            tool_choice_forcing: true,
            from_env: false,
            preset: None,
        }
    }

    /// The model on an OpenAI-compatible provider, with its key and base URL from the preset's
    /// environment variables (see [`Preset`]). A hosted provider's missing key is a
    /// [`UserError`] naming its variable.
    ///
    /// ```no_run
    /// use toolsmith::providers::{OpenAIChatModel, Preset};
    /// // MISTRAL_API_KEY (and optionally MISTRAL_BASE_URL) from the environment:
    /// let model = OpenAIChatModel::from_preset(Preset::Mistral, "mistral-large-latest")?;
    /// # Ok::<(), toolsmith::UserError>(())
    /// ```
    pub fn from_preset(preset: Preset, model: impl Into<String>) -> Result<Self, UserError> {
        Self::builder(model).preset(preset).from_env().build()
    }

    /// The model with its key and base URL from `OPENAI_API_KEY` and `OPENAI_BASE_URL`.
    pub fn from_env(model: impl Into<String>) -> Result<Self, UserError> {
        Self::builder(model).from_env().build()
    }

    /// The base URL (with its `/v1`).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    fn url(&self) -> String {
        let url = join_url(&self.base_url, "chat/completions");
        match &self.query {
            Some(query) => format!("{url}?{query}"),
            None => url,
        }
    }

    /// Reads a Chat Completions response body. An answer without the documented shape (no
    /// `choices`, a field of another type...) is an `UnexpectedModelBehavior` error saying which
    /// field is wrong.
    pub fn parse_response(&self, v: &Value) -> Result<ModelResponse, ModelError> {
        let shape = Shape::answer(&self.system, v, &self.http.redactor);
        shape.object(v, "the answer")?;
        let choices = match v.get("choices") {
            None | Some(Value::Null) => {
                if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
                    return Err(ModelError::new(
                        crate::model::ModelErrorKind::Api,
                        format!(
                            "{} answered with an error: {}",
                            self.system,
                            self.http.snippet(
                                &err.get("message")
                                    .and_then(Value::as_str)
                                    .map(str::to_string)
                                    .unwrap_or_else(|| err.to_string()),
                                ERROR_CHARS
                            )
                        ),
                    ));
                }
                return Err(shape.error("`choices` is missing"));
            }
            Some(_) => shape.array(v, "choices", "choices")?,
        };
        let Some(choice) = choices.first() else { return Err(shape.error("`choices` is empty")) };
        shape.object(choice, "choices[0]")?;
        let message = shape.object_field(choice, "message", "choices[0].message")?;
        let mut parts = Vec::new();
        for field in ["reasoning_content", "reasoning"] {
            if let Some(r) = message.get(field).and_then(Value::as_str).filter(|s| !s.is_empty()) {
                let mut t = ThinkingPart::new(r);
                t.id = Some(field.to_string());
                t.provider_name = Some(self.system.clone());
                parts.push(ModelResponsePart::Thinking(t));
                break;
            }
        }
        match message.get("content") {
            Some(Value::String(s)) if !s.is_empty() => parts.push(ModelResponsePart::Text(TextPart::new(s.clone()))),
            Some(Value::Array(items)) => {
                let text: String =
                    items.iter().filter_map(|i| i.get("text").and_then(Value::as_str)).collect::<Vec<_>>().concat();
                if !text.is_empty() {
                    parts.push(ModelResponsePart::Text(TextPart::new(text)));
                }
            }
            None | Some(Value::Null) | Some(Value::String(_)) => {}
            Some(other) => {
                return Err(shape.error(format_args!(
                    "`choices[0].message.content` is {}, expected a string or an array",
                    wire::json_type(other)
                )));
            }
        }
        let calls = shape.opt_array(message, "tool_calls", "choices[0].message.tool_calls")?;
        for (n, c) in calls.into_iter().flatten().enumerate() {
            let path = format!("choices[0].message.tool_calls[{n}]");
            shape.object(c, &path)?;
            let function = shape.object_field(c, "function", &format!("{path}.function"))?;
            let name = shape.str(function, "name", &format!("{path}.function.name"))?;
            // Arguments that are not JSON text (an object, a number...) go to validation as
            // they came: see `wire::call_args`.
            let args = wire::call_args(function.get("arguments"));
            let id = shape
                .opt_str(c, "id", &format!("{path}.id"))?
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .unwrap_or_else(generate_tool_call_id);
            parts.push(ModelResponsePart::ToolCall(ToolCallPart::new(name, args, id)));
        }
        let mut response = ModelResponse::new(parts);
        response.usage = v.get("usage").map(chat_usage).unwrap_or_default();
        response.model_name = Some(v.get("model").and_then(Value::as_str).unwrap_or(&self.name).into());
        response.timestamp = timestamp(v.get("created").and_then(Value::as_i64));
        response.provider_name = Some(self.system.as_str().into());
        response.provider_url = Some(self.base_url.as_str().into());
        response.provider_response_id = v.get("id").and_then(Value::as_str).map(Into::into);
        if let Some(raw) = choice.get("finish_reason").and_then(Value::as_str) {
            response.finish_reason = Some(chat_finish_reason(raw).into());
            response.provider_details = Some(Box::new(json!({"finish_reason": raw})));
        }
        Ok(response)
    }
}

/// A URL a tool returned that Chat Completions would need downloaded is refused: the client
/// would fetch whatever address a tool (an MCP server, a page it read) put there, internal
/// ones included. A user's own URLs are downloaded; a tool returns the file's bytes instead.
fn refuse_tool_urls(messages: &[ModelMessage]) -> Result<(), ModelError> {
    for request in messages.iter().filter_map(ModelMessage::as_request) {
        for part in &request.parts {
            let ModelRequestPart::ToolReturn(r) = part else { continue };
            for file in r.files() {
                if let (true, MediaContent::AudioUrl(u) | MediaContent::DocumentUrl(u) | MediaContent::ImageUrl(u)) =
                    (needs_download(&file), &file)
                {
                    return Err(ModelError::new(
                        crate::model::ModelErrorKind::User,
                        format!(
                            "tool '{}' returned the URL {} as a file, which Chat Completions takes only inline: it is not downloaded on a tool's say-so; return the file's bytes (`BinaryContent`) instead",
                            r.tool_name, u.url
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Whether a URL must be downloaded to go to Chat Completions: audio and documents always (the
/// API takes them only inline), images when the prompt asks for it with `force_download`.
fn needs_download(m: &MediaContent) -> bool {
    match m {
        MediaContent::AudioUrl(_) | MediaContent::DocumentUrl(_) => true,
        MediaContent::ImageUrl(u) => {
            u.force_download.as_ref().is_some_and(|f| !matches!(**f, Value::Null | Value::Bool(false)))
        }
        _ => false,
    }
}

impl OpenAIChatModel {
    /// The messages with the media URLs Chat Completions cannot take by URL downloaded and
    /// inlined as [`BinaryContent`]; borrowed as they are when there are none.
    async fn inline_media_urls<'a>(
        &self,
        messages: &'a [ModelMessage],
        settings: Option<&ModelSettings>,
    ) -> Result<Cow<'a, [ModelMessage]>, ModelError> {
        let has_url = |m: &ModelMessage| {
            m.as_request().is_some_and(|r| {
                r.parts.iter().any(|p| match p {
                    ModelRequestPart::UserPrompt(u) => match &u.content {
                        UserPromptContent::Parts(items) => {
                            items.iter().any(|i| matches!(i, UserContent::Media(m) if needs_download(m)))
                        }
                        UserPromptContent::Text(_) => false,
                    },
                    _ => false,
                })
            })
        };
        if !messages.iter().any(has_url) {
            return Ok(Cow::Borrowed(messages));
        }
        let timeout = settings_timeout(settings).unwrap_or(self.http.timeout);
        let mut out = messages.to_vec();
        for message in &mut out {
            let ModelMessage::Request(request) = message else { continue };
            for part in &mut request.parts {
                let ModelRequestPart::UserPrompt(prompt) = part else { continue };
                let UserPromptContent::Parts(items) = &mut prompt.content else { continue };
                for item in items.iter_mut() {
                    let UserContent::Media(media) = item else { continue };
                    if !needs_download(media) {
                        continue;
                    }
                    let (MediaContent::AudioUrl(u) | MediaContent::DocumentUrl(u) | MediaContent::ImageUrl(u)) =
                        &*media
                    else {
                        continue;
                    };
                    let (bytes, served) =
                        download(&self.http.client, &u.url, timeout, "OpenAI Chat Completions").await?;
                    let fallback = match media {
                        // An unknown audio type is refused by the mapping with what to send.
                        MediaContent::AudioUrl(_) => "audio/unknown",
                        MediaContent::ImageUrl(_) => "image/jpeg",
                        _ => "application/octet-stream",
                    };
                    let media_type = u
                        .media_type
                        .clone()
                        .or(served)
                        .or_else(|| wire::guess_media_type(&u.url).map(str::to_string))
                        .unwrap_or_else(|| fallback.to_string());
                    let mut binary = BinaryContent::new(bytes, media_type);
                    if u.identifier.is_some() {
                        binary.identifier = u.identifier.clone();
                    }
                    binary.vendor_metadata = u.vendor_metadata.clone();
                    *media = MediaContent::Binary(binary);
                }
            }
        }
        Ok(Cow::Owned(out))
    }
}

impl Model for OpenAIChatModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn system(&self) -> &str {
        &self.system
    }

    fn api(&self) -> &str {
        "openai-chat"
    }

    /// Web search on the search models (`*-search-preview`, `*-search-api`).
    /// `response_format: {"type": "json_schema", ...}`.
    fn native_output_support(&self) -> bool {
        true
    }

    fn native_tool_support(&self) -> crate::native::NativeToolKinds {
        let search = self.name.contains("-search-preview") || self.name.contains("-search-api");
        crate::native::NativeToolKinds::of(search.then_some(crate::native::NativeToolKind::WebSearch))
    }

    /// `web_search_options` takes no domain filter and no limit.
    fn native_tool_unapplied_settings(&self) -> Vec<(crate::native::NativeToolKind, &'static str)> {
        use crate::native::NativeToolKind::WebSearch;
        vec![(WebSearch, "allowed_domains"), (WebSearch, "blocked_domains"), (WebSearch, "max_uses")]
    }

    async fn request(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelResponse, ModelError> {
        // Refused before anything walks the history (the files moved, the media inlined) or the schemas.
        wire::check_depth(messages, params)?;
        // Files tool results hold move to a user message first (URLs a tool gave are not
        // downloaded: see `refuse_tool_urls`).
        refuse_tool_urls(messages)?;
        let messages = crate::messages::move_tool_files(messages, |_| false);
        let messages = self.inline_media_urls(&messages, settings).await?;
        let body = self.request_body(&messages, settings, params, false)?;
        self.http.request_json(&self.url(), &body, settings_timeout(settings), |v| self.parse_response(v)).await
    }
}

impl StreamingModel for OpenAIChatModel {
    async fn request_stream(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelStream, ModelError> {
        // Refused before anything walks the history (the files moved, the media inlined) or the schemas.
        wire::check_depth(messages, params)?;
        // Files tool results hold move to a user message first (URLs a tool gave are not
        // downloaded: see `refuse_tool_urls`).
        refuse_tool_urls(messages)?;
        let messages = crate::messages::move_tool_files(messages, |_| false);
        let messages = self.inline_media_urls(&messages, settings).await?;
        let body = self.request_body(&messages, settings, params, true)?;
        self.http
            .stream(
                &self.url(),
                &body,
                settings_timeout(settings),
                ChatStream {
                    assembler: Some(ResponseAssembler::new()),
                    model: self.name.clone(),
                    system: self.system.clone(),
                    base_url: self.base_url.clone(),
                    redactor: self.http.redactor.clone(),
                    calls: Vec::new(),
                    id: None,
                    created: None,
                    response_model: None,
                    finish: None,
                    usage: None,
                    done: false,
                },
            )
            .await
    }
}

/// Checks the types of the fields a stream chunk is read from.
fn check_chunk(shape: &Shape<'_>, v: &Value) -> Result<(), ModelError> {
    shape.object(v, "the chunk")?;
    let Some(choice) = shape.opt_array(v, "choices", "choices")?.and_then(|c| c.first()) else { return Ok(()) };
    shape.object(choice, "choices[0]")?;
    shape.opt_str(choice, "finish_reason", "choices[0].finish_reason")?;
    let Some(delta) = shape.opt_object(choice, "delta", "choices[0].delta")? else { return Ok(()) };
    shape.opt_str(delta, "content", "choices[0].delta.content")?;
    let calls = shape.opt_array(delta, "tool_calls", "choices[0].delta.tool_calls")?;
    for (n, c) in calls.into_iter().flatten().enumerate() {
        let path = format!("choices[0].delta.tool_calls[{n}]");
        shape.object(c, &path)?;
        shape.opt_str(c, "id", &format!("{path}.id"))?;
        if let Some(f) = shape.opt_object(c, "function", &format!("{path}.function"))? {
            shape.opt_str(f, "name", &format!("{path}.function.name"))?;
        }
    }
    Ok(())
}

struct ChatStream {
    assembler: Option<ResponseAssembler>,
    model: String,
    system: String,
    base_url: String,
    redactor: Redactor,
    /// Per tool-call index: the key of its part and its id.
    calls: Vec<(u64, String, String)>,
    id: Option<String>,
    created: Option<i64>,
    response_model: Option<String>,
    finish: Option<String>,
    usage: Option<Value>,
    /// Whether `data: [DONE]` arrived.
    done: bool,
}

impl StreamProcessor for ChatStream {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<ModelStreamEvent>) -> Result<bool, ModelError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let v = parse_event_json(&self.system, data, &self.redactor)?;
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            return Err(ModelError::new(
                crate::model::ModelErrorKind::Api,
                format!(
                    "the {} stream reported an error: {}",
                    self.system,
                    self.redactor.snippet(
                        &err.get("message")
                            .and_then(Value::as_str)
                            .map(str::to_string)
                            .unwrap_or_else(|| err.to_string()),
                        ERROR_CHARS
                    )
                ),
            ));
        }
        check_chunk(&Shape::event(&self.system, &v, &self.redactor), &v)?;
        if self.id.is_none() {
            self.id = v.get("id").and_then(Value::as_str).map(str::to_string);
        }
        if self.created.is_none() {
            self.created = v.get("created").and_then(Value::as_i64);
        }
        if let Some(m) = v.get("model").and_then(Value::as_str) {
            self.response_model = Some(m.to_string());
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        let Some(a) = self.assembler.as_mut() else { return Ok(true) };
        let Some(choice) = v.get("choices").and_then(|c| c.get(0)) else { return Ok(false) };
        if let Some(delta) = choice.get("delta") {
            for field in ["reasoning_content", "reasoning"] {
                if let Some(r) = delta.get(field).and_then(Value::as_str).filter(|s| !s.is_empty()) {
                    out.extend(a.thinking_delta("reasoning", r));
                    if let Some(ModelResponsePart::Thinking(t)) = a.part_mut("reasoning") {
                        t.id = Some(field.to_string());
                        t.provider_name = Some(self.system.clone());
                    }
                }
            }
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                out.extend(a.text_delta("content", text));
            }
            if let Some(Value::Array(calls)) = delta.get("tool_calls") {
                for (position, c) in calls.iter().enumerate() {
                    let index = c.get("index").and_then(Value::as_u64).unwrap_or(position as u64);
                    let id = c.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
                    let name = c.pointer("/function/name").and_then(Value::as_str).unwrap_or_default();
                    let existing = self.calls.iter().rposition(|(i, _, _)| *i == index);
                    let key = match (existing, id) {
                        (Some(e), Some(id)) if self.calls[e].2 != id => {
                            // A server that reuses index 0 for several calls: a new id is a new call.
                            let old_key = self.calls[e].1.clone();
                            out.extend(a.tool_call_end(&old_key, false));
                            None
                        }
                        (Some(e), _) => Some(self.calls[e].1.clone()),
                        (None, _) => None,
                    };
                    let key = match key {
                        Some(k) => k,
                        None => {
                            let key = format!("call{}", self.calls.len());
                            let id = id.map(str::to_string).unwrap_or_else(generate_tool_call_id);
                            out.push(a.tool_call_start(&key, &id, name));
                            self.calls.push((index, key.clone(), id));
                            key
                        }
                    };
                    if !name.is_empty()
                        && let Some(ModelResponsePart::ToolCall(call)) = a.part_mut(&key)
                        && call.tool_name.is_empty()
                    {
                        call.tool_name = name.to_string();
                    }
                    if let Some(args) = wire::call_args_delta(c.pointer("/function/arguments")) {
                        out.extend(a.tool_call_args_delta(&key, &args));
                    }
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(reason.to_string());
        }
        Ok(false)
    }

    fn finish(&mut self, out: &mut Vec<ModelStreamEvent>) -> Result<ModelResponse, ModelError> {
        if !self.done && self.finish.is_none() {
            // A server that stops mid-answer (llama-cpp-python drops a stream when another
            // request comes in) closes the connection cleanly: the parts so far are not an answer.
            return Err(ModelError::new(
                crate::model::ModelErrorKind::Connection,
                format!(
                    "the {} stream ended before the answer did (no finish_reason, no [DONE]): the server closed it early; try again",
                    self.system
                ),
            ));
        }
        let assembler = self.assembler.take().unwrap_or_default();
        let (parts, ends) = assembler.finish(false);
        out.extend(ends);
        let mut response = ModelResponse::new(parts);
        response.usage = self.usage.as_ref().map(chat_usage).unwrap_or_default();
        response.model_name = Some(self.response_model.as_deref().unwrap_or(&self.model).into());
        response.timestamp = timestamp(self.created);
        response.provider_name = Some(self.system.as_str().into());
        response.provider_url = Some(self.base_url.as_str().into());
        response.provider_response_id = self.id.as_deref().map(Into::into);
        if let Some(raw) = &self.finish {
            response.finish_reason = Some(chat_finish_reason(raw).into());
            response.provider_details = Some(Box::new(json!({"finish_reason": raw})));
        }
        Ok(response)
    }
}
