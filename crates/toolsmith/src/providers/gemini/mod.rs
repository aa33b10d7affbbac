//! [`GeminiModel`]: Google's Gemini API (`generateContent`, `streamGenerateContent`).
//!
//! # Mapping
//! - System prompts and instructions form `systemInstruction`; consecutive turns of one role
//!   are merged; the model's turns have role `model`.
//! - User prompts: `text`, `inlineData` for binary content, `fileData` for URLs.
//! - Tool returns are `functionResponse` parts: an object return as it is, any other value as
//!   `{"output": value}`; a retried, denied or failed call as `{"error": text}` (Gemini's
//!   documented convention, it has no error flag). Retry feedback is a user `text` part.
//! - Thinking: `thought` parts become thinking parts with their `thoughtSignature`; signatures
//!   on function calls and text are kept in the part's `provider_details.thought_signature` and
//!   sent back to Gemini (for Gemini 3 models, a call without one — e.g. from another provider's
//!   history — gets the documented `skip_thought_signature_validator` placeholder).
//! - Tool schemas are converted to Gemini's OpenAPI subset (see [`gemini_schema`]); return
//!   schemas go to the native `responseJsonSchema` field.
//! - `tool_choice` maps to `functionCallingConfig`: `AUTO`, `NONE`, `ANY`, and
//!   `allowedFunctionNames` with `ANY` (required) or `VALIDATED` (text allowed) for every
//!   restriction, over the full tool list: the prompt cache is never broken.
//! - Gemini has no native tool search: deferred tools are sent once the history discovered
//!   them, and Anthropic's or OpenAI Responses' server-side searches in the history are
//!   replayed as `search_tools` calls and returns.
//! - Streamed function-call arguments (opt-in with
//!   [`GeminiModelBuilder::stream_function_call_arguments`]): streaming requests set
//!   `toolConfig.functionCallingConfig.streamFunctionCallArguments`, and a call then arrives as
//!   a `functionCall` with its `name` and `willContinue: true`, then `functionCall`s whose
//!   `partialArgs` carry typed leaf values (`stringValue`, `numberValue`, `boolValue`,
//!   `nullValue`) addressed by `jsonPath` — a long string in several entries for one path — and
//!   an end without `willContinue`. They become the usual `ToolCallStart`, `ToolCallArgsDelta`
//!   (JSON text) and `ToolCallEnd` events.

mod native;
mod partial_args;
mod schema;
mod stream;

use std::sync::Arc;

use reqwest::header::HeaderMap;
use serde_json::{Map, Value, json};

use crate::error::UserError;
use crate::messages::{
    MediaContent, ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ReturnItem, TextPart, ThinkingPart,
    ToolCallPart, ToolOutcome, ToolReturnPart, UserContent, UserPromptContent, generate_tool_call_id,
};
use crate::model::{Model, ModelError, ModelRequestParameters, ModelSettings, ResolvedToolChoice};
use crate::model::{ModelStream, StreamingModel};
use crate::providers::connection::{ConnectionOptions, DEFAULT_TIMEOUT, connection_builder_methods};
use crate::providers::http::{HttpTransport, header, join_url, settings_timeout};
use crate::providers::wire::{self, Shape, put};
use crate::tool::ToolDefinition;
use crate::usage::RequestUsage;
pub use schema::gemini_schema;
use stream::GeminiStream;

/// Google's Gemini API.
pub const GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com";
pub(super) const SYSTEM: &str = "google";
const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

/// A Gemini model served by Google's Gemini API (Google AI Studio).
///
/// ```no_run
/// let model = toolsmith::providers::GeminiModel::from_env("gemini-2.5-flash")?;
/// # Ok::<(), toolsmith::UserError>(())
/// ```
#[derive(Debug, Clone)]
pub struct GeminiModel {
    name: String,
    base_url: String,
    api_version: String,
    http: Arc<HttpTransport>,
    stream_function_call_arguments: bool,
}

/// Builds a [`GeminiModel`].
#[derive(Clone)]
pub struct GeminiModelBuilder {
    model: String,
    opts: ConnectionOptions,
    api_version: String,
    from_env: bool,
    stream_function_call_arguments: bool,
}

impl std::fmt::Debug for GeminiModelBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeminiModelBuilder").field("model", &self.model).finish_non_exhaustive()
    }
}

impl GeminiModelBuilder {
    connection_builder_methods!();

    /// The API version in the path (default `v1beta`); ignored when the base URL already ends
    /// with a version.
    pub fn api_version(mut self, version: impl Into<String>) -> Self {
        self.api_version = version.into();
        self
    }

    /// Streams the arguments of function calls as the model writes them (default off): streaming
    /// requests with tools ask for `streamFunctionCallArguments`, so that a long argument (a
    /// document a tool is to save) shows up in `ToolCallArgsDelta` events while it is
    /// generated instead of all at once at the end.
    ///
    /// Google documents the option for Gemini 3 models on Vertex AI (the Gemini API of AI
    /// Studio rejects it); point the base URL at a Vertex endpoint, e.g.
    /// `https://aiplatform.googleapis.com/v1/projects/{project}/locations/global/publishers/google`.
    /// Requests without streaming never carry it: Vertex's `generateContent` refuses it.
    ///
    /// ```
    /// let model = toolsmith::providers::GeminiModel::builder("gemini-3-pro-preview")
    ///     .base_url("https://aiplatform.googleapis.com/v1/projects/my-project/locations/global/publishers/google")
    ///     .api_key("...")
    ///     .stream_function_call_arguments(true)
    ///     .build()?;
    /// # Ok::<(), toolsmith::UserError>(())
    /// ```
    pub fn stream_function_call_arguments(mut self, enabled: bool) -> Self {
        self.stream_function_call_arguments = enabled;
        self
    }

    /// Reads the key and base URL missing from the builder from `GEMINI_API_KEY` (or
    /// `GOOGLE_API_KEY`) and `GEMINI_BASE_URL`.
    pub fn from_env(mut self) -> Self {
        self.from_env = true;
        self
    }

    /// Builds the model; a key is required for Google's own API.
    pub fn build(mut self) -> Result<GeminiModel, UserError> {
        if self.from_env {
            let var = |n: &str| std::env::var(n).ok().filter(|v| !v.trim().is_empty());
            if self.opts.base_url.is_none() {
                self.opts.base_url = var("GEMINI_BASE_URL");
            }
            if self.opts.api_key.is_none() {
                self.opts.api_key = var("GEMINI_API_KEY").or_else(|| var("GOOGLE_API_KEY"));
            }
        }
        let base_url = self.opts.base_url.clone().unwrap_or_else(|| GEMINI_BASE_URL.to_string());
        let key = self.opts.api_key.clone();
        if key.is_none() && base_url.contains("generativelanguage.googleapis.com") {
            return Err(UserError::new(
                "GEMINI_API_KEY is not set: export it with your Gemini API key (or GOOGLE_API_KEY), or pass it with `GeminiModel::builder(..).api_key(...)`",
            ));
        }
        let mut auth = HeaderMap::new();
        // A custom base URL (a proxy, a compatible server) may need no key.
        if let Some(key) = &key {
            header(&mut auth, "x-goog-api-key", key, true)?;
        }
        let http = self.opts.transport(SYSTEM, &self.model, auth, DEFAULT_TIMEOUT)?;
        Ok(GeminiModel {
            name: self.model.trim_start_matches("models/").to_string(),
            base_url: base_url.trim_end_matches('/').to_string(),
            api_version: self.api_version,
            http: Arc::new(http),
            stream_function_call_arguments: self.stream_function_call_arguments,
        })
    }
}

fn usage(u: &Value) -> RequestUsage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let thoughts = n("thoughtsTokenCount");
    let mut usage =
        RequestUsage::new(n("promptTokenCount") + n("toolUsePromptTokenCount"), n("candidatesTokenCount") + thoughts);
    usage.cache_read_tokens = n("cachedContentTokenCount");
    if thoughts > 0 {
        usage.details = Some(Box::new(json!({"thoughts_tokens": thoughts})));
    }
    usage
}

fn finish_reason(raw: &str) -> &'static str {
    match raw {
        "STOP" => "stop",
        "MAX_TOKENS" => "length",
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => "content_filter",
        _ => "error",
    }
}

impl GeminiModel {
    /// A builder for `model`.
    pub fn builder(model: impl Into<String>) -> GeminiModelBuilder {
        GeminiModelBuilder {
            model: model.into(),
            opts: ConnectionOptions::default(),
            api_version: "v1beta".into(),
            from_env: false,
            stream_function_call_arguments: false,
        }
    }

    /// The model with its key and base URL from `GEMINI_API_KEY` and `GEMINI_BASE_URL`.
    pub fn from_env(model: impl Into<String>) -> Result<Self, UserError> {
        Self::builder(model).from_env().build()
    }

    fn url(&self, stream: bool) -> String {
        // A base URL whose path already names a version (`.../v1beta`, or Vertex AI's
        // `.../v1/projects/{p}/locations/{l}/publishers/google`) is used as it is.
        let path = self.base_url.split("://").nth(1).and_then(|rest| rest.split_once('/')).map_or("", |(_, p)| p);
        let versioned = path.split('/').any(|seg| {
            seg.len() > 1 && seg.starts_with('v') && seg[1..].chars().next().is_some_and(|c| c.is_ascii_digit())
        });
        let base = if versioned { self.base_url.clone() } else { join_url(&self.base_url, &self.api_version) };
        let method = if stream { "streamGenerateContent?alt=sse" } else { "generateContent" };
        join_url(&base, &format!("models/{}:{method}", self.name))
    }

    /// The request body for these messages and parameters (what is POSTed); `stream` for
    /// `streamGenerateContent`.
    pub fn request_body(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
        stream: bool,
    ) -> Result<Value, ModelError> {
        wire::check_depth(messages, params)?;
        let mut body = Map::new();
        let mut system: Vec<String> = wire::instructions(messages, params).into_iter().collect();
        system.extend(messages.iter().filter_map(ModelMessage::as_request).flat_map(|r| {
            r.parts.iter().filter_map(|p| match p {
                ModelRequestPart::SystemPrompt(s) => Some(s.content.clone()),
                _ => None,
            })
        }));
        let messages = wire::localize_native_searches(messages, |_| false);
        // Gemini 3 takes images, PDFs and plain text inline in a function response; other files
        // (and every file for older models) follow in a user message.
        let inline = self.needs_signature();
        let messages = crate::messages::move_tool_files(&messages, |m| inline && in_function_response(m));
        body.insert("contents".into(), Value::Array(self.map_messages(&messages)?));
        if !system.is_empty() {
            body.insert("systemInstruction".into(), json!({"parts": [{"text": system.join("\n\n")}]}));
        }
        let choice = wire::tool_choice(settings, params)?;
        let tools: Vec<&ToolDefinition> = wire::tools_without_native_search(params, &messages);
        if !tools.is_empty() {
            let decls: Vec<Value> = tools.iter().map(|t| map_tool(t)).collect();
            body.insert("tools".into(), json!([{"functionDeclarations": decls}]));
            let config = match &choice {
                ResolvedToolChoice::Auto => None,
                ResolvedToolChoice::None => Some(json!({"mode": "NONE"})),
                ResolvedToolChoice::Required => Some(json!({"mode": "ANY"})),
                ResolvedToolChoice::Restricted { required, tools } => Some(json!({
                    "mode": if *required { "ANY" } else { "VALIDATED" },
                    "allowedFunctionNames": tools.iter().collect::<Vec<_>>(),
                })),
            };
            let mut config = config.unwrap_or_else(|| json!({}));
            if stream && self.stream_function_call_arguments {
                config["streamFunctionCallArguments"] = true.into();
            }
            if config.as_object().is_some_and(|c| !c.is_empty()) {
                body.insert("toolConfig".into(), json!({"functionCallingConfig": config}));
            }
        }
        let mut generation = Map::new();
        if let Some(s) = settings {
            put(&mut generation, "maxOutputTokens", s.max_tokens);
            put(&mut generation, "temperature", s.temperature);
            put(&mut generation, "topP", s.top_p);
            put(&mut generation, "seed", s.seed);
        }
        native::image_config(&params.native_tools, &mut generation);
        // Native output: JSON text of the output's schema (titled and described as Pydantic AI does).
        if params.output_mode == crate::output_mode::OutputMode::Native
            && let Some(o) = &params.output_object
        {
            let mut schema = o.json_schema.clone();
            if let Some(m) = schema.as_object_mut() {
                if !o.name.is_empty() {
                    m.insert("title".into(), o.name.clone().into());
                }
                if let Some(d) = &o.description {
                    m.insert("description".into(), d.clone().into());
                }
            }
            generation.insert("responseMimeType".into(), "application/json".into());
            generation.insert("responseJsonSchema".into(), schema);
        }
        if !generation.is_empty() {
            body.insert("generationConfig".into(), Value::Object(generation));
        }
        wire::push_tools(&mut body, params.native_tools.iter().filter_map(native::tool).collect());
        let mut body = Value::Object(body);
        wire::merge_extra(&mut body, settings.and_then(|s| s.extra.as_deref()));
        Ok(body)
    }

    fn needs_signature(&self) -> bool {
        self.name.contains("gemini-3")
    }

    fn function_response(&self, name: &str, id: &str, response: Value) -> Value {
        let mut f = Map::new();
        f.insert("name".into(), name.into());
        f.insert("response".into(), response);
        if !id.starts_with("pyd_ai_") {
            f.insert("id".into(), id.into());
        }
        json!({"functionResponse": Value::Object(f)})
    }

    fn tool_response(&self, part: &ToolReturnPart) -> Value {
        if let Some((items, was_list)) = part.items() {
            // The files kept here are named in the response and sent in its `parts`.
            let mut texts = Vec::with_capacity(items.len());
            let mut files = Vec::new();
            for item in items {
                match item {
                    ReturnItem::Text(t) => texts.push(Value::String(t)),
                    ReturnItem::File(m) => {
                        texts.push(Value::String(format!("See file {}.", m.identifier())));
                        files.push(map_media(&m));
                    }
                }
            }
            let output = if was_list { Value::Array(texts) } else { texts.pop().unwrap_or_default() };
            let mut response = self.function_response(&part.tool_name, &part.tool_call_id, json!({"output": output}));
            response["functionResponse"]["parts"] = Value::Array(files);
            return response;
        }
        let response = match part.outcome {
            ToolOutcome::Success => match &part.content {
                Value::Object(_) => part.content.clone(),
                other => json!({"output": other}),
            },
            _ => json!({"error": wire::tool_return_text(part)}),
        };
        self.function_response(&part.tool_name, &part.tool_call_id, response)
    }

    fn map_messages(&self, messages: &[ModelMessage]) -> Result<Vec<Value>, ModelError> {
        let mut turns = wire::Turns::default();
        for message in messages {
            match message {
                ModelMessage::Request(request) => {
                    let mut parts = Vec::new();
                    for part in &request.parts {
                        match part {
                            ModelRequestPart::SystemPrompt(_) => {}
                            ModelRequestPart::UserPrompt(p) => parts.extend(map_user_content(&p.content)),
                            ModelRequestPart::ToolReturn(p) => parts.push(self.tool_response(p)),
                            ModelRequestPart::RetryFeedback(p) => parts.push(json!({"text": wire::feedback_text(p)})),
                            ModelRequestPart::RetryPrompt(p) => match (&p.tool_name, &p.tool_call_id) {
                                (Some(name), Some(id)) => parts.push(self.function_response(
                                    name,
                                    id,
                                    json!({"error": wire::retry_prompt_text(p)}),
                                )),
                                _ => parts.push(json!({"text": wire::retry_prompt_text(p)})),
                            },
                        }
                    }
                    turns.push("user", parts);
                }
                ModelMessage::Response(response) => {
                    let own = response.provider_name.as_deref() == Some(SYSTEM);
                    let signature = |details: Option<&Value>| -> Option<Value> {
                        own.then(|| details?.get("thought_signature").cloned()).flatten()
                    };
                    let mut parts = Vec::new();
                    let mut first_call = true;
                    for part in &response.parts {
                        match part {
                            ModelResponsePart::Text(t) if !t.content.is_empty() => {
                                let mut p = json!({"text": t.content});
                                if let Some(sig) = signature(t.provider_details.as_deref()) {
                                    p["thoughtSignature"] = sig;
                                }
                                parts.push(p);
                            }
                            ModelResponsePart::Text(_) => {}
                            ModelResponsePart::ToolCall(c) => {
                                let mut call = Map::new();
                                call.insert("name".into(), c.tool_name.clone().into());
                                call.insert("args".into(), wire::args_object(&c.args));
                                if !c.tool_call_id.starts_with("pyd_ai_") {
                                    call.insert("id".into(), c.tool_call_id.clone().into());
                                }
                                let mut p = json!({"functionCall": Value::Object(call)});
                                match signature(c.provider_details.as_deref()) {
                                    Some(sig) => p["thoughtSignature"] = sig,
                                    None if first_call && self.needs_signature() => {
                                        p["thoughtSignature"] = SKIP_SIGNATURE.into();
                                    }
                                    None => {}
                                }
                                first_call = false;
                                parts.push(p);
                            }
                            ModelResponsePart::Thinking(t) if own && t.provider_name.as_deref() == Some(SYSTEM) => {
                                let mut p = json!({"text": t.content, "thought": true});
                                if let Some(sig) = &t.signature {
                                    p["thoughtSignature"] = sig.clone().into();
                                }
                                parts.push(p);
                            }
                            ModelResponsePart::Thinking(_) => {}
                            // Its own code runs and files go back; another provider's are not sent.
                            ModelResponsePart::NativeToolCall(_)
                            | ModelResponsePart::NativeToolReturn(_)
                            | ModelResponsePart::File(_) => {
                                if own {
                                    parts.extend(native::replay(part));
                                }
                            }
                        }
                    }
                    turns.push("model", parts);
                }
            }
        }
        Ok(turns.into_json("parts"))
    }

    pub(super) fn part_from_wire(&self, p: &Value) -> Option<ModelResponsePart> {
        if let Some(part) = native::part_of(p) {
            return Some(part);
        }
        let signature = p.get("thoughtSignature").and_then(Value::as_str);
        if let Some(call) = p.get("functionCall") {
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .unwrap_or_else(generate_tool_call_id);
            let mut c = ToolCallPart::new(
                call.get("name").and_then(Value::as_str).unwrap_or_default(),
                call.get("args").cloned().unwrap_or_else(|| json!({})),
                id,
            );
            c.provider_name = Some(SYSTEM.into());
            if let Some(sig) = signature {
                c.provider_details = Some(Box::new(json!({"thought_signature": sig})));
            }
            return Some(ModelResponsePart::ToolCall(c));
        }
        let text = p.get("text").and_then(Value::as_str)?;
        if p.get("thought").and_then(Value::as_bool) == Some(true) {
            let mut t = ThinkingPart::new(text);
            t.signature = signature.map(str::to_string);
            t.provider_name = Some(SYSTEM.into());
            return Some(ModelResponsePart::Thinking(t));
        }
        let mut t = TextPart::new(text);
        if let Some(sig) = signature {
            t.provider_name = Some(SYSTEM.into());
            t.provider_details = Some(Box::new(json!({"thought_signature": sig})));
        }
        Some(ModelResponsePart::Text(t))
    }

    /// Reads a `generateContent` response body. An answer without the documented shape (no
    /// candidate, a field of another type...) is an `UnexpectedModelBehavior` error saying which
    /// field is wrong.
    pub fn parse_response(&self, v: &Value) -> Result<ModelResponse, ModelError> {
        let shape = Shape::answer(SYSTEM, v, &self.http.redactor);
        shape.object(v, "the answer")?;
        let candidate = check_candidate(&shape, v, false)?;
        if candidate.is_none() {
            if let Some(reason) = v.pointer("/promptFeedback/blockReason").and_then(Value::as_str) {
                return Err(ModelError::new(
                    crate::model::ModelErrorKind::UnexpectedResponse,
                    format!(
                        "Gemini blocked the prompt ({}); rephrase the request or adjust the safety settings",
                        self.http.snippet(reason, 100)
                    ),
                ));
            }
            return Err(shape.error(if v.get("candidates").is_some() {
                "`candidates` is empty"
            } else {
                "`candidates` is missing"
            }));
        }
        let mut parts: Vec<ModelResponsePart> = Vec::new();
        parts.extend(candidate
            .and_then(|c| c.pointer("/content/parts"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| self.part_from_wire(p))
            .filter(
                |p| !matches!(p, ModelResponsePart::Text(t) if t.content.is_empty() && t.provider_details.is_none()),
            ));
        // The search the answer was grounded on follows it.
        parts.extend(native::grounding(candidate));
        native::link_results(&mut parts);
        let mut response = ModelResponse::new(parts);
        self.fill(&mut response, v, candidate.and_then(|c| c.get("finishReason")).and_then(Value::as_str));
        Ok(response)
    }

    pub(super) fn fill(&self, response: &mut ModelResponse, v: &Value, finish: Option<&str>) {
        response.usage = v.get("usageMetadata").map(usage).unwrap_or_default();
        response.model_name = Some(v.get("modelVersion").and_then(Value::as_str).unwrap_or(&self.name).into());
        response.provider_name = Some(SYSTEM.into());
        response.provider_url = Some(self.base_url.as_str().into());
        response.provider_response_id = v.get("responseId").and_then(Value::as_str).map(Into::into);
        if let Some(raw) = finish {
            response.finish_reason = Some(finish_reason(raw).into());
            response.provider_details = Some(Box::new(json!({"finish_reason": raw})));
        }
    }
}

/// Checks the types of the fields of the first candidate (of an answer or a stream chunk) and
/// returns it; in a stream, a function call may come without its name (`partialArgs` chunks).
pub(super) fn check_candidate<'a>(
    shape: &Shape<'a>,
    v: &'a Value,
    streamed: bool,
) -> Result<Option<&'a Value>, ModelError> {
    let Some(candidate) = shape.opt_array(v, "candidates", "candidates")?.and_then(|c| c.first()) else {
        return Ok(None);
    };
    shape.object(candidate, "candidates[0]")?;
    shape.opt_str(candidate, "finishReason", "candidates[0].finishReason")?;
    let Some(content) = shape.opt_object(candidate, "content", "candidates[0].content")? else {
        return Ok(Some(candidate));
    };
    let parts = shape.opt_array(content, "parts", "candidates[0].content.parts")?;
    for (n, part) in parts.into_iter().flatten().enumerate() {
        let path = format!("candidates[0].content.parts[{n}]");
        shape.object(part, &path)?;
        shape.opt_str(part, "text", &format!("{path}.text"))?;
        shape.opt_str(part, "thoughtSignature", &format!("{path}.thoughtSignature"))?;
        if let Some(call) = shape.opt_object(part, "functionCall", &format!("{path}.functionCall"))? {
            let name = format!("{path}.functionCall.name");
            if streamed {
                shape.opt_str(call, "name", &name)?;
            } else {
                shape.str(call, "name", &name)?;
            }
            shape.opt_str(call, "id", &format!("{path}.functionCall.id"))?;
            shape.opt_object(call, "args", &format!("{path}.functionCall.args"))?;
            shape.opt_array(call, "partialArgs", &format!("{path}.functionCall.partialArgs"))?;
        }
    }
    Ok(Some(candidate))
}

fn map_tool(def: &ToolDefinition) -> Value {
    let mut f = Map::new();
    f.insert("name".into(), def.name.clone().into());
    put(&mut f, "description", def.description.clone());
    let params = gemini_schema(&def.parameters_json_schema);
    let empty = params.get("properties").and_then(Value::as_object).is_none_or(|p| p.is_empty());
    if !empty {
        f.insert("parameters".into(), params);
    }
    if def.include_return_schema == Some(true)
        && let Some(r) = &def.return_schema
    {
        f.insert("responseJsonSchema".into(), (**r).clone());
    }
    Value::Object(f)
}

fn map_user_content(content: &UserPromptContent) -> Vec<Value> {
    let items = match content {
        UserPromptContent::Text(s) => return vec![json!({"text": s})],
        UserPromptContent::Parts(items) => items,
    };
    let mut out = Vec::new();
    for item in items {
        match item {
            UserContent::Text(t) => out.push(json!({"text": t})),
            UserContent::TextContent(t) => out.push(json!({"text": t.content})),
            UserContent::Media(m) => out.push(map_media(m)),
            UserContent::Other(v) => {
                tracing::warn!(content = %v, "user content of an unknown kind is not sent to Gemini")
            }
        }
    }
    out
}

/// Whether Gemini 3 takes this file inline in a function response (Pydantic AI's list: PNG,
/// JPEG and WebP images, PDF and plain text, as inline data).
fn in_function_response(m: &MediaContent) -> bool {
    matches!(m, MediaContent::Binary(b)
        if matches!(b.media_type.as_str(), "image/png" | "image/jpeg" | "image/webp" | "application/pdf" | "text/plain"))
}

fn map_media(m: &MediaContent) -> Value {
    match m {
        MediaContent::Binary(b) => json!({"inlineData": {"mimeType": b.media_type, "data": b.data}}),
        MediaContent::ImageUrl(u)
        | MediaContent::AudioUrl(u)
        | MediaContent::VideoUrl(u)
        | MediaContent::DocumentUrl(u) => {
            let mime =
                u.media_type.clone().or_else(|| wire::guess_media_type(&u.url).map(str::to_string)).unwrap_or_else(
                    || {
                        match m {
                            MediaContent::ImageUrl(_) => "image/jpeg",
                            MediaContent::AudioUrl(_) => "audio/mpeg",
                            MediaContent::VideoUrl(_) => "video/mp4",
                            _ => "application/pdf",
                        }
                        .to_string()
                    },
                );
            json!({"fileData": {"mimeType": mime, "fileUri": u.url}})
        }
    }
}

impl Model for GeminiModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn system(&self) -> &str {
        SYSTEM
    }

    fn api(&self) -> &str {
        "gemini"
    }

    fn native_tool_support(&self) -> crate::native::NativeToolKinds {
        use crate::native::NativeToolKind::*;
        let images = native::makes_images(&self.name).then_some(ImageGeneration);
        crate::native::NativeToolKinds::of([WebSearch, WebFetch, CodeExecution].into_iter().chain(images))
    }

    /// `google_search` and `url_context` take no domain filter and no limit.
    fn native_tool_unapplied_settings(&self) -> Vec<(crate::native::NativeToolKind, &'static str)> {
        use crate::native::NativeToolKind::{WebFetch, WebSearch};
        [WebSearch, WebFetch]
            .into_iter()
            .flat_map(|k| [(k, "allowed_domains"), (k, "blocked_domains"), (k, "max_uses")])
            .collect()
    }

    fn native_tool_return_schemas(&self) -> bool {
        true
    }

    /// `generationConfig.responseMimeType: application/json` with `responseJsonSchema`.
    fn native_output_support(&self) -> bool {
        true
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
        self.http.request_json(&self.url(false), &body, settings_timeout(settings), |v| self.parse_response(v)).await
    }
}

impl StreamingModel for GeminiModel {
    async fn request_stream(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelStream, ModelError> {
        // Refused before anything walks the history (the files moved, the media inlined) or the schemas.
        wire::check_depth(messages, params)?;
        let body = self.request_body(messages, settings, params, true)?;
        self.http.stream(&self.url(true), &body, settings_timeout(settings), GeminiStream::new(self.clone())).await
    }
}
