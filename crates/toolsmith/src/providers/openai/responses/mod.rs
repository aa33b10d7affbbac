//! [`OpenAIResponsesModel`]: OpenAI's Responses API (`POST {base}/responses`).
//!
//! # Mapping
//! - Instructions go to `instructions`; system prompts are `system` input messages; user
//!   prompts are `user` messages (`input_text`, `input_image`, `input_file`); tool returns are
//!   `function_call_output` items (a retried call's output is Pydantic AI's retry text: the API
//!   has no error flag); retry feedback is a `user` message.
//! - Responses come back as parts with the items' ids (`msg_…`, `fc_…`, `rs_…`) so they can be
//!   replayed: reasoning items keep their summary as thinking text and their
//!   `encrypted_content` as the signature, and are sent back only to OpenAI.
//! - Function tools always carry `strict` (the API defaults it to `true`): `true` only for
//!   `strict: Some(true)` definitions, whose schema gets the strict-mode transform.
//! - `tool_choice`: `auto`/`none`/`required`; a required single tool is forced by name; every
//!   other restriction uses `allowed_tools` (`mode` `auto` or `required`) over the full tool
//!   list, so the prompt cache is never broken.
//! - Native tool search: on models that support it (`gpt-5.4` and later, or when enabled with
//!   [`OpenAIResponsesModelBuilder::native_tool_search`]) tools with `defer_loading` are sent
//!   with `defer_loading: true` next to a `{"type": "tool_search"}` tool, and the
//!   `tool_search_call` / `tool_search_output` items the server produces are kept in the
//!   response's `provider_details.openai_items` and replayed in place. Elsewhere only the
//!   deferred tools the history discovered are sent, as ordinary tools.
//! - Tool search across providers: a server-side search this request cannot replay natively
//!   (Anthropic's blocks, or OpenAI's own items when native search is off) is sent as a
//!   `search_tools` `function_call` and its `function_call_output`
//!   (`{"discovered_tools": [...]}`), like a search by the local `search_tools` tool. The tools
//!   such searches found are then sent without `defer_loading`, so the model can call them:
//!   OpenAI loads a deferred tool only through its own `tool_search_output` items, whose
//!   server-issued ids a client cannot make up (a client-executed search would need the
//!   `tool_search` tool declared with `execution: "client"` instead of the hosted one).

use std::collections::HashSet;
use std::sync::Arc;

use chrono::TimeZone;
use serde_json::{Map, Value, json};

use super::{OPENAI_BASE_URL, openai_options_from_env, openai_parameters, openai_transport};
use crate::error::UserError;
use crate::messages::{
    MediaContent, ModelMessage, ModelResponse, ModelResponsePart, TextPart, ThinkingPart, ToolCallPart, UserContent,
    UserPromptContent, generate_tool_call_id,
};
use crate::model::{Model, ModelError, ModelRequestParameters, ModelSettings, ResolvedToolChoice};
use crate::model::{ModelStream, ModelStreamEvent, ResponseAssembler, StreamingModel};
use crate::providers::connection::{ConnectionOptions, connection_builder_methods};
use crate::providers::http::{HttpTransport, join_url, settings_timeout};
use crate::providers::sse::{SseEvent, StreamProcessor, parse_event_json};
use crate::providers::wire::{self, ERROR_CHARS, Shape, put};
use crate::search::discovered_in;
use crate::search::native::natively_discovered;
use crate::tool::ToolDefinition;
use crate::usage::RequestUsage;
use stream::ResponsesStream;

mod stream;

/// A model served by OpenAI's Responses API.
///
/// ```no_run
/// let model = toolsmith::providers::OpenAIResponsesModel::from_env("gpt-5.2")?;
/// # Ok::<(), toolsmith::UserError>(())
/// ```
#[derive(Debug, Clone)]
pub struct OpenAIResponsesModel {
    name: String,
    base_url: String,
    system: String,
    http: Arc<HttpTransport>,
    native_tool_search: bool,
}

/// Builds an [`OpenAIResponsesModel`].
#[derive(Clone)]
pub struct OpenAIResponsesModelBuilder {
    model: String,
    opts: ConnectionOptions,
    provider_name: String,
    native_tool_search: Option<bool>,
    from_env: bool,
}

impl std::fmt::Debug for OpenAIResponsesModelBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAIResponsesModelBuilder").field("model", &self.model).finish_non_exhaustive()
    }
}

/// Whether a model name is one with server-side tool search (`gpt-5.4` and later).
fn supports_tool_search(model: &str) -> bool {
    let Some(rest) = model.strip_prefix("gpt-") else { return false };
    let version: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    let mut it = version.split('.');
    let major: u32 = it.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let minor: u32 = it.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    major > 5 || (major == 5 && minor >= 4)
}

impl OpenAIResponsesModelBuilder {
    connection_builder_methods!();

    /// The provider name reported in responses and errors (default `openai`).
    pub fn provider_name(mut self, name: impl Into<String>) -> Self {
        self.provider_name = name.into();
        self
    }

    /// Whether deferred tools use OpenAI's server-side tool search (default: on for `gpt-5.4`
    /// and later).
    pub fn native_tool_search(mut self, enabled: bool) -> Self {
        self.native_tool_search = Some(enabled);
        self
    }

    /// Reads the key and base URL missing from the builder from `OPENAI_API_KEY` and
    /// `OPENAI_BASE_URL`.
    pub fn from_env(mut self) -> Self {
        self.from_env = true;
        self
    }

    /// Builds the model.
    pub fn build(self) -> Result<OpenAIResponsesModel, UserError> {
        let opts = if self.from_env { openai_options_from_env(self.opts)? } else { self.opts };
        let base_url = opts.base_url.clone().unwrap_or_else(|| OPENAI_BASE_URL.to_string());
        if base_url.contains("api.openai.com") && opts.api_key.is_none() {
            return Err(UserError::new(
                "OpenAI's API needs a key: pass it with `.api_key(...)` or use `OpenAIResponsesModel::from_env` with OPENAI_API_KEY set",
            ));
        }
        let http = openai_transport(&opts, &self.provider_name, &self.model)?;
        Ok(OpenAIResponsesModel {
            native_tool_search: self.native_tool_search.unwrap_or_else(|| supports_tool_search(&self.model)),
            name: self.model,
            base_url: base_url.trim_end_matches('/').to_string(),
            system: self.provider_name,
            http: Arc::new(http),
        })
    }
}

fn usage(u: &Value) -> RequestUsage {
    let mut usage = RequestUsage::new(
        u.get("input_tokens").and_then(Value::as_u64).unwrap_or(0),
        u.get("output_tokens").and_then(Value::as_u64).unwrap_or(0),
    );
    usage.cache_read_tokens = u.pointer("/input_tokens_details/cached_tokens").and_then(Value::as_u64).unwrap_or(0);
    if let Some(r) = u.pointer("/output_tokens_details/reasoning_tokens").and_then(Value::as_u64).filter(|n| *n > 0) {
        usage.details = Some(Box::new(json!({"reasoning_tokens": r})));
    }
    usage
}

fn finish_reason(response: &Value, has_calls: bool) -> (Option<std::sync::Arc<str>>, Option<String>) {
    let status = response.get("status").and_then(Value::as_str).unwrap_or("completed");
    match status {
        "completed" => (Some(if has_calls { "tool_call" } else { "stop" }.into()), Some(status.into())),
        "incomplete" => {
            let reason = response.pointer("/incomplete_details/reason").and_then(Value::as_str).unwrap_or("incomplete");
            let mapped = match reason {
                "max_output_tokens" => "length",
                "content_filter" => "content_filter",
                _ => "error",
            };
            (Some(mapped.into()), Some(reason.into()))
        }
        "failed" | "cancelled" => (Some("error".into()), Some(status.into())),
        other => (None, Some(other.into())),
    }
}

impl OpenAIResponsesModel {
    /// A builder for `model`.
    pub fn builder(model: impl Into<String>) -> OpenAIResponsesModelBuilder {
        OpenAIResponsesModelBuilder {
            model: model.into(),
            opts: ConnectionOptions::default(),
            provider_name: "openai".into(),
            native_tool_search: None,
            from_env: false,
        }
    }

    /// The model with its key and base URL from `OPENAI_API_KEY` and `OPENAI_BASE_URL`.
    pub fn from_env(model: impl Into<String>) -> Result<Self, UserError> {
        Self::builder(model).from_env().build()
    }

    fn url(&self) -> String {
        join_url(&self.base_url, "responses")
    }

    /// The request body for these messages and parameters (what is POSTed).
    pub fn request_body(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
        stream: bool,
    ) -> Result<Value, ModelError> {
        wire::check_depth(messages, params)?;
        let mut body = Map::new();
        body.insert("model".into(), self.name.clone().into());
        put(&mut body, "instructions", wire::instructions(messages, params));
        let native_search = self.native_tool_search && params.all_tools().any(|t| t.defer_loading);
        let messages =
            wire::localize_native_searches(messages, |r| native_search && self.own(r.provider_name.as_deref()));
        body.insert("input".into(), Value::Array(self.map_messages(&messages)?));

        let choice = wire::tool_choice(settings, params)?;
        let (tools, loaded): (Vec<&ToolDefinition>, HashSet<String>) = if native_search {
            // Deferred tools found other than by OpenAI's own search are sent loaded.
            let own: HashSet<String> = messages
                .iter()
                .filter_map(ModelMessage::as_response)
                .filter(|r| self.own(r.provider_name.as_deref()))
                .flat_map(|r| natively_discovered(r.provider_details.as_deref()))
                .collect();
            let loaded = discovered_in(&messages).into_iter().filter(|n| !own.contains(n)).collect();
            (wire::all_tools(params), loaded)
        } else {
            (wire::tools_without_native_search(params, &messages), HashSet::new())
        };
        if !tools.is_empty() {
            let mut list: Vec<Value> =
                tools.iter().map(|t| self.map_tool(t, native_search && !loaded.contains(&t.name))).collect();
            if native_search {
                list.push(json!({"type": "tool_search"}));
            }
            body.insert("tools".into(), Value::Array(list));
            let tool_choice: Option<Value> = match &choice {
                ResolvedToolChoice::Auto => None,
                ResolvedToolChoice::None => Some("none".into()),
                ResolvedToolChoice::Required => Some("required".into()),
                ResolvedToolChoice::Restricted { required: true, tools } if tools.len() == 1 => {
                    Some(json!({"type": "function", "name": tools.iter().next()}))
                }
                ResolvedToolChoice::Restricted { required, tools } => Some(json!({
                    "type": "allowed_tools",
                    "mode": if *required { "required" } else { "auto" },
                    "tools": tools.iter().map(|n| json!({"type": "function", "name": n})).collect::<Vec<_>>(),
                })),
            };
            put(&mut body, "tool_choice", tool_choice);
            if let Some(p) = settings.and_then(|s| s.parallel_tool_calls) {
                body.insert("parallel_tool_calls".into(), p.into());
            }
        }
        if let Some(Value::Object(mut format)) = super::json_schema_format(params, true) {
            format.shift_insert(0, "type".into(), "json_schema".into());
            body.insert("text".into(), json!({"format": format}));
        }
        if let Some(s) = settings {
            put(&mut body, "max_output_tokens", s.max_tokens);
            put(&mut body, "temperature", s.temperature);
            put(&mut body, "top_p", s.top_p);
        }
        if stream {
            body.insert("stream".into(), true.into());
        }
        wire::push_tools(&mut body, params.native_tools.iter().filter_map(super::responses_native::tool).collect());
        let mut body = Value::Object(body);
        wire::merge_extra(&mut body, settings.and_then(|s| s.extra.as_deref()));
        super::reasoning::drop_sampling(&self.name, &mut body, "/reasoning/effort");
        Ok(body)
    }

    /// A function tool; `deferred` sends a deferred tool with `defer_loading: true`.
    fn map_tool(&self, def: &ToolDefinition, deferred: bool) -> Value {
        let (parameters, strict) = openai_parameters(def);
        let mut t = Map::new();
        t.insert("type".into(), "function".into());
        t.insert("name".into(), def.name.clone().into());
        put(&mut t, "description", def.description.clone());
        t.insert("parameters".into(), parameters);
        t.insert("strict".into(), strict.unwrap_or(false).into());
        if def.defer_loading && deferred {
            t.insert("defer_loading".into(), true.into());
        }
        Value::Object(t)
    }

    fn own(&self, provider: Option<&str>) -> bool {
        provider == Some(self.system.as_str())
    }

    fn map_messages(&self, messages: &[ModelMessage]) -> Result<Vec<Value>, ModelError> {
        let mut out = Vec::new();
        for message in messages {
            match message {
                ModelMessage::Request(request) => wire::openai_request_items(
                    &request.parts,
                    map_user_content,
                    |id, output| json!({"type": "function_call_output", "call_id": id, "output": output}),
                    &mut out,
                )?,
                ModelMessage::Response(response) => {
                    let own_response = self.own(response.provider_name.as_deref());
                    let raw_items: Vec<(usize, Value)> = if own_response {
                        wire::replayed_blocks(response.provider_details.as_deref(), "openai_items", "item")
                    } else {
                        Vec::new()
                    };
                    for (i, part) in response.parts.iter().enumerate() {
                        out.extend(raw_items.iter().filter(|(at, _)| *at == i).map(|(_, item)| item.clone()));
                        match part {
                            ModelResponsePart::Text(t) => {
                                match t.id.as_deref().filter(|id| id.starts_with("msg_") && own_response) {
                                    Some(id) => out.push(json!({
                                        "type": "message",
                                        "role": "assistant",
                                        "id": id,
                                        "status": "completed",
                                        "content": [{"type": "output_text", "text": t.content, "annotations": []}],
                                    })),
                                    None => out.push(json!({"role": "assistant", "content": t.content})),
                                }
                            }
                            ModelResponsePart::ToolCall(c) => {
                                let mut item = Map::new();
                                item.insert("type".into(), "function_call".into());
                                if own_response && let Some(id) = c.id.as_deref().filter(|id| id.starts_with("fc_")) {
                                    item.insert("id".into(), id.into());
                                }
                                item.insert("call_id".into(), c.tool_call_id.clone().into());
                                item.insert("name".into(), c.tool_name.clone().into());
                                item.insert("arguments".into(), wire::args_string(&c.args).into());
                                out.push(Value::Object(item));
                            }
                            // Its own hosted tools' items go back by id; another provider's,
                            // and the files they made, are not sent.
                            ModelResponsePart::NativeToolCall(_) | ModelResponsePart::NativeToolReturn(_) => {
                                if own_response {
                                    super::responses_native::replay(part, &mut out);
                                }
                            }
                            ModelResponsePart::File(_) => {}
                            ModelResponsePart::Thinking(t) => {
                                if let Some(id) = t.id.as_deref().filter(|id| id.starts_with("rs_"))
                                    && self.own(t.provider_name.as_deref())
                                {
                                    let summary: Vec<Value> = if t.content.is_empty() {
                                        vec![]
                                    } else {
                                        t.content
                                            .split("\n\n")
                                            .map(|s| json!({"type": "summary_text", "text": s}))
                                            .collect()
                                    };
                                    let mut item = json!({"type": "reasoning", "id": id, "summary": summary});
                                    if let Some(sig) = &t.signature {
                                        item["encrypted_content"] = sig.clone().into();
                                    }
                                    out.push(item);
                                }
                            }
                        }
                    }
                    let n = response.parts.len();
                    out.extend(raw_items.iter().filter(|(at, _)| *at >= n).map(|(_, item)| item.clone()));
                }
            }
        }
        Ok(out)
    }

    /// Reads a Responses API response body. An answer without the documented shape (no
    /// `output`, a field of another type...) is an `UnexpectedModelBehavior` error saying which
    /// field is wrong.
    pub fn parse_response(&self, v: &Value) -> Result<ModelResponse, ModelError> {
        let shape = Shape::answer(&self.system, v, &self.http.redactor);
        shape.object(v, "the answer")?;
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            return Err(ModelError::new(
                crate::model::ModelErrorKind::Api,
                format!("{} answered with an error: {}", self.system, self.error_text(err)),
            ));
        }
        let items = shape.array(v, "output", "output")?;
        let mut parts = Vec::new();
        let mut raw = Vec::new();
        for (n, item) in items.iter().enumerate() {
            let path = format!("output[{n}]");
            shape.object(item, &path)?;
            let id = shape.opt_str(item, "id", &format!("{path}.id"))?.map(str::to_string);
            match shape.opt_str(item, "type", &format!("{path}.type"))? {
                Some("message") => {
                    let content = shape.opt_array(item, "content", &format!("{path}.content"))?;
                    for (k, c) in content.into_iter().flatten().enumerate() {
                        let cpath = format!("{path}.content[{k}]");
                        shape.object(c, &cpath)?;
                        let text = match shape.opt_str(c, "text", &format!("{cpath}.text"))? {
                            Some(t) => Some(t),
                            None => shape.opt_str(c, "refusal", &format!("{cpath}.refusal"))?,
                        };
                        let mut t = TextPart::new(text.unwrap_or_default());
                        t.id = id.clone();
                        t.provider_name = Some(self.system.clone());
                        parts.push(ModelResponsePart::Text(t));
                    }
                }
                Some("function_call") => {
                    shape.str(item, "name", &format!("{path}.name"))?;
                    shape.opt_str(item, "call_id", &format!("{path}.call_id"))?;
                    parts.push(ModelResponsePart::ToolCall(self.call_from_item(item)));
                }
                Some("reasoning") => {
                    shape.opt_array(item, "summary", &format!("{path}.summary"))?;
                    parts.push(ModelResponsePart::Thinking(self.thinking_from_item(item)));
                }
                _ => match super::responses_native::parts_of(item, &self.system) {
                    Some(native) => parts.extend(native),
                    None => raw.push(json!({"after_part": parts.len(), "item": item})),
                },
            }
        }
        let has_calls = parts.iter().any(|p| matches!(p, ModelResponsePart::ToolCall(_)));
        let mut response = ModelResponse::new(parts);
        self.fill(&mut response, v, has_calls, raw);
        Ok(response)
    }

    /// A provider error object's message (or the object), redacted and bounded.
    fn error_text(&self, err: &Value) -> String {
        let text = err.get("message").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| err.to_string());
        self.http.snippet(&text, ERROR_CHARS)
    }

    fn call_from_item(&self, item: &Value) -> ToolCallPart {
        let call_id = item
            .get("call_id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .unwrap_or_else(generate_tool_call_id);
        let mut c = ToolCallPart::new(
            item.get("name").and_then(Value::as_str).unwrap_or_default(),
            wire::call_args(item.get("arguments")),
            call_id,
        );
        c.id = item.get("id").and_then(Value::as_str).map(str::to_string);
        c.provider_name = Some(self.system.clone());
        c
    }

    fn thinking_from_item(&self, item: &Value) -> ThinkingPart {
        let summary: Vec<&str> = item
            .get("summary")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.get("text").and_then(Value::as_str))
            .collect();
        let mut t = ThinkingPart::new(summary.join("\n\n"));
        t.id = item.get("id").and_then(Value::as_str).map(str::to_string);
        t.signature = item.get("encrypted_content").and_then(Value::as_str).map(str::to_string);
        t.provider_name = Some(self.system.clone());
        t
    }

    fn fill(&self, response: &mut ModelResponse, v: &Value, has_calls: bool, raw: Vec<Value>) {
        response.usage = v.get("usage").map(usage).unwrap_or_default();
        response.model_name = Some(v.get("model").and_then(Value::as_str).unwrap_or(&self.name).into());
        response.timestamp = v
            .get("created_at")
            .and_then(Value::as_i64)
            .and_then(|s| chrono::Utc.timestamp_opt(s, 0).single())
            .or_else(|| Some(chrono::Utc::now()));
        response.provider_name = Some(self.system.as_str().into());
        response.provider_url = Some(self.base_url.as_str().into());
        response.provider_response_id = v.get("id").and_then(Value::as_str).map(Into::into);
        let (finish, raw_reason) = finish_reason(v, has_calls);
        response.finish_reason = finish;
        let mut details = Map::new();
        put(&mut details, "finish_reason", raw_reason);
        if !raw.is_empty() {
            details.insert("openai_items".into(), Value::Array(raw));
        }
        if !details.is_empty() {
            response.provider_details = Some(Box::new(Value::Object(details)));
        }
    }
}

fn map_user_content(content: &UserPromptContent) -> Result<Value, ModelError> {
    let items = match content {
        UserPromptContent::Text(s) => return Ok(Value::String(s.clone())),
        UserPromptContent::Parts(items) => items,
    };
    let mut out = Vec::new();
    for item in items {
        match item {
            UserContent::Text(t) => out.push(json!({"type": "input_text", "text": t})),
            UserContent::TextContent(t) => out.push(json!({"type": "input_text", "text": t.content})),
            UserContent::Media(m) => out.push(map_media(m)?),
            UserContent::Other(v) => {
                tracing::warn!(content = %v, "user content of an unknown kind is not sent to OpenAI")
            }
        }
    }
    Ok(Value::Array(out))
}

fn image(url: String, vendor: Option<&Value>) -> Value {
    let detail = vendor.and_then(|v| v.get("detail")).cloned().unwrap_or_else(|| "auto".into());
    json!({"type": "input_image", "image_url": url, "detail": detail})
}

fn map_media(m: &MediaContent) -> Result<Value, ModelError> {
    Ok(match m {
        MediaContent::Binary(b) if b.media_type.starts_with("image/") => {
            image(wire::data_url(&b.media_type, &b.data), b.vendor_metadata.as_deref())
        }
        MediaContent::Binary(b) if b.media_type.starts_with("audio/") || b.media_type.starts_with("video/") => {
            return Err(wire::unsupported(
                "the OpenAI Responses API",
                "audio or video input",
                "use OpenAIChatModel for audio, or a Gemini model for video",
            ));
        }
        MediaContent::Binary(b) => {
            let filename = format!(
                "{}.{}",
                b.identifier.clone().unwrap_or_else(|| "file".into()),
                wire::extension_for(&b.media_type)
            );
            json!({"type": "input_file", "filename": filename, "file_data": wire::data_url(&b.media_type, &b.data)})
        }
        MediaContent::ImageUrl(u) => image(u.url.clone(), u.vendor_metadata.as_deref()),
        MediaContent::DocumentUrl(u) => json!({"type": "input_file", "file_url": u.url}),
        MediaContent::AudioUrl(_) | MediaContent::VideoUrl(_) => {
            return Err(wire::unsupported(
                "the OpenAI Responses API",
                "audio or video URLs",
                "use a Gemini model for video, or OpenAIChatModel with inline audio",
            ));
        }
    })
}

impl Model for OpenAIResponsesModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn system(&self) -> &str {
        &self.system
    }

    fn api(&self) -> &str {
        "openai-responses"
    }

    /// `text.format: {"type": "json_schema", ...}`.
    fn native_output_support(&self) -> bool {
        true
    }

    fn native_tool_support(&self) -> crate::native::NativeToolKinds {
        use crate::native::NativeToolKind::*;
        crate::native::NativeToolKinds::of([WebSearch, CodeExecution, ImageGeneration, McpServer, FileSearch])
    }

    /// The `web_search` tool takes domain filters but no limit on searches.
    fn native_tool_unapplied_settings(&self) -> Vec<(crate::native::NativeToolKind, &'static str)> {
        vec![(crate::native::NativeToolKind::WebSearch, "max_uses")]
    }

    fn tool_search_support(&self) -> crate::model::ToolSearchSupport {
        if self.native_tool_search {
            crate::model::ToolSearchSupport::Server
        } else {
            crate::model::ToolSearchSupport::None
        }
    }

    async fn request(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelResponse, ModelError> {
        // Refused before anything walks the history (the files moved, the media inlined) or the schemas.
        wire::check_depth(messages, params)?;
        let body = self.request_body(messages, settings, params, false)?;
        self.http.request_json(&self.url(), &body, settings_timeout(settings), |v| self.parse_response(v)).await
    }
}

impl StreamingModel for OpenAIResponsesModel {
    async fn request_stream(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelStream, ModelError> {
        // Refused before anything walks the history (the files moved, the media inlined) or the schemas.
        wire::check_depth(messages, params)?;
        let body = self.request_body(messages, settings, params, true)?;
        let processor = ResponsesStream {
            model: self.clone(),
            assembler: Some(ResponseAssembler::new()),
            raw: vec![],
            last: None,
            completed: false,
        };
        self.http.stream(&self.url(), &body, settings_timeout(settings), processor).await
    }
}
