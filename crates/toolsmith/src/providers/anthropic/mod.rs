//! [`AnthropicModel`]: Anthropic's Messages API (`POST {base}/v1/messages`).
//!
//! # Mapping
//! - System prompts and instructions are joined into `system`; consecutive turns of one role
//!   are merged (the API wants user and assistant turns to alternate).
//! - Tool returns are `tool_result` blocks; a retried, denied or failed call is sent with
//!   `is_error: true` and, for a retry, Pydantic AI's retry text; retry feedback is a user
//!   `text` block.
//! - Thinking parts produced by Anthropic go back as `thinking` blocks with their signature
//!   (`redacted_thinking` blocks as they came); thinking from other providers is not sent.
//! - `tool_choice`: `auto`, `none`, `any` (required), `{"type": "tool"}` for one required tool
//!   with the full list. Several tools, or a restriction that still allows text, are filtered
//!   client-side (cache-breaking). With extended thinking enabled (`extra.thinking.type` of
//!   `enabled` / `adaptive`), and on the families that refuse forcing outright (Fable and Mythos
//!   5.1 and 5.2, Opus 5.5, Sonnet 5.5), the API only accepts `auto` / `none`, so a required
//!   tool becomes a filtered list with `auto`. `parallel_tool_calls: false` sets `disable_parallel_tool_use`.
//!   Return schemas are appended to the description.
//! - Native tool search: tools with `defer_loading` are sent with `defer_loading: true` next to
//!   the `tool_search_tool_bm25` (default) or `tool_search_tool_regex` server tool, with the
//!   `advanced-tool-use-2025-11-20` beta header, on models that support it (Claude 4.5 and
//!   later) or when set with [`AnthropicModelBuilder::native_tool_search`]. The
//!   `server_tool_use` and `tool_search_tool_result` blocks of a response are kept in
//!   `provider_details.anthropic_blocks` and replayed in place. A client-side search tool's
//!   return (`tool_kind: "tool-search"`, content: a list of tool names, or an object with a
//!   `tools` / `discovered_tools` list) becomes `tool_reference` blocks (the custom tool-search
//!   result Anthropic documents), for the names that are deferred tools of the request. Without
//!   native search, the deferred tools the history discovered are sent as ordinary tools and
//!   the others are not.
//! - Tool search across providers: a server-side search this request cannot replay natively
//!   (OpenAI Responses' `tool_search_call` / `tool_search_output`, or Anthropic's own blocks
//!   when native search is off) is sent as a `search_tools` `tool_use` and its `tool_result`,
//!   which with native search on lists the found tools as `tool_reference` blocks, so they stay
//!   loaded. Anthropic's server blocks cannot be rebuilt from another provider's: their ids
//!   are issued by Anthropic's server.

mod native;
mod request;
mod stream;

use stream::AnthropicStream;

use std::sync::Arc;

use reqwest::header::HeaderMap;
use serde_json::{Map, Value, json};

use crate::error::UserError;
use crate::messages::{
    ModelMessage, ModelResponse, ModelResponsePart, TextPart, ThinkingPart, ToolCallPart, generate_tool_call_id,
};
use crate::model::{Model, ModelError, ModelRequestParameters, ModelSettings};
use crate::model::{ModelStream, StreamingModel};
use crate::providers::connection::{ConnectionOptions, DEFAULT_TIMEOUT, connection_builder_methods};
use crate::providers::http::{HttpTransport, header, join_url, settings_timeout};
use crate::providers::redact::Redactor;
use crate::providers::wire::{ERROR_CHARS, Shape, put};
use crate::usage::RequestUsage;

/// Anthropic's API.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
const API_VERSION: &str = "2023-06-01";
const TOOL_SEARCH_BETA: &str = "advanced-tool-use-2025-11-20";

/// Which server-side tool search Anthropic runs over deferred tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NativeToolSearch {
    /// Natural-language queries ranked with BM25 (`tool_search_tool_bm25_20251119`).
    #[default]
    Bm25,
    /// Python-regex queries (`tool_search_tool_regex_20251119`).
    Regex,
}

impl NativeToolSearch {
    fn name(self) -> &'static str {
        match self {
            NativeToolSearch::Bm25 => "tool_search_tool_bm25",
            NativeToolSearch::Regex => "tool_search_tool_regex",
        }
    }

    fn tool(self) -> Value {
        match self {
            NativeToolSearch::Bm25 => {
                json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
            }
            NativeToolSearch::Regex => {
                json!({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"})
            }
        }
    }
}

/// Whether a Claude model has server-side tool search (4.5 and later).
fn supports_tool_search(model: &str) -> bool {
    let numbers: Vec<u32> =
        model.split(['-', '.']).filter_map(|s| s.parse::<u32>().ok()).filter(|n| *n < 100).collect();
    match numbers.as_slice() {
        [major, minor, ..] => *major > 4 || (*major == 4 && *minor >= 5),
        [major] => *major > 4,
        [] => false,
    }
}

/// A Claude model served by Anthropic's Messages API.
///
/// ```no_run
/// let model = toolsmith::providers::AnthropicModel::from_env("claude-sonnet-4-5")?;
/// # Ok::<(), toolsmith::UserError>(())
/// ```
#[derive(Debug, Clone)]
pub struct AnthropicModel {
    name: String,
    base_url: String,
    http: Arc<HttpTransport>,
    default_max_tokens: u32,
    tool_search: Option<NativeToolSearch>,
}

/// Builds an [`AnthropicModel`].
#[derive(Clone)]
pub struct AnthropicModelBuilder {
    model: String,
    opts: ConnectionOptions,
    default_max_tokens: u32,
    tool_search: Option<Option<NativeToolSearch>>,
    from_env: bool,
}

impl std::fmt::Debug for AnthropicModelBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicModelBuilder").field("model", &self.model).finish_non_exhaustive()
    }
}

impl AnthropicModelBuilder {
    connection_builder_methods!();

    /// The `max_tokens` sent when the settings have none (the API requires one; default 4096).
    pub fn default_max_tokens(mut self, n: u32) -> Self {
        self.default_max_tokens = n;
        self
    }

    /// Sets the server-side tool search for deferred tools (`None` disables it; default: BM25 on
    /// models that support it).
    pub fn native_tool_search(mut self, search: Option<NativeToolSearch>) -> Self {
        self.tool_search = Some(search);
        self
    }

    /// Reads the key and base URL missing from the builder from `ANTHROPIC_API_KEY` and
    /// `ANTHROPIC_BASE_URL`.
    pub fn from_env(mut self) -> Self {
        self.from_env = true;
        self
    }

    /// Builds the model; a key is required for Anthropic's own API.
    pub fn build(mut self) -> Result<AnthropicModel, UserError> {
        if self.from_env {
            if self.opts.base_url.is_none() {
                self.opts.base_url = std::env::var("ANTHROPIC_BASE_URL").ok().filter(|v| !v.trim().is_empty());
            }
            if self.opts.api_key.is_none() {
                self.opts.api_key = std::env::var("ANTHROPIC_API_KEY").ok().filter(|v| !v.trim().is_empty());
            }
        }
        let base_url = self.opts.base_url.clone().unwrap_or_else(|| ANTHROPIC_BASE_URL.to_string());
        let key = self.opts.api_key.clone();
        if key.is_none() && base_url.contains("api.anthropic.com") {
            return Err(UserError::new(
                "ANTHROPIC_API_KEY is not set: export it with your Anthropic API key, or pass it with `AnthropicModel::builder(..).api_key(...)`",
            ));
        }
        let mut auth = HeaderMap::new();
        // A custom base URL (a proxy, a compatible server) may need no key.
        if let Some(key) = &key {
            header(&mut auth, "x-api-key", key, true)?;
        }
        header(&mut auth, "anthropic-version", API_VERSION, false)?;
        let http = self.opts.transport("anthropic", &self.model, auth, DEFAULT_TIMEOUT)?;
        Ok(AnthropicModel {
            tool_search: self
                .tool_search
                .unwrap_or_else(|| supports_tool_search(&self.model).then_some(NativeToolSearch::Bm25)),
            name: self.model,
            base_url: base_url.trim_end_matches('/').to_string(),
            http: Arc::new(http),
            default_max_tokens: self.default_max_tokens,
        })
    }
}

pub(super) fn usage(u: &Value) -> RequestUsage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let cache_write = n("cache_creation_input_tokens");
    let cache_read = n("cache_read_input_tokens");
    let mut usage = RequestUsage::new(n("input_tokens") + cache_write + cache_read, n("output_tokens"));
    usage.cache_write_tokens = cache_write;
    usage.cache_read_tokens = cache_read;
    if let Some(s) = u.get("server_tool_use").filter(|s| s.is_object()) {
        usage.details = Some(Box::new(json!({"server_tool_use": s})));
    }
    usage
}

pub(super) fn finish_reason(raw: &str) -> &'static str {
    match raw {
        "end_turn" | "stop_sequence" | "pause_turn" => "stop",
        "max_tokens" | "model_context_window_exceeded" => "length",
        "tool_use" => "tool_call",
        "refusal" => "content_filter",
        _ => "error",
    }
}

fn thinking_enabled(settings: Option<&ModelSettings>) -> bool {
    settings
        .and_then(|s| s.extra.as_ref())
        .and_then(|e| e.pointer("/thinking/type"))
        .and_then(Value::as_str)
        .is_some_and(|t| t == "enabled" || t == "adaptive")
}

/// The tool names a client-side tool search returned.
pub(super) fn discovered_names(content: &Value) -> Option<Vec<String>> {
    let list = match content {
        Value::Array(items) => items,
        Value::Object(m) => m.get("tools").or_else(|| m.get("discovered_tools")).and_then(Value::as_array)?,
        _ => return None,
    };
    Some(
        list.iter()
            .filter_map(|i| match i {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) => {
                    o.get("name").or_else(|| o.get("tool_name")).and_then(Value::as_str).map(str::to_string)
                }
                _ => None,
            })
            .collect(),
    )
}

impl AnthropicModel {
    /// A builder for `model`.
    pub fn builder(model: impl Into<String>) -> AnthropicModelBuilder {
        AnthropicModelBuilder {
            model: model.into(),
            opts: ConnectionOptions::default(),
            default_max_tokens: 4096,
            tool_search: None,
            from_env: false,
        }
    }

    /// The model with its key and base URL from `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`.
    pub fn from_env(model: impl Into<String>) -> Result<Self, UserError> {
        Self::builder(model).from_env().build()
    }

    fn url(&self) -> String {
        if self.base_url.ends_with("/v1") {
            join_url(&self.base_url, "messages")
        } else {
            join_url(&self.base_url, "v1/messages")
        }
    }

    fn uses_tool_search(&self, params: &ModelRequestParameters) -> bool {
        self.tool_search.is_some() && params.all_tools().any(|t| t.defer_loading)
    }

    /// Reads a Messages API response body. An answer without the documented shape (no
    /// `content`, a field of another type...) is an `UnexpectedModelBehavior` error saying which
    /// field is wrong.
    pub fn parse_response(&self, v: &Value) -> Result<ModelResponse, ModelError> {
        let shape = Shape::answer("anthropic", v, &self.http.redactor);
        shape.object(v, "the answer")?;
        if v.get("type").and_then(Value::as_str) == Some("error") {
            return Err(ModelError::new(
                crate::model::ModelErrorKind::Api,
                format!("anthropic answered with an error: {}", error_text(&self.http.redactor, v)),
            ));
        }
        let content = shape.array(v, "content", "content")?;
        let mut parts = Vec::new();
        let mut raw = Vec::new();
        let mut mcp_calls = Vec::new();
        for (n, block) in content.iter().enumerate() {
            let path = format!("content[{n}]");
            shape.object(block, &path)?;
            match shape.opt_str(block, "type", &format!("{path}.type"))? {
                Some("text") => {
                    let text = shape.opt_str(block, "text", &format!("{path}.text"))?.unwrap_or_default();
                    if !text.is_empty() {
                        parts.push(ModelResponsePart::Text(TextPart::new(text)));
                    }
                }
                Some("tool_use") => {
                    let id = shape
                        .opt_str(block, "id", &format!("{path}.id"))?
                        .map(str::to_string)
                        .unwrap_or_else(generate_tool_call_id);
                    let name = shape.str(block, "name", &format!("{path}.name"))?;
                    let input = shape.opt_object(block, "input", &format!("{path}.input"))?;
                    let mut c = ToolCallPart::new(name, input.cloned().unwrap_or_else(|| json!({})), id);
                    c.provider_name = Some("anthropic".into());
                    parts.push(ModelResponsePart::ToolCall(c));
                }
                Some("thinking") => {
                    let thinking = shape.opt_str(block, "thinking", &format!("{path}.thinking"))?;
                    let mut t = ThinkingPart::new(thinking.unwrap_or_default());
                    t.signature = shape.opt_str(block, "signature", &format!("{path}.signature"))?.map(str::to_string);
                    t.provider_name = Some("anthropic".into());
                    parts.push(ModelResponsePart::Thinking(t));
                }
                Some("redacted_thinking") => {
                    let mut t = ThinkingPart::new("");
                    t.id = Some("redacted_thinking".into());
                    t.signature = shape.opt_str(block, "data", &format!("{path}.data"))?.map(str::to_string);
                    t.provider_name = Some("anthropic".into());
                    parts.push(ModelResponsePart::Thinking(t));
                }
                _ => match native::part_of(block, &mcp_calls) {
                    Some(part) => {
                        if let ModelResponsePart::NativeToolCall(c) = &part
                            && c.tool_name.starts_with("mcp_server:")
                        {
                            mcp_calls.push((c.tool_call_id.clone(), c.tool_name.clone()));
                        }
                        parts.push(part);
                    }
                    None => raw.push(json!({"after_part": parts.len(), "block": block})),
                },
            }
        }
        let mut response = ModelResponse::new(parts);
        fill(
            &mut response,
            &self.name,
            &self.base_url,
            v.get("model").and_then(Value::as_str),
            v.get("id").and_then(Value::as_str),
            v.get("usage").map(usage).unwrap_or_default(),
            v.get("stop_reason").and_then(Value::as_str),
            raw,
        );
        Ok(response)
    }
}

/// An error object's message (`{"error": {"type", "message"}}`, or the object), redacted and
/// bounded.
pub(super) fn error_text(redactor: &Redactor, v: &Value) -> String {
    let text = v
        .pointer("/error/message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| v.get("error").unwrap_or(v).to_string());
    redactor.snippet(&text, ERROR_CHARS)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn fill(
    response: &mut ModelResponse,
    name: &str,
    base_url: &str,
    model: Option<&str>,
    id: Option<&str>,
    usage: RequestUsage,
    stop: Option<&str>,
    raw: Vec<Value>,
) {
    response.usage = usage;
    response.model_name = Some(model.unwrap_or(name).into());
    response.provider_name = Some("anthropic".into());
    response.provider_url = Some(base_url.into());
    response.provider_response_id = id.map(Into::into);
    response.finish_reason = stop.map(|s| finish_reason(s).into());
    let mut details = Map::new();
    put(&mut details, "finish_reason", stop);
    if !raw.is_empty() {
        details.insert("anthropic_blocks".into(), Value::Array(raw));
    }
    if !details.is_empty() {
        response.provider_details = Some(Box::new(Value::Object(details)));
    }
}

impl Model for AnthropicModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn system(&self) -> &str {
        "anthropic"
    }

    fn api(&self) -> &str {
        "anthropic-messages"
    }

    /// Structured outputs (`output_config.format`), on the models Pydantic AI lists as taking them.
    fn native_output_support(&self) -> bool {
        STRUCTURED_OUTPUT_MODELS.iter().any(|p| self.name.starts_with(p))
    }

    fn native_tool_support(&self) -> crate::native::NativeToolKinds {
        use crate::native::NativeToolKind::*;
        crate::native::NativeToolKinds::of([WebSearch, WebFetch, CodeExecution, McpServer, Memory])
    }

    fn tool_search_support(&self) -> crate::model::ToolSearchSupport {
        match self.tool_search {
            Some(_) => crate::model::ToolSearchSupport::Named,
            None => crate::model::ToolSearchSupport::None,
        }
    }

    async fn request(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelResponse, ModelError> {
        // Refused before anything walks the history (the files moved, the media inlined).
        crate::providers::wire::check_depth(messages, params)?;
        let body = self.request_body(messages, settings, params, false)?;
        let http = self.http_for(params);
        http.request_json(&self.url(), &body, settings_timeout(settings), |v| self.parse_response(v)).await
    }
}

impl AnthropicModel {
    /// The transport with the beta headers this request needs (tool search, native tools).
    fn http_for(&self, params: &ModelRequestParameters) -> std::borrow::Cow<'_, HttpTransport> {
        let mut betas: Vec<&str> = Vec::new();
        if self.uses_tool_search(params) {
            betas.push(TOOL_SEARCH_BETA);
        }
        betas.extend(native::betas(&params.native_tools));
        if betas.is_empty() {
            return std::borrow::Cow::Borrowed(self.http.as_ref());
        }
        let mut http = self.http.as_ref().clone();
        let mut beta = http.headers.get("anthropic-beta").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
        for b in betas {
            if !beta.split(',').any(|x| x.trim() == b) {
                if !beta.is_empty() {
                    beta.push(',');
                }
                beta.push_str(b);
            }
        }
        if header(&mut http.headers, "anthropic-beta", &beta, false).is_ok() {
            return std::borrow::Cow::Owned(http);
        }
        std::borrow::Cow::Borrowed(self.http.as_ref())
    }
}

impl StreamingModel for AnthropicModel {
    async fn request_stream(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelStream, ModelError> {
        // Refused before anything walks the history (the files moved, the media inlined).
        crate::providers::wire::check_depth(messages, params)?;
        let body = self.request_body(messages, settings, params, true)?;
        let http = self.http_for(params);
        let processor = AnthropicStream::new(self.name.clone(), self.base_url.clone(), http.redactor.clone());
        http.stream(&self.url(), &body, settings_timeout(settings), processor).await
    }
}

/// The models that take structured outputs (Pydantic AI's `supports_json_schema_output`).
const STRUCTURED_OUTPUT_MODELS: &[&str] = &[
    "claude-fable-5",
    "claude-mythos-5",
    "claude-haiku-4-5",
    "claude-sonnet-4-5",
    "claude-sonnet-4-6",
    "claude-opus-4-1",
    "claude-opus-4-5",
    "claude-opus-4-6",
    "claude-opus-4-7",
    "claude-opus-4-8",
    "claude-opus-5",
    "claude-sonnet-5",
    "claude-haiku-5-5",
];
