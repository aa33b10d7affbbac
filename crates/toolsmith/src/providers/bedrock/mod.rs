//! [`BedrockModel`]: AWS Bedrock's Converse API (`POST {base}/model/{modelId}/converse`, and
//! `/converse-stream` for streamed answers), every request signed with AWS Signature Version 4
//! (or sent with a Bedrock API key as a bearer token).
//!
//! # Mapping (as Pydantic AI's `BedrockConverseModel`)
//! - System prompts, then the instructions, are `system` text blocks; consecutive turns of one
//!   role are merged, and a conversation that starts with the assistant gets a leading user
//!   turn (`.`) for the model families that require one.
//! - User text, images, documents and videos are content blocks (files inline as base64, or as
//!   an `s3Location` for `s3://` URLs; other URLs are downloaded and sent inline).
//! - Tool calls are `toolUse {toolUseId, name, input}` blocks; tool returns, retries, denials
//!   and failures are `toolResult {toolUseId, content: [{text} | {json}], status}` blocks
//!   (`status: "error"` for anything but a success).
//! - Thinking with a signature from Bedrock goes back as `reasoningContent` for the families
//!   that accept it (Anthropic, DeepSeek); other thinking is not sent.
//! - Tools are `toolConfig.tools[].toolSpec {name, description, inputSchema: {json}}`;
//!   `toolChoice` is `auto`, `any` (a call is required) or `tool` (one named tool required),
//!   for the families that take it (Anthropic, Amazon Nova...); a restriction to several tools
//!   filters the list. Converse has no `none`: the tools are left out (kept, without a
//!   `toolChoice`, once the history has tool blocks, which Converse refuses without them).
//! - `inferenceConfig`: `maxTokens`, `temperature`, `topP`; `stopSequences` and anything else
//!   of the request (`additionalModelRequestFields`, `guardrailConfig`...) through
//!   [`ModelSettings::extra`](crate::model::ModelSettings::extra), merged into the body.
//! - Usage: `inputTokens` plus the cache reads and writes are the input tokens;
//!   `cacheReadInputTokens` and `cacheWriteInputTokens` are also counted on their own.
//!   `stopReason` becomes the finish reason; the response id is the `x-amzn-requestid` header
//!   when the server sends it.

mod eventstream;
mod request;
mod sign;
mod stream;

use std::sync::Arc;

use reqwest::header::HeaderMap;
use serde_json::{Map, Value, json};

use crate::error::UserError;
use crate::messages::{ModelMessage, ModelResponse, ModelResponsePart, TextPart, ThinkingPart, ToolCallPart};
use crate::model::{Model, ModelError, ModelRequestParameters, ModelSettings, ModelStream, StreamingModel};
use crate::providers::connection::{ConnectionOptions, DEFAULT_TIMEOUT, connection_builder_methods};
use crate::providers::http::{HttpTransport, header, join_url, settings_timeout};
use crate::providers::wire::{self, Shape, put};
use crate::usage::RequestUsage;

pub use sign::AwsCredentials;

/// A model served by AWS Bedrock's Converse API.
///
/// Credentials come from the builder ([`BedrockModelBuilder::credentials`] for SigV4 signing,
/// or [`BedrockModelBuilder::api_key`] for a Bedrock API key) or, with
/// [`from_env`](BedrockModelBuilder::from_env), from `AWS_BEARER_TOKEN_BEDROCK`, else
/// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`; the region from
/// [`region`](BedrockModelBuilder::region) or `AWS_REGION` (`AWS_DEFAULT_REGION`).
///
/// ```
/// use toolsmith::providers::{AwsCredentials, BedrockModel};
///
/// let model = BedrockModel::builder("anthropic.claude-3-5-sonnet-20240620-v1:0")
///     .region("us-east-1")
///     .credentials(AwsCredentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"))
///     .build()?;
/// assert_eq!(model.base_url(), "https://bedrock-runtime.us-east-1.amazonaws.com");
/// # Ok::<(), toolsmith::UserError>(())
/// ```
#[derive(Debug, Clone)]
pub struct BedrockModel {
    name: String,
    base_url: String,
    http: Arc<HttpTransport>,
}

/// Builds a [`BedrockModel`].
///
/// ```
/// use toolsmith::providers::BedrockModel;
///
/// // A Bedrock API key, sent as a bearer token; a local server for tests.
/// let model = BedrockModel::builder("amazon.nova-pro-v1:0")
///     .region("eu-west-3")
///     .api_key("bedrock-api-key")
///     .base_url("http://127.0.0.1:9")
///     .build()?;
/// assert_eq!(model.base_url(), "http://127.0.0.1:9");
/// # Ok::<(), toolsmith::UserError>(())
/// ```
#[derive(Clone)]
pub struct BedrockModelBuilder {
    model: String,
    opts: ConnectionOptions,
    region: Option<String>,
    credentials: Option<AwsCredentials>,
    from_env: bool,
}

impl std::fmt::Debug for BedrockModelBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BedrockModelBuilder")
            .field("model", &self.model)
            .field("region", &self.region)
            .finish_non_exhaustive()
    }
}

/// An environment variable, when set and not blank.
fn env(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.trim().is_empty())
}

impl BedrockModelBuilder {
    connection_builder_methods!();

    /// Sets the AWS region (instead of `AWS_REGION` / `AWS_DEFAULT_REGION`): the default base URL
    /// is `https://bedrock-runtime.{region}.amazonaws.com`, and SigV4 signatures are scoped to it.
    pub fn region(mut self, region: impl Into<String>) -> Self {
        self.region = Some(region.into());
        self
    }

    /// Signs requests with these AWS credentials (instead of the environment's). They take
    /// precedence over an API key.
    pub fn credentials(mut self, credentials: AwsCredentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// Reads what the builder misses from the environment: the region from `AWS_REGION` (or
    /// `AWS_DEFAULT_REGION`), the base URL from `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`, and the
    /// credentials from `AWS_BEARER_TOKEN_BEDROCK` (a Bedrock API key), else
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`.
    pub fn from_env(mut self) -> Self {
        self.from_env = true;
        self
    }

    /// Builds the model. Errors when the region or the credentials are missing, or when the
    /// base URL is not an `http(s)` URL with a host.
    pub fn build(mut self) -> Result<BedrockModel, UserError> {
        if self.from_env {
            if self.region.is_none() {
                self.region = env("AWS_REGION").or_else(|| env("AWS_DEFAULT_REGION"));
            }
            if self.opts.base_url.is_none() {
                self.opts.base_url = env("AWS_ENDPOINT_URL_BEDROCK_RUNTIME");
            }
            if self.credentials.is_none() && self.opts.api_key.is_none() {
                self.opts.api_key = env("AWS_BEARER_TOKEN_BEDROCK");
                if self.opts.api_key.is_none() {
                    self.credentials = AwsCredentials::from_env();
                }
            }
        }
        let region = self.region.clone().map(|r| r.trim().to_string()).filter(|r| !r.is_empty());
        let base_url = match (&self.opts.base_url, &region) {
            (Some(url), _) => url.trim().trim_end_matches('/').to_string(),
            (None, Some(region)) => format!("https://bedrock-runtime.{region}.amazonaws.com"),
            (None, None) => return Err(missing_region()),
        };
        let parsed = reqwest::Url::parse(&base_url).map_err(|e| {
            UserError::new(format!("the Bedrock base URL `{base_url}` is not a URL ({e}): pass one like `https://bedrock-runtime.us-east-1.amazonaws.com` to `.base_url(...)`"))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(UserError::new(format!(
                "the Bedrock base URL `{base_url}` needs an http(s) scheme and a host, e.g. `https://bedrock-runtime.us-east-1.amazonaws.com`"
            )));
        }
        let mut auth = HeaderMap::new();
        let signer = match (self.credentials.take(), &self.opts.api_key) {
            (Some(credentials), _) => {
                let region = region.ok_or_else(missing_region)?;
                credentials.check()?;
                self.opts.secrets.extend(credentials.secrets());
                // The key of the connection options is a bearer token: signed requests do not send it.
                self.opts.api_key = None;
                Some(sign::SigV4Signer::new(credentials, region))
            }
            (None, Some(token)) => {
                header(&mut auth, "authorization", &format!("Bearer {}", token.trim()), true)?;
                None
            }
            (None, None) => {
                return Err(UserError::new(
                    "no AWS credentials for Bedrock: export AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary credentials) with `BedrockModel::builder(..).from_env()`, or pass `.credentials(AwsCredentials::new(..))` or `.api_key(..)`",
                ));
            }
        };
        let mut http = self.opts.transport("bedrock", &self.model, auth, DEFAULT_TIMEOUT)?;
        // The secret key and session token are among the redactor's secrets; each signature is
        // redacted from the answer to the request it signed.
        http.signer = signer.map(|s| Arc::new(s) as Arc<dyn crate::providers::http::RequestSigner>);
        Ok(BedrockModel { name: self.model, base_url, http: Arc::new(http) })
    }
}

fn missing_region() -> UserError {
    UserError::new(
        "the AWS region for Bedrock is not set: export AWS_REGION (with `BedrockModel::builder(..).from_env()`) or pass `.region(\"us-east-1\")`",
    )
}

impl BedrockModel {
    /// A builder for the model (or inference profile) `model_id`, e.g.
    /// `anthropic.claude-3-5-sonnet-20240620-v1:0`, `us.amazon.nova-pro-v1:0` or an ARN.
    pub fn builder(model_id: impl Into<String>) -> BedrockModelBuilder {
        BedrockModelBuilder {
            model: model_id.into(),
            opts: ConnectionOptions::default(),
            region: None,
            credentials: None,
            from_env: false,
        }
    }

    /// The model with its region, credentials and base URL from the environment (see
    /// [`BedrockModelBuilder::from_env`]).
    pub fn from_env(model_id: impl Into<String>) -> Result<Self, UserError> {
        Self::builder(model_id).from_env().build()
    }

    /// The base URL requests go to.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The URL of `/model/{modelId}/{action}`, the model id percent-encoded (`:` and `/` of
    /// versioned ids and ARNs included).
    fn url(&self, action: &str) -> String {
        join_url(&self.base_url, &format!("model/{}/{action}", encode_path_segment(&self.name)))
    }

    /// The Converse request body for these messages and parameters (what is POSTed, to
    /// `/converse` and `/converse-stream` alike). Files behind `http(s)` URLs are downloaded.
    pub async fn request_body(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<Value, ModelError> {
        let timeout = settings_timeout(settings).unwrap_or(self.http.timeout);
        request::body(&self.name, messages, settings, params, &self.http.client, timeout).await
    }

    /// Reads a Converse response body. An answer without the documented shape (no `output`, a
    /// field of another type...) is an `UnexpectedModelBehavior` error saying which field is
    /// wrong.
    pub fn parse_response(&self, v: &Value) -> Result<ModelResponse, ModelError> {
        let shape = Shape::answer("bedrock", v, &self.http.redactor);
        shape.object(v, "the answer")?;
        let output = shape.object_field(v, "output", "output")?;
        let mut parts = Vec::new();
        if let Some(message) = shape.opt_object(output, "message", "output.message")? {
            let content = shape.array(message, "content", "output.message.content")?;
            for (n, block) in content.iter().enumerate() {
                let path = format!("output.message.content[{n}]");
                shape.object(block, &path)?;
                if let Some(reasoning) =
                    shape.opt_object(block, "reasoningContent", &format!("{path}.reasoningContent"))?
                {
                    parts.extend(thinking_part(&shape, reasoning, &format!("{path}.reasoningContent"))?);
                }
                if let Some(text) = shape.opt_str(block, "text", &format!("{path}.text"))? {
                    if !text.is_empty() {
                        parts.push(ModelResponsePart::Text(TextPart::new(text)));
                    }
                } else if let Some(tool_use) = shape.opt_object(block, "toolUse", &format!("{path}.toolUse"))? {
                    let path = format!("{path}.toolUse");
                    let id = shape.str(tool_use, "toolUseId", &format!("{path}.toolUseId"))?;
                    let name = shape.str(tool_use, "name", &format!("{path}.name"))?;
                    let input = tool_use.get("input").cloned().filter(|i| !i.is_null()).unwrap_or_else(|| json!({}));
                    let mut call = ToolCallPart::new(name, input, id);
                    call.provider_name = Some("bedrock".into());
                    parts.push(ModelResponsePart::ToolCall(call));
                }
            }
        }
        let usage = match shape.opt_object(v, "usage", "usage")? {
            Some(u) => usage(u),
            None => RequestUsage::default(),
        };
        let stop = shape.opt_str(v, "stopReason", "stopReason")?;
        let mut response = ModelResponse::new(parts);
        fill(&mut response, &self.name, &self.base_url, usage, stop);
        Ok(response)
    }
}

/// A `reasoningContent` block as a thinking part: `reasoningText {text, signature}`, or
/// `redactedContent` (kept as the signature of an empty part, as Pydantic AI does).
fn thinking_part(shape: &Shape<'_>, reasoning: &Value, path: &str) -> Result<Option<ModelResponsePart>, ModelError> {
    if let Some(redacted) = shape.opt_str(reasoning, "redactedContent", &format!("{path}.redactedContent"))? {
        let mut t = ThinkingPart::new("");
        t.id = Some("redacted_content".into());
        t.signature = Some(redacted.to_string());
        t.provider_name = Some("bedrock".into());
        return Ok(Some(ModelResponsePart::Thinking(t)));
    }
    let Some(text) = shape.opt_object(reasoning, "reasoningText", &format!("{path}.reasoningText"))? else {
        return Ok(None);
    };
    let mut t =
        ThinkingPart::new(shape.opt_str(text, "text", &format!("{path}.reasoningText.text"))?.unwrap_or_default());
    t.signature = shape.opt_str(text, "signature", &format!("{path}.reasoningText.signature"))?.map(str::to_string);
    if t.signature.is_some() {
        t.provider_name = Some("bedrock".into());
    }
    Ok(Some(ModelResponsePart::Thinking(t)))
}

/// The request id AWS answers with (`x-amzn-requestid`).
fn request_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get("x-amzn-requestid")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| v.chars().take(200).collect())
}

/// Percent-encodes a path segment: everything but the unreserved characters of RFC 3986.
pub(super) fn encode_path_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Converse's `usage`: the input tokens include the cache reads and writes.
pub(super) fn usage(u: &Value) -> RequestUsage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let cache_read = n("cacheReadInputTokens");
    let cache_write = n("cacheWriteInputTokens");
    let mut usage =
        RequestUsage::new(n("inputTokens").saturating_add(cache_read).saturating_add(cache_write), n("outputTokens"));
    usage.cache_read_tokens = cache_read;
    usage.cache_write_tokens = cache_write;
    usage
}

/// Converse's `stopReason` as a finish reason.
pub(super) fn finish_reason(raw: &str) -> &'static str {
    match raw {
        "end_turn" | "stop_sequence" => "stop",
        "max_tokens" | "model_context_window_exceeded" => "length",
        "tool_use" => "tool_call",
        "content_filtered" | "guardrail_intervened" => "content_filter",
        _ => "error",
    }
}

pub(super) fn fill(response: &mut ModelResponse, name: &str, base_url: &str, usage: RequestUsage, stop: Option<&str>) {
    response.usage = usage;
    response.model_name = Some(name.into());
    response.provider_name = Some("bedrock".into());
    response.provider_url = Some(base_url.into());
    response.finish_reason = stop.map(|s| finish_reason(s).into());
    let mut details = Map::new();
    put(&mut details, "finish_reason", stop);
    if !details.is_empty() {
        response.provider_details = Some(Box::new(Value::Object(details)));
    }
}

impl Model for BedrockModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn system(&self) -> &str {
        "bedrock"
    }

    async fn request(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelResponse, ModelError> {
        // Refused before anything walks the history (the files moved, the media inlined) or the schemas.
        wire::check_depth(messages, params)?;
        let body = self.request_body(messages, settings, params).await?;
        self.http
            .request_json_with_headers(&self.url("converse"), &body, settings_timeout(settings), |v, headers| {
                let mut response = self.parse_response(v)?;
                response.provider_response_id = request_id(headers).map(Into::into);
                Ok(response)
            })
            .await
    }
}

impl StreamingModel for BedrockModel {
    async fn request_stream(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelStream, ModelError> {
        // Refused before anything walks the history (the files moved, the media inlined) or the schemas.
        wire::check_depth(messages, params)?;
        let body = self.request_body(messages, settings, params).await?;
        let processor = |headers: &HeaderMap| {
            stream::BedrockStream::new(
                self.name.clone(),
                self.base_url.clone(),
                request_id(headers),
                self.http.redactor.clone(),
            )
        };
        let decoder = eventstream::EventStreamDecoder::new(self.http.max_event_size);
        self.http.stream_with(&self.url("converse-stream"), &body, settings_timeout(settings), decoder, processor).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_are_one_encoded_segment() {
        assert_eq!(
            encode_path_segment("anthropic.claude-3-5-sonnet-20240620-v1:0"),
            "anthropic.claude-3-5-sonnet-20240620-v1%3A0"
        );
        assert_eq!(
            encode_path_segment("arn:aws:bedrock:us-east-1:123:inference-profile/us.x"),
            "arn%3Aaws%3Abedrock%3Aus-east-1%3A123%3Ainference-profile%2Fus.x"
        );
    }

    #[test]
    fn usage_counts_the_cache_in_the_input() {
        let u = usage(
            &json!({"inputTokens": 10, "outputTokens": 5, "cacheReadInputTokens": 3, "cacheWriteInputTokens": 2}),
        );
        assert_eq!((u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens), (15, 5, 3, 2));
        let u = usage(&json!({"inputTokens": u64::MAX, "cacheReadInputTokens": 1}));
        assert_eq!(u.input_tokens, u64::MAX);
    }

    #[test]
    fn stop_reasons_map_to_finish_reasons() {
        for (raw, reason) in [
            ("end_turn", "stop"),
            ("tool_use", "tool_call"),
            ("max_tokens", "length"),
            ("guardrail_intervened", "content_filter"),
            ("malformed_tool_use", "error"),
        ] {
            assert_eq!(finish_reason(raw), reason);
        }
    }

    #[test]
    fn a_missing_region_or_credentials_is_a_user_error() {
        let e = BedrockModel::builder("m").credentials(AwsCredentials::new("AKID", "secret")).build().unwrap_err();
        assert!(e.to_string().contains("AWS_REGION"), "{e}");
        let e = BedrockModel::builder("m").region("us-east-1").build().unwrap_err();
        assert!(e.to_string().contains("AWS_BEARER_TOKEN_BEDROCK"), "{e}");
        let e = BedrockModel::builder("m").region("us-east-1").api_key("k").base_url("not a url").build().unwrap_err();
        assert!(e.to_string().contains("not a URL"), "{e}");
    }
}
